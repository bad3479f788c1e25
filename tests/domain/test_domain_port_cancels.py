"""A port that lets out a ``CancelledError`` nobody asked for: the port's failure, named.

Before: the model's was converted (``model_turn``), the store's, the executor's and the signal
source's were not. A store whose ``append`` raised one left ``Session.run`` as a cancel of its
caller (``asyncio.run`` ended there, no result) and the batch it was given was dropped (taken
as a cancelled append's is): the trace lost ``run_start`` and the prompt. An executor's was
answered as the tool's own failure ("the tool 'write' raised CancelledError..."), and a signal
source's ``clear_cancel`` at the run's start ended the run ``cancelled``, raised.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Mapping, Sequence
from typing import Any

from domain_support import WriteNoteTool, make_session

from rho_adapters.fakes import (
    FakeClock,
    ManualSignals,
    MemoryExecutor,
    MemorySessionStore,
    call,
    text,
    tools,
)
from rho_domain import events as ev
from rho_domain.config import Budget
from rho_domain.errors import StoreError
from rho_domain.messages import ToolResultMessage
from rho_domain.ports.commands import Command, CommandResult
from rho_domain.run import RunStatus
from rho_domain.tools.base import READ_ONLY, ToolContext, ToolOutput, ToolPolicy

_SAID = "raised CancelledError(elsewhere) although nothing cancelled it"


class _Store(MemorySessionStore):
    """Its ``append`` number ``failing`` raises an unasked CancelledError."""

    def __init__(self, failing: int) -> None:
        super().__init__()
        self.failing, self.appends = failing, 0

    async def append(self, session_id: str, events: Sequence[ev.Event]) -> None:
        self.appends += 1
        if self.appends == self.failing:
            raise asyncio.CancelledError("elsewhere")
        await super().append(session_id, events)


class _Executor(MemoryExecutor):
    """Its ``write`` raises an unasked CancelledError; its ``run`` waits until cancelled."""

    def __init__(self) -> None:
        super().__init__()
        self.running = asyncio.Event()

    async def write(self, path: str, data: bytes, *, overwrite: bool) -> bool:
        raise asyncio.CancelledError("elsewhere")

    async def snapshot(self) -> str:  # the adapter's own, beyond the port
        raise asyncio.CancelledError("elsewhere")

    async def run(self, command: Command) -> CommandResult:
        self.running.set()
        await asyncio.Event().wait()
        raise AssertionError("never")


class _Signals(ManualSignals):
    async def clear_cancel(self, session_id: str) -> None:
        raise asyncio.CancelledError("elsewhere")


class _Write(WriteNoteTool):
    """Writes through the executor (given a path), or runs a command."""

    parameters: Mapping[str, Any] = {"type": "object"}

    def policy_for(self, arguments: Mapping[str, Any]) -> ToolPolicy:
        return READ_ONLY

    async def handle(self, arguments: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
        if "path" in arguments:
            return await super().handle(arguments, ctx)
        if "snapshot" in arguments:
            return ToolOutput(content=await ctx.executor.snapshot())  # type: ignore[attr-defined]
        await ctx.executor.run(Command(shell="true"))
        return ToolOutput(content="ran")


async def test_an_unasked_cancel_from_the_store_ends_the_run_in_error_losing_nothing() -> None:
    turns = [tools(call("echo", {"text": "x"})), text("done")]
    for failing, before in ((1, ["run_start"]), (3, ["run_start", "message", "llm_start"])):
        store = _Store(failing)  # run_start's append, or a later one
        session = make_session(turns, store=store)
        result = await session.run("go")
        assert (result.status, result.error_type) == (RunStatus.ERROR, "StoreError")
        assert f"the store test_domain_port_cancels._Store {_SAID}" in (result.error or "")
        assert [e.kind for e in store.events(session.id)] == [*before, "error", "run_end"]
        ended = store.events(session.id)[-1]
        assert isinstance(ended, ev.RunEnded)
        assert ended.status is RunStatus.ERROR


async def test_an_unasked_cancel_from_the_executor_is_its_failure_an_asked_one_cancels() -> None:
    executor = _Executor()
    turns = [tools(call("write", {"path": "a", "content": "x"})), text("done")]
    session = make_session(turns, tools=[_Write()], executor=executor)
    result = await session.run("go")
    assert result.status is RunStatus.COMPLETED
    said = [m.content for m in session.state.messages if isinstance(m, ToolResultMessage)]
    assert said[0].startswith(
        f"Tool 'write' failed: ExecutorError: the executor test_domain_port_cancels._Executor "
        f"{_SAID}"
    )
    # the executor's own coroutine function, beyond the port, is guarded alike
    turns = [tools(call("write", {"snapshot": 1})), text("done")]
    session = make_session(turns, tools=[_Write()], executor=executor)
    assert (await session.run("go")).status is RunStatus.COMPLETED
    said = [m.content for m in session.state.messages if isinstance(m, ToolResultMessage)]
    assert said[0].startswith(
        f"Tool 'write' failed: ExecutorError: the executor test_domain_port_cancels._Executor "
        f"{_SAID}"
    )
    session = make_session(
        [tools(call("write", {"command": "true"})), text("done")],
        tools=[_Write()],
        executor=executor,
    )
    running = asyncio.ensure_future(session.run("go"))
    await executor.running.wait()
    session.cancel()
    assert (await running).status is RunStatus.CANCELLED


async def test_an_unasked_cancel_from_the_signal_source_ends_the_run_in_error() -> None:
    session = make_session([text("done")], signals=_Signals())
    result = await session.run("go")
    assert (result.status, result.error_type) == (RunStatus.ERROR, "StoreError")
    assert f"the signal source test_domain_port_cancels._Signals {_SAID}" in (result.error or "")


class _DeafSignals(ManualSignals):
    """Its ``wait_for_cancel`` fails: a LISTEN connection lost, a control file unreadable."""

    def __init__(self, failure: Exception) -> None:
        super().__init__()
        self.failure = failure

    async def wait_for_cancel(self, session_id: str) -> None:
        raise self.failure

    async def export_requests(self, session_id: str) -> tuple[str, ...]:
        await asyncio.sleep(0)  # a store's I/O: the watcher runs (the fakes never yield)
        return ()


async def test_a_signal_source_that_stops_listening_says_so_and_the_run_goes_on() -> None:
    """Before: ``_watch`` dropped a ``RhoError`` in silence (an outside cancel, ``rho-agent
    cancel``, a server's cancel, was not heard for the rest of the run, and nothing said so);
    any other exception ended the watcher task unretrieved ("Task exception was never
    retrieved" at the collector's whim), nothing in the trace."""
    for failure in (StoreError("the LISTEN connection was lost"), OSError("control unreadable")):
        store = MemorySessionStore()
        turns = [tools(call("echo", {"text": "x"})), text("done")]
        session = make_session(turns, signals=_DeafSignals(failure), store=store)
        result = await session.run("go")
        assert result.status is RunStatus.COMPLETED
        said = [e for e in store.events(session.id) if isinstance(e, ev.ErrorOccurred)]
        assert [e.error_type for e in said] == ["SignalSourceError"]
        assert said[0].message == (
            "the signal source test_domain_port_cancels._DeafSignals stopped listening for "
            f"cancels ({type(failure).__name__}: {failure}): a cancel from outside this "
            "process (rho-agent cancel, the server's) is not heard for the rest of this run; "
            "one in this process (Ctrl+C, Session.cancel) still is"
        )


class _LostClock(FakeClock):
    """Its ``sleep`` lets out an unasked CancelledError (it awaited a timer cancelled
    elsewhere); ``real`` keeps the real monotonic time, for a wall-time budget."""

    def __init__(self, *, real: bool = False) -> None:
        super().__init__()
        self.real = real

    def monotonic(self) -> float:
        return time.monotonic() if self.real else super().monotonic()

    async def sleep(self, seconds: float) -> None:
        raise asyncio.CancelledError("elsewhere")


class _PausedOnce(ManualSignals):
    """Paused at the first checkpoint, resumed at the next look."""

    def __init__(self) -> None:
        super().__init__()
        self.looks = 0

    async def is_paused(self, session_id: str) -> bool:
        self.looks += 1
        return self.looks <= 2  # the checkpoint's look and the pause loop's first


async def test_a_clock_whose_sleep_lets_out_an_unasked_cancel_still_ends_the_run() -> None:
    """Before: the pause loop's ``clock.sleep`` let the CancelledError out of ``Session.run``
    (as if its caller had been cancelled: no result), and the deadline timer (``_expire``)
    died with it in silence: a tool that never ends ran on past the wall-time budget."""
    session = make_session([text("done")], signals=_PausedOnce(), clock=_LostClock())
    result = await asyncio.wait_for(session.run("go"), 30)
    assert result.status is RunStatus.COMPLETED
    executor = _Executor()
    session = make_session(
        [tools(call("write", {"command": "true"})), text("done")],
        tools=[_Write()],
        executor=executor,
        clock=_LostClock(real=True),
        budget=Budget(max_wall_seconds=0.05),
    )
    result = await asyncio.wait_for(session.run("go"), 30)
    assert result.status is RunStatus.BUDGET_EXCEEDED
    assert session.control.out_of_time


class _BrokenClock(FakeClock):
    """Its member ``broken`` raises OSError from its ``after``-th call on."""

    def __init__(self, broken: str, after: int) -> None:
        super().__init__()
        self.broken, self.after, self.calls = broken, after, 0

    def _call(self, member: str) -> None:
        if member == self.broken:
            self.calls += 1
            if self.calls > self.after:
                raise OSError(f"{member} lost its time source")

    def now(self) -> float:
        self._call("now")
        return super().now()

    def monotonic(self) -> float:
        self._call("monotonic")
        return super().monotonic()

    async def sleep(self, seconds: float) -> None:
        self._call("sleep")
        await super().sleep(seconds)


async def test_a_clock_that_fails_is_said_once_in_the_trace_and_the_run_keeps_its_times() -> None:
    """Before: ``now()`` raising ended the run ``error`` with a bare "OSError: ..." naming no
    clock; ``monotonic()`` raising let the OSError out of ``Session.run``; ``sleep()`` failing
    was slept on the loop's time with nothing in the trace. Now each is one ``ClockError``
    event naming the clock and the member, and the run completes on the loop's time."""
    for member, after in (("now", 0), ("now", 3), ("monotonic", 0), ("sleep", 0)):
        store = MemorySessionStore()
        clock = _BrokenClock(member, after)
        session = make_session(
            [text("done")], store=store, clock=clock, budget=Budget(max_wall_seconds=60)
        )
        result = await asyncio.wait_for(session.run("go"), 30)
        assert result.status is RunStatus.COMPLETED, (member, result.error)
        events = store.events(session.id)
        said = [e for e in events if isinstance(e, ev.ErrorOccurred)]
        assert [e.error_type for e in said] == ["ClockError"], member
        assert said[0].message.startswith(
            f"the clock {__name__}._BrokenClock raised OSError: {member} lost its time "
            f"source in {member}(): from here on this session's times come from the event "
            "loop's clock"
        )
        times = [e.at for e in events]
        assert times == sorted(times), member
        assert events[-1].kind == "run_end"


class _LyingClock(FakeClock):
    """Its member ``member`` answers ``lie(good, calls)`` instead of the fake's reading."""

    def __init__(self, member: str, lie: Any) -> None:
        super().__init__()
        self.member, self.lie, self.calls = member, lie, 0

    def _read(self, member: str, good: float) -> float:
        if member != self.member:
            return good
        self.calls += 1
        return float(self.lie(good, self.calls))

    def now(self) -> float:
        return self._read("now", super().now())

    def monotonic(self) -> float:
        return self._read("monotonic", super().monotonic())


async def test_a_clock_that_lies_is_said_once_and_every_event_keeps_a_readable_time() -> None:
    """Before: a clock answering ``now()`` with NaN (or an infinity, or a time past year 9999)
    was taken at its word: every event of the run carried that time, and the codec refuses
    such a line, so the stored trace read back as nothing. ``monotonic()`` answering NaN or
    going back made durations and the wall-time budget meaningless, unsaid. Now such an
    answer is the clock's failure: one ``ClockError`` naming it, the run on the loop's time."""
    from rho_adapters.codec import decode_event_line, encode_event_line

    lies = (
        ("now", lambda good, calls: math.nan, "answered now() with nan, not a time"),
        ("now", lambda good, calls: math.inf, "answered now() with inf, not a time"),
        ("now", lambda good, calls: 1e300 if calls > 2 else good, "with 1e+300, not a time"),
        ("monotonic", lambda good, calls: math.nan, "answered monotonic() with nan"),
        ("monotonic", lambda good, calls: 100.0 - calls, "with 98.0 after 99.0 (it went back)"),
    )
    for member, lie, said_lie in lies:
        store = MemorySessionStore()
        session = make_session(
            [text("done")],
            store=store,
            clock=_LyingClock(member, lie),
            budget=Budget(max_wall_seconds=60),
        )
        result = await asyncio.wait_for(session.run("go"), 30)
        assert result.status is RunStatus.COMPLETED, (said_lie, result.error)
        events = store.events(session.id)
        said = [e for e in events if isinstance(e, ev.ErrorOccurred)]
        assert [e.error_type for e in said] == ["ClockError"], said_lie
        assert f"{__name__}._LyingClock " in said[0].message, said[0].message
        assert said_lie in said[0].message, said[0].message
        # every line of the trace reads back: no time the codec refuses
        assert [decode_event_line(encode_event_line(e)) for e in events] == list(events)
        times = [e.at for e in events]
        assert times == sorted(times), said_lie
