"""Who decides which MCP servers start: the profile (a read-only or bash-only one starts only
the servers it names), never a stored session (its config and inline profile are data)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs
import pytest
from mcp_support import logged, raw, reference, wait_gone

from rho_adapters.fakes import ScriptedModel, text
from rho_adapters.mcp import McpToolSource
from rho_adapters.store import FileSessionStore
from rho_domain.agent import Agent as DomainAgent
from rho_domain.config import AgentConfig as DomainConfig
from rho_domain.errors import ConfigError
from rho_domain.mcp_config import McpServerConfig, servers_to_start
from rho_domain.mcp_names import tool_name
from rho_domain.permissions import developer_profile, eval_profile, readonly_profile
from rho_domain.profile_grants import excess
from rho_domain.tools.base import READ_ONLY, ToolContext, ToolHandler, ToolOutput, ToolPolicy
from rho_domain.tools.registry import ToolRegistry
from rho_domain.tools.source import SourcedTools
from rho_entry import Agent, AgentConfig, Session

SERVER = McpServerConfig(command=("server",))
REFERENCE = McpServerConfig()


def test_which_servers_a_profile_starts() -> None:
    configured = {"a": SERVER, "b": SERVER}
    for profile in (developer_profile(), eval_profile()):
        only = profile.starts_named_mcp_servers_only
        assert set(servers_to_start(configured, {}, only_named=only)) == {"a", "b"}
    bash_only = attrs.evolve(eval_profile(), bash_only=True)
    for profile in (readonly_profile(), bash_only):
        only = profile.starts_named_mcp_servers_only
        assert servers_to_start(configured, {}, only_named=only) == {}
        assert set(servers_to_start(configured, {"b": REFERENCE}, only_named=only)) == {"b"}
    own = McpServerConfig(url="https://mcp.example/mcp")
    started = servers_to_start(configured, {"c": own}, only_named=True)
    assert started == {"c": own}  # a profile's own definition starts under it
    with pytest.raises(ConfigError, match="names MCP server 'zz', which the agent config"):
        servers_to_start(configured, {"zz": REFERENCE}, only_named=True)


def test_config_values_are_checked_when_built() -> None:
    with pytest.raises(ConfigError, match="server name 'a__b' must be"):
        AgentConfig(mcp_servers={"a__b": SERVER})
    with pytest.raises(ConfigError, match=r"mcp_servers.x: give command .* or url"):
        AgentConfig(mcp_servers={"x": REFERENCE})
    with pytest.raises(ConfigError, match="not both"):
        AgentConfig(mcp_servers={"x": McpServerConfig(command=("a",), url="http://h/mcp")})
    with pytest.raises(ConfigError, match="call_timeout must be a number of seconds"):
        McpServerConfig(command=("a",), call_timeout=0)
    assert tool_name("t", "a.b/c d") == "mcp__t__a_b_c_d"
    assert len(tool_name("t", "x" * 100)) == 64


def test_a_profile_with_a_server_grants_more_than_one_without() -> None:
    with_server = attrs.evolve(readonly_profile(), mcp_servers={"x": SERVER})
    assert excess(with_server, readonly_profile()) == ("MCP servers: x",)
    assert excess(with_server, with_server) == ()
    other = attrs.evolve(readonly_profile(), mcp_servers={"x": McpServerConfig(command=("y",))})
    assert excess(with_server, other) == ("MCP servers: x",)  # the same name, another program


async def test_a_resumed_session_does_not_start_its_stored_servers(tmp_path: Path) -> None:
    log = tmp_path / "raw.log"
    store = FileSessionStore(tmp_path / "sessions")
    config = AgentConfig(
        model="m", profile="eval", working_dir=str(tmp_path), mcp_servers={"raw": raw(log)}
    )
    async with Session(Agent(config), store=store, model=ScriptedModel([text("one")])) as first:
        await first.run("hi")
    assert logged(log)  # it ran for the session that configured it
    log.unlink()
    resumed = await Session.resume(
        first.id, store=store, model=ScriptedModel([text("two")]), overrides={"profile": "eval"}
    )
    async with resumed:
        result = await resumed.run("again")
    assert result.text == "two"
    assert not log.exists()  # the stored command line started nothing
    assert any("was stored with MCP servers (raw)" in n for n in resumed.resume_notices)


async def test_a_stored_profile_defining_a_server_is_refused(tmp_path: Path) -> None:
    log = tmp_path / "raw.log"
    store = FileSessionStore(tmp_path / "sessions")
    profile = attrs.evolve(readonly_profile(), mcp_servers={"raw": raw(log)})
    config = AgentConfig(model="m", profile=profile, working_dir=str(tmp_path))
    async with Session(Agent(config), store=store, model=ScriptedModel([text("one")])) as first:
        await first.run("hi")
    log.unlink()
    with pytest.raises(ConfigError, match="MCP servers: raw"):
        await Session.resume(first.id, store=store, model=ScriptedModel([text("two")]))
    assert not log.exists()


async def test_a_run_cancelled_while_servers_start_starts_them_afresh() -> None:
    hanging = reference(env={"HANG_AT_START": "1"}, startup_timeout=30)
    tools = McpToolSource({"hang": hanging}, environ={"PATH": "/usr/bin:/bin"}, output_limit=100)
    starting = asyncio.ensure_future(tools.current())
    process = None
    for _ in range(200):
        client = tools.servers["hang"].client
        process = getattr(client.transport, "process", None) if client is not None else None
        if process is not None:
            break
        await asyncio.sleep(0.01)
    assert process is not None
    starting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await starting
    state = tools.servers["hang"]
    assert (state.state, state.client) == ("starting", None)  # nothing half-started is kept
    assert wait_gone(process.pid)  # and the program was stopped
    await tools.aclose()


class Named(ToolHandler):
    """A tool that does nothing, known by its name."""

    def __init__(self, name: str) -> None:
        self._name = name

    @property
    def name(self) -> str:
        return self._name

    @property
    def description(self) -> str:
        return f"{self._name} tool"

    @property
    def parameters(self) -> Mapping[str, Any]:
        return {"type": "object", "properties": {}}

    def policy_for(self, arguments: Mapping[str, Any]) -> ToolPolicy:
        return READ_ONLY

    async def handle(self, arguments: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
        return ToolOutput(content=self._name)


def test_a_sourced_tool_never_replaces_one_of_the_agents_own() -> None:
    own, clash, fresh = Named("mcp__x__t"), Named("mcp__x__t"), Named("mcp__x__u")
    agent = DomainAgent(
        config=DomainConfig(),
        profile=readonly_profile(),
        registry=ToolRegistry([own]),
        system_prompt="base",
    )
    first = agent.with_sourced(SourcedTools(handlers=(clash, fresh), instructions=("hello",)))
    assert first.registry.get("mcp__x__t") is own
    assert first.registry.get("mcp__x__u") is fresh
    assert first.full_system_prompt == "base\n\nhello"
    second = first.with_sourced(SourcedTools())
    assert second.registry.get("mcp__x__t") is own  # the own tool stays when the list empties
    assert "mcp__x__u" not in second.registry
    assert second.full_system_prompt == "base"


async def test_a_replay_answers_mcp_calls_from_the_trace_and_starts_no_server(
    tmp_path: Path,
) -> None:
    from rho_adapters.fakes import ScriptedApprover, call, tools
    from rho_entry.replay import replay_async

    log = tmp_path / "raw.log"
    store = FileSessionStore(tmp_path / "sessions")
    ops = attrs.evolve(readonly_profile(), name="ops", mcp_servers={"raw": REFERENCE})
    config = AgentConfig(
        model="m",
        profile=ops,
        working_dir=str(tmp_path),
        mcp_servers={"raw": raw(log, read_only_tools=("noise",))},
    )
    model = ScriptedModel(
        [
            tools(call("mcp__raw__noise", {}, id="c1")),  # read-only: runs without asking
            tools(call("mcp__raw__rich", {}, id="c2")),  # dangerous: approved
            text("done"),
        ]
    )
    approver = ScriptedApprover(default=True)
    async with Session(Agent(config), store=store, model=model, approver=approver) as first:
        await first.run("go")
    assert len(approver.requests) == 1
    log.unlink()
    report = await replay_async(tmp_path / "sessions" / first.id)
    report.check()  # the same calls, decisions and results
    assert not log.exists()  # the recorded command line started nothing
    # a trace an older version wrote, its questions without the tool's shape: replayed alike
    trace = tmp_path / "sessions" / first.id / "trace.jsonl"
    lines = [json.loads(line) for line in trace.read_text().splitlines()]
    assert sum(line.pop("shown", "") != "" for line in lines) == 1
    trace.write_text("".join(json.dumps(line) + "\n" for line in lines))
    (await replay_async(trace.parent)).check()
