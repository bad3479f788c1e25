"""Where an MCP approval holds: for the tool of the server it was given to, in the session
that gave it. A sub-agent (``delegate``) takes no "always" of its parent's, and two servers
listing a tool of the same name are two tools, each asked about and denied on its own."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any

import attrs
from mcp_support import ScriptedTransport

from rho_adapters.fakes import FakeClock, MemoryExecutor, ScriptedApprover, ScriptedModel
from rho_adapters.fakes import call as wire_call
from rho_adapters.fakes import text as text_turn
from rho_adapters.fakes import tools as tools_turn
from rho_adapters.mcp import McpToolSource
from rho_adapters.mcp.transport import Message, Transport
from rho_domain.agent import Agent
from rho_domain.approval import decide
from rho_domain.approval_asks import Denied
from rho_domain.config import AgentConfig
from rho_domain.loop.session import Session
from rho_domain.mcp_config import McpServerConfig
from rho_domain.messages import ToolCall, ToolResultMessage
from rho_domain.permissions import builtin_profile
from rho_domain.ports.approver import ApprovalAnswer
from rho_domain.run import RunStatus
from rho_domain.tools.base import DANGEROUS
from rho_domain.tools.delegate import DelegateTool
from rho_domain.tools.registry import ToolRegistry


def _source(
    servers: tuple[str, ...],
    said: list[str] | None = None,
    transports: list[ScriptedTransport] | None = None,
) -> McpToolSource:
    """Servers ``servers``, each listing ``export`` described as ``said[0]`` ("Export."),
    whose call says which server ran it; their transports added to ``transports``."""
    said = ["Export."] if said is None else said
    made = [] if transports is None else transports

    def connect(name: str, server: McpServerConfig, environ: Mapping[str, str]) -> Transport:
        def answer(request: Message) -> str:
            if request["method"] == "initialize":
                result: Message = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}}
            elif request["method"] == "tools/list":
                result = {"tools": [{"name": "export", "description": said[0]}]}
            else:
                result = {"content": [{"type": "text", "text": f"{name} ran"}]}
            return json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result})

        made.append(ScriptedTransport(answer))
        return made[-1]

    configured = dict.fromkeys(servers, McpServerConfig(command=("-",)))
    return McpToolSource(configured, environ={}, output_limit=2_000, connect=connect)


def _session(
    turns: list[Any],
    approver: ScriptedApprover | None,
    servers: tuple[str, ...],
    said: list[str] | None = None,
    transports: list[ScriptedTransport] | None = None,
) -> Session:
    return Session(
        Agent(
            config=AgentConfig(profile="developer"),
            profile=builtin_profile("developer"),
            registry=ToolRegistry([DelegateTool()]),
            system_prompt="test",
        ),
        model=ScriptedModel(turns),
        executor=MemoryExecutor(),
        clock=FakeClock(),
        approver=approver,
        tool_source=_source(servers, said, transports),
    )


def test_a_sub_agent_asks_about_a_tool_its_parent_approved_always() -> None:
    turns = [
        tools_turn(wire_call("mcp__a__export", id="c1")),  # the parent: "always"
        tools_turn(wire_call("delegate", {"instruction": "export again"}, id="d1")),
        tools_turn(wire_call("mcp__a__export", id="c2")),  # the child: asked
        tools_turn(wire_call("mcp__a__export", id="c3")),  # the child's own "always"
        text_turn("child done"),
        tools_turn(wire_call("mcp__a__export", id="c4")),  # the parent's "always"
        text_turn("parent done"),
    ]
    approver = ScriptedApprover([ApprovalAnswer(approved=True, always=True)] * 2)
    session = _session(turns, approver, ("a",))
    assert asyncio.run(session.run("go")).text == "parent done"
    assert [(r.session_id == session.id, r.call.id) for r in approver.requests] == [
        (True, "c1"),
        (False, "c2"),
    ]


def test_two_servers_tools_of_one_name_are_two_tools() -> None:
    # an "always" for a's export does not approve b's; b's, asked, runs on b
    turns = [
        tools_turn(wire_call("mcp__a__export", id="c1")),
        tools_turn(wire_call("mcp__b__export", id="c2")),
        tools_turn(wire_call("mcp__a__export", id="c3")),
        text_turn("done"),
    ]
    approver = ScriptedApprover([ApprovalAnswer(approved=True, always=True)] * 2)
    session = _session(turns, approver, ("a", "b"))
    asyncio.run(session.run("go"))
    assert [r.call.id for r in approver.requests] == ["c1", "c2"]
    results = [m for m in session.state.messages if isinstance(m, ToolResultMessage)]
    assert [r.content for r in results] == ["a ran", "b ran", "a ran"]
    denied = attrs.evolve(builtin_profile("developer"), denied_tools=frozenset({"mcp__a__export"}))
    verdicts = {
        name: isinstance(
            decide(denied, ToolCall(id="c", name=name, arguments="{}"), DANGEROUS), Denied
        )
        for name in ("mcp__a__export", "mcp__b__export")
    }
    assert verdicts == {"mcp__a__export": True, "mcp__b__export": False}


def _answered_through_parent(rewritten: bool) -> tuple[list[str], list[str]]:
    """A child's MCP call waits; the parent's answer is given (with its digest), the server
    having rewritten the tool meanwhile or not: how the run ended (status, calls waiting) and
    the parent's results."""
    turns = [
        tools_turn(wire_call("delegate", {"instruction": "export"}, id="d1")),
        tools_turn(wire_call("mcp__a__export", id="c1")),
        text_turn("child done"),
        text_turn("parent done"),
    ]
    said = ["Export."]
    transports: list[ScriptedTransport] = []
    session = _session(turns, None, ("a",), said, transports)

    async def main() -> list[str]:
        waiting = await session.run("go")
        assert waiting.status is RunStatus.AWAITING_APPROVAL
        if rewritten:  # the server describes the tool otherwise while the child waits
            said[0] = "Export anywhere."
            transports[0].deliver(
                '{"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}'
            )
        session.resolve_approval("d1", True, digest=waiting.pending[0].digest)
        ended = await session.run()
        return [ended.status.value, *(p.call.id for p in ended.pending)]

    outcome = asyncio.run(main())
    results = [m for m in session.state.messages if isinstance(m, ToolResultMessage)]
    return outcome, [r.content for r in results]


def test_a_sub_agents_mcp_call_that_waited_runs_once_answered_through_its_parent() -> None:
    # before: the parent's answer carried the digest of the child's call without the shape
    # of its MCP tool, which the child's own digest covers: 'the sub-agent could not
    # continue: tool call 'c1' changed since it was shown', and it never ran
    assert _answered_through_parent(rewritten=False) == (["completed"], ["child done"])
    # the child compares the tool with what it asked about: rewritten, it asks again
    assert _answered_through_parent(rewritten=True) == (["awaiting_approval", "d1"], [])
