"""Helpers for store tests: a session builder over any store, and small tools."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rho_adapters.fakes import FakeClock, MemoryExecutor, ScriptedModel
from rho_domain.agent import Agent
from rho_domain.config import AgentConfig
from rho_domain.loop.session import Session
from rho_domain.permissions import builtin_profile
from rho_domain.ports.model import ChatModel
from rho_domain.ports.signals import SignalSource
from rho_domain.ports.store import SessionStore
from rho_domain.state import State
from rho_domain.tools.base import READ_ONLY, ToolContext, ToolHandler, ToolOutput, ToolPolicy
from rho_domain.tools.registry import ToolRegistry


class EchoTool(ToolHandler):
    name = "echo"
    description = "Echo the text back."
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    }

    def policy_for(self, arguments: Mapping[str, Any]) -> ToolPolicy:
        return READ_ONLY

    async def handle(self, arguments: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
        return ToolOutput(content=str(arguments["text"]))


class BlockTool(ToolHandler):
    """Touches ``marker`` (when given) then waits forever: a tool to kill a process in."""

    name = "block"
    description = "Wait."
    parameters: Mapping[str, Any] = {"type": "object", "properties": {}}

    def __init__(self, marker: Path | None = None) -> None:
        self.marker = marker

    def policy_for(self, arguments: Mapping[str, Any]) -> ToolPolicy:
        return READ_ONLY

    async def handle(self, arguments: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
        if self.marker is not None:
            self.marker.touch()
        await asyncio.Event().wait()
        return ToolOutput(content="never")


def build_session(
    turns: Sequence[Any],
    *,
    store: SessionStore | None,
    signals: SignalSource | None = None,
    tools: Sequence[ToolHandler] = (),
    config: AgentConfig | None = None,
    session_id: str | None = None,
    state: State | None = None,
    created: bool = False,
    clock: Any = None,
    model: ChatModel | None = None,
) -> Session:
    config = config or AgentConfig(profile="eval", model="scripted")
    profile = builtin_profile(config.profile) if isinstance(config.profile, str) else config.profile
    agent = Agent(
        config=config,
        profile=profile,
        registry=ToolRegistry(tools or [EchoTool()]),
        system_prompt="You are a test agent.",
    )
    return Session(
        agent,
        model=model or ScriptedModel(turns),
        executor=MemoryExecutor(),
        clock=clock or FakeClock(),
        store=store,
        signals=signals,
        session_id=session_id,
        state=state,
        created=created,
    )
