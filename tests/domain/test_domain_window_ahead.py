"""The model's context window is asked beside the run's start
(``context_fit.ask_window_ahead``): the server's answer comes while the store creates the
session and syncs ``run_start``, and still the first call goes out only once ``run_start`` is
durable and the window is known."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence

from domain_support import make_session

from rho_adapters.fakes import MemorySessionStore, ScriptedModel
from rho_adapters.fakes.scripted_model import Turn
from rho_domain import events as ev
from rho_domain.config import Budget
from rho_domain.errors import StoreError
from rho_domain.model import ModelRequest, StreamEvent
from rho_domain.ports.model import ContextMeter
from rho_domain.ports.store import SessionRecord
from rho_domain.run import RunStatus


class MeteredModel(ScriptedModel, ContextMeter):
    """A scripted model whose server takes ``answer_after`` seconds to say its window;
    what happens goes to ``log``."""

    def __init__(self, turns: Sequence[Turn], log: list[str], answer_after: float) -> None:
        super().__init__(turns)
        self.log = log
        self.answer_after = answer_after
        self.window: int | None = None
        self.asking: asyncio.Future[None] | None = None

    async def context_window(self) -> int | None:
        """Asked once, as a real meter: a caller arriving while the question is out waits
        for its answer; a question cancelled midway is asked again by the next caller."""
        while self.window is None:
            if self.asking is not None:
                await asyncio.shield(self.asking)
                continue
            self.asking = asking = asyncio.get_running_loop().create_future()
            self.log.append("window asked")
            try:
                await asyncio.sleep(self.answer_after)
                self.window = 100_000
                self.log.append("window answered")
            except asyncio.CancelledError:
                self.log.append("window question cancelled")
                raise
            finally:
                self.asking = None
                asking.set_result(None)
        return self.window

    def estimate_tokens(self, request: ModelRequest) -> int:
        return 100

    async def count_tokens(self, request: ModelRequest) -> int:
        return 100

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        self.log.append("model called")
        return super().stream(request)


class SyncingStore(MemorySessionStore):
    """A store whose run boundaries take ``sync`` seconds to be durable, as a disk's fsync."""

    def __init__(self, log: list[str], sync: float, *, refuse: bool = False) -> None:
        super().__init__()
        self.log = log
        self.sync = sync
        self.refuse = refuse

    async def create(self, record: SessionRecord) -> None:
        if self.refuse:
            await asyncio.sleep(0.01)  # the disk, refusing: the window question is out
            raise StoreError("the disk is full")
        await super().create(record)

    async def append(self, session_id: str, events: Sequence[ev.Event]) -> None:
        await super().append(session_id, events)
        if any(e.kind == "run_start" for e in events):
            await asyncio.sleep(self.sync)
            self.log.append("run_start durable")


async def test_the_window_is_asked_beside_the_run_start_and_the_call_waits_for_both() -> None:
    log: list[str] = []
    session = make_session([], store=SyncingStore(log, sync=0.03))
    session.model = MeteredModel([Turn(text="done")], log, answer_after=0.01)
    result = await session.run("hi")
    assert result.status is RunStatus.COMPLETED
    # asked before run_start was durable (on the code before, after it), answered while the
    # store synced; the call after both
    assert log == ["window asked", "window answered", "run_start durable", "model called"]


async def test_a_slow_answer_holds_the_first_call_after_the_run_start() -> None:
    log: list[str] = []
    session = make_session([], store=SyncingStore(log, sync=0.01))
    session.model = MeteredModel([Turn(text="done")], log, answer_after=0.03)
    result = await session.run("hi")
    assert result.status is RunStatus.COMPLETED
    assert log == ["window asked", "run_start durable", "window answered", "model called"]


async def test_a_run_ended_before_it_needed_the_window_cancels_the_question() -> None:
    log: list[str] = []
    session = make_session([], store=SyncingStore(log, sync=0.0, refuse=True))
    session.model = MeteredModel([Turn(text="never")], log, answer_after=60)
    result = await asyncio.wait_for(session.run("hi"), 5)
    assert result.status is RunStatus.ERROR
    assert "the disk is full" in (result.error or "")
    assert log == ["window asked", "window question cancelled"]
    assert asyncio.all_tasks() == {asyncio.current_task()}  # nothing left pending


async def test_a_cancel_while_the_window_question_is_out_ends_the_run_at_once() -> None:
    """The first call waits for the window (``check_window``); a cancel meanwhile was seen
    only once the server answered (here: in 60 s). It now ends the wait and the run."""
    log: list[str] = []
    session = make_session([], store=SyncingStore(log, sync=0.0))
    session.model = MeteredModel([Turn(text="never")], log, answer_after=60)
    run = asyncio.ensure_future(session.run("hi"))
    while "window asked" not in log:
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.05)  # the run waits for the window now
    session.cancel()
    result = await asyncio.wait_for(run, 5)
    assert result.status is RunStatus.CANCELLED
    assert "model called" not in log
    assert "window question cancelled" in log


async def test_the_run_deadline_ends_the_window_wait() -> None:
    log: list[str] = []
    session = make_session([], store=SyncingStore(log, sync=0.0), budget=Budget(max_wall_seconds=5))
    session.model = MeteredModel([Turn(text="never")], log, answer_after=60)
    result = await asyncio.wait_for(session.run("hi"), 5)
    assert result.status is RunStatus.BUDGET_EXCEEDED
    assert "model called" not in log
