"""Test tools and a session builder for domain tests (fakes only, the real loop)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from rho_adapters.fakes import (
    FakeClock,
    InlineLineSearcher,
    MemoryExecutor,
    MemorySessionStore,
    ScriptedApprover,
    ScriptedModel,
    call,
    text,
    tools,
)
from rho_domain.agent import Agent
from rho_domain.config import AgentConfig
from rho_domain.hooks import Hooks
from rho_domain.loop.session import Session
from rho_domain.permissions import FileWriteMode, PermissionProfile, builtin_profile
from rho_domain.ports.approver import ApprovalAnswer, Approver
from rho_domain.ports.signals import SignalSource
from rho_domain.tools.base import (
    DANGEROUS,
    READ_ONLY,
    ToolContext,
    ToolHandler,
    ToolOutput,
    ToolPolicy,
)
from rho_domain.tools.registry import ToolRegistry


class EchoTool(ToolHandler):
    """Echoes its text; read-only."""

    name = "echo"
    description = "Echo the text back."
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "text": {"type": "string"},
            "times": {"type": "integer", "minimum": 1},
            "loud": {"type": "boolean"},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["text"],
        "additionalProperties": False,
    }

    def __init__(self) -> None:
        self.calls: list[Mapping[str, Any]] = []

    def policy_for(self, arguments: Mapping[str, Any]) -> ToolPolicy:
        return READ_ONLY

    async def handle(self, arguments: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
        self.calls.append(dict(arguments))
        out = arguments["text"] * arguments.get("times", 1)
        return ToolOutput(content=out.upper() if arguments.get("loud") else out)


class WriteNoteTool(ToolHandler):
    """Writes a file through the executor; dangerous."""

    name = "write"
    description = "Write a note."
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
        "required": ["path", "content"],
    }

    def policy_for(self, arguments: Mapping[str, Any]) -> ToolPolicy:
        return DANGEROUS

    async def handle(self, arguments: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
        await ctx.executor.write(arguments["path"], arguments["content"].encode(), overwrite=True)
        return ToolOutput(content=f"wrote {arguments['path']}")


class SlowTool(ToolHandler):
    """Sleeps forever until cancelled; records cancellation."""

    name = "slow"
    description = "Wait."
    parameters: Mapping[str, Any] = {"type": "object", "properties": {}}

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.cancelled = False

    def policy_for(self, arguments: Mapping[str, Any]) -> ToolPolicy:
        return READ_ONLY

    async def handle(self, arguments: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
        self.started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        return ToolOutput(content="never")


class BrokenTool(ToolHandler):
    name = "broken"
    description = "Always fails."
    parameters: Mapping[str, Any] = {"type": "object", "properties": {}}

    def policy_for(self, arguments: Mapping[str, Any]) -> ToolPolicy:
        return READ_ONLY

    async def handle(self, arguments: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
        raise ZeroDivisionError("division by zero")


def make_session(
    turns: Sequence[Any],
    *,
    tools: Sequence[ToolHandler] = (),
    profile: PermissionProfile | str = "eval",
    config: AgentConfig | None = None,
    approver: Approver | None = None,
    signals: SignalSource | None = None,
    store: MemorySessionStore | None = None,
    executor: MemoryExecutor | None = None,
    clock: FakeClock | None = None,
    output_limit: int = 20_000,
    hooks: Hooks | None = None,
    labels: Mapping[str, str] | None = None,
    **config_fields: Any,
) -> Session:
    resolved = builtin_profile(profile) if isinstance(profile, str) else profile
    config = config or AgentConfig(profile=resolved, **config_fields)
    agent = Agent(
        config=config,
        profile=resolved,
        registry=ToolRegistry(tools or [EchoTool()], output_limit=output_limit),
        system_prompt="You are a test agent.",
        hooks=hooks if hooks is not None else Hooks(),
    )
    return Session(
        agent,
        model=ScriptedModel(turns),
        executor=executor or MemoryExecutor(),
        clock=clock or FakeClock(),
        store=store,
        signals=signals,
        approver=approver,
        line_searcher=InlineLineSearcher(),  # the output schemas' patterns are the tests'
        labels=labels,
    )


def session_after_always(
    command: str, *, patterns: bool = True
) -> tuple[ScriptedApprover, Session]:
    """A developer session (unrestricted bash, full writes) whose first bash call is answered
    "always", then ``command`` (call id ``second``; a further question is answered no).
    Without ``patterns`` the profile has no text patterns, so only the parsed destructive
    check (``shell.destructive``) can ask."""
    from rho_domain.tools.bash import BashHandler  # the bash tests' only

    developer = builtin_profile("developer")
    if not patterns:
        developer = attrs.evolve(developer, dangerous_patterns=())
    approver = ScriptedApprover([ApprovalAnswer(approved=True, always=True), False])
    session = make_session(
        [
            tools(call("bash", {"command": "touch first"})),
            tools(call("bash", {"command": command}, id="second")),
            text("done"),
        ],
        tools=[BashHandler(restricted=False, timeout=30)],
        profile=developer,
        approver=approver,
        executor=MemoryExecutor(allow_shell=True, file_write=FileWriteMode.FULL),
    )
    return approver, session
