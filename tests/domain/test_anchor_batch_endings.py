"""Anchor item 10 (the reference left a stopped batch's calls without results), re-tried on
what the results say. Every call of a batch gets a result when the batch stops; the call
that was running is answered "its effects are unknown", and the calls after it, which never
started, now say they were not run (before, a deadline told the model each of them had been
stopped "while this ran", so a call that did nothing looked like one to check before
repeating)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from domain_support import EchoTool, SlowTool, make_session

from rho_adapters.fakes import call, text, tools
from rho_domain import events as ev
from rho_domain.config import Budget
from rho_domain.loop.session import Session
from rho_domain.messages import ToolResultMessage
from rho_domain.not_run import (
    CANCELLED_BEFORE,
    CANCELLED_RESULT,
    OUT_OF_TIME,
    OUT_OF_TIME_BEFORE,
)
from rho_domain.run import RunStatus
from rho_domain.tools.base import DANGEROUS, ToolPolicy


class SlowWrite(SlowTool):
    """Waits until stopped; dangerous, so its batch runs one call at a time."""

    name = "slow_write"

    def policy_for(self, arguments: Mapping[str, Any]) -> ToolPolicy:
        return DANGEROUS


def _results(session: Session) -> dict[str, str]:
    messages = session.state.messages
    return {m.call_id: m.content for m in messages if isinstance(m, ToolResultMessage)}


def _batch(slow: SlowWrite, echo: EchoTool, **config: Any) -> Session:
    batch = tools(call("slow_write", {}, id="s"), call("echo", {"text": "x"}, id="e"))
    return make_session([batch, text("never")], tools=[slow, echo], **config)


async def test_a_cancel_mid_batch_says_the_later_calls_never_ran() -> None:
    slow, echo = SlowWrite(), EchoTool()
    session = _batch(slow, echo)
    task = asyncio.create_task(session.run("go"))
    await slow.started.wait()
    session.cancel()
    result = await task
    assert result.status is RunStatus.CANCELLED
    assert slow.cancelled
    assert echo.calls == []
    assert _results(session) == {"s": CANCELLED_RESULT, "e": CANCELLED_BEFORE}


async def test_a_deadline_mid_batch_says_the_later_calls_never_ran() -> None:
    slow, echo = SlowWrite(), EchoTool()
    session = _batch(slow, echo, budget=Budget(max_wall_seconds=5))
    result = await asyncio.wait_for(session.run("go"), 30)  # the fake clock's sleeps end at once
    assert result.status is RunStatus.BUDGET_EXCEEDED
    assert slow.cancelled
    assert echo.calls == []
    assert _results(session) == {"s": OUT_OF_TIME, "e": OUT_OF_TIME_BEFORE}


async def test_a_cancel_before_the_first_tool_says_none_ran() -> None:
    slow, echo = SlowWrite(), EchoTool()
    session = _batch(slow, echo)

    def cancel_once_answered(event: ev.Event) -> None:
        if isinstance(event, ev.LLMEnded):
            session.cancel()

    result = await session.run("go", on_event=cancel_once_answered)
    assert result.status is RunStatus.CANCELLED
    assert not slow.started.is_set()
    assert _results(session) == {"s": CANCELLED_BEFORE, "e": CANCELLED_BEFORE}
