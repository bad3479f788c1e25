"""The wall-time budget through the library, on the real OpenAI-compatible adapter and the
system clock, against the loopback server (issue 29, item 7): a model call that answers in
14 s is stopped at a 1 s limit, and so is a read that would block for as long."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from rho_adapters.fakes.loopback import LoopbackServer
from rho_adapters.fakes.wire import call, stall, text_reply, tool_reply
from rho_domain import events as ev
from rho_domain.config import Budget
from rho_domain.messages import ToolResultMessage
from rho_domain.not_run import OUT_OF_TIME
from rho_domain.run import RunStatus
from rho_domain.tools.base import READ_ONLY, ToolContext, ToolHandler, ToolOutput, ToolPolicy
from rho_entry import Agent, AgentConfig, Session


def _run_seconds(seen: list[ev.Event]) -> float:
    """The run's length by the times it recorded, the limit's own clock: the test's watch
    also counts opening and closing the session, which a load of 12 stretches to seconds."""
    (start,) = [e for e in seen if isinstance(e, ev.RunStarted)]
    (end,) = [e for e in seen if isinstance(e, ev.RunEnded)]
    return end.at - start.at


def _config(server: LoopbackServer, tmp_path: Path) -> AgentConfig:
    return AgentConfig(
        model="fake-model",
        base_url=server.base_url,
        working_dir=str(tmp_path),
        budget=Budget(max_wall_seconds=1),  # fires in each test; the call starts well before it
    )


async def test_a_model_call_is_stopped_at_the_run_deadline(tmp_path: Path) -> None:
    late = text_reply("a slow and thoughtful answer", faults=(stall(after=2, seconds=14),))
    with LoopbackServer([late]) as server:
        seen: list[ev.Event] = []
        async with Session(Agent(_config(server, tmp_path)), on_event=seen.append) as session:
            result = await asyncio.wait_for(session.run("why?"), 30)  # 30 s: a hang
    assert result.status is RunStatus.BUDGET_EXCEEDED
    assert 0.9 < _run_seconds(seen) < 14  # the 1 s limit decided, not the 14 s answer
    stopped = [e for e in seen if isinstance(e, ev.Interrupted)]
    assert [e.detail for e in stopped] == ["during model response: out of time"]


class _Waits(ToolHandler):
    """A read-only tool that takes 14 s (a slow network share, say)."""

    name = "slow_read"
    description = "Read slowly."
    parameters: Mapping[str, Any] = {"type": "object", "properties": {}}

    def __init__(self) -> None:
        self.cancelled = False

    def policy_for(self, arguments: Mapping[str, Any]) -> ToolPolicy:
        return READ_ONLY

    async def handle(self, arguments: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
        try:
            await asyncio.sleep(14)
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        return ToolOutput(content="finally")


@pytest.mark.parametrize("calls", [1, 2])  # alone, or a batch of reads run in parallel
async def test_a_tool_call_is_stopped_at_the_run_deadline(tmp_path: Path, calls: int) -> None:
    batch = [call("slow_read", {}, f"c{n}") for n in range(1, calls + 1)]
    replies = [tool_reply(*batch), text_reply("never asked")]
    tool = _Waits()
    with LoopbackServer(replies) as server:
        seen: list[ev.Event] = []
        agent = Agent(_config(server, tmp_path), tools=[tool])
        async with Session(agent, on_event=seen.append) as session:
            result = await asyncio.wait_for(session.run("read it"), 30)  # 30 s: a hang
        asked = len(server.requests)
    assert result.status is RunStatus.BUDGET_EXCEEDED
    assert 0.9 < _run_seconds(seen) < 14  # the 1 s limit decided, not the 14 s read
    assert tool.cancelled
    assert asked == 1
    answered = [m for m in session.state.messages if isinstance(m, ToolResultMessage)]
    assert [(m.call_id, m.content, m.is_error) for m in answered] == [
        (c.id, OUT_OF_TIME, True) for c in batch
    ]
    assert session.state.unanswered_calls() == ()
