"""RunControl.within: raced work in the caller's task, stopped by cancellation or the deadline.

The contract is ``race``'s (the work sees a CancelledError where it waits; it never starts
once cancelled) without a task of its own; the caller's task must come out of it with no
cancellation left pending, and a cancellation of that task from outside must propagate.
"""

from __future__ import annotations

import asyncio

import pytest

from rho_adapters.clock import SystemClock
from rho_domain.loop.control import RunControl
from rho_domain.loop.journal import Journal
from rho_domain.state import State


def make_control() -> RunControl:
    clock = SystemClock()
    return RunControl("s1", None, Journal("s1", State(), clock, None, created=True))


async def test_the_work_runs_in_the_callers_task_and_its_result_comes_back() -> None:
    control = make_control()
    caller = asyncio.current_task()

    async def work() -> object:
        await asyncio.sleep(0)
        return asyncio.current_task()

    assert await control.within(work()) == (True, caller)


async def test_a_cancel_from_another_task_stops_the_work_where_it_waits() -> None:
    control = make_control()
    started, cleaned = asyncio.Event(), []

    async def work() -> str:
        started.set()
        try:
            await asyncio.Event().wait()
        finally:
            cleaned.append("killed")  # where the executor kills the process group
        return "never"

    async def canceller() -> None:
        await started.wait()
        control.cancel()

    other = asyncio.ensure_future(canceller())
    assert await control.within(work()) == (False, None)
    await other
    assert cleaned == ["killed"]
    task = asyncio.current_task()
    assert task is not None
    assert task.cancelling() == 0
    await asyncio.sleep(0.01)  # nothing left pending: the caller goes on waiting


async def test_work_never_starts_once_cancelled() -> None:
    control = make_control()
    control.cancel()
    ran = []

    async def work() -> None:
        ran.append(True)

    assert await control.within(work()) == (False, None)
    assert ran == []


async def test_a_cancel_from_inside_the_work_stops_it_at_its_next_wait() -> None:
    control = make_control()
    after = []

    async def work() -> str:
        control.cancel()  # a listener on a delta, say
        await asyncio.sleep(0.5)
        after.append("went on")
        return "done"

    assert await control.within(work()) == (False, None)
    assert after == []


async def test_a_cancel_from_inside_work_that_then_ends_leaves_nothing_pending() -> None:
    control = make_control()

    async def work() -> str:
        control.cancel()
        return "done"

    assert await control.within(work()) == (True, "done")
    await asyncio.sleep(0.01)  # a cancellation left pending would be raised here
    task = asyncio.current_task()
    assert task is not None
    assert task.cancelling() == 0


async def test_the_deadline_stops_the_work() -> None:
    control = make_control()
    control.deadline = control.journal.clock.monotonic() + 0.01

    async def work() -> str:
        await asyncio.sleep(5)
        return "never"

    assert await control.within(work()) == (False, None)
    assert control.out_of_time
    assert not control.cancelled


async def test_cancelling_the_callers_task_from_outside_propagates() -> None:
    control = make_control()
    started, cleaned = asyncio.Event(), []

    async def work() -> None:
        started.set()
        try:
            await asyncio.Event().wait()
        finally:
            cleaned.append("killed")

    async def caller() -> tuple[bool, None]:
        return await control.within(work())

    task = asyncio.ensure_future(caller())
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert cleaned == ["killed"]


async def test_an_outside_cancel_together_with_ours_still_propagates() -> None:
    control = make_control()
    started = asyncio.Event()

    async def work() -> None:
        started.set()
        await asyncio.Event().wait()

    async def caller() -> tuple[bool, None]:
        return await control.within(work())

    task = asyncio.ensure_future(caller())
    await started.wait()
    control.cancel()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_the_works_own_error_is_raised() -> None:
    control = make_control()

    async def work() -> None:
        await asyncio.sleep(0)
        raise ValueError("broken")

    with pytest.raises(ValueError, match="broken"):
        await control.within(work())


async def test_work_that_turns_the_stop_into_its_own_error_leaves_no_cancel_counted() -> None:
    control = make_control()
    started = asyncio.Event()

    async def work() -> str:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            raise RuntimeError("interrupted while waiting") from None
        return "never"

    async def canceller() -> None:
        await started.wait()
        control.cancel()

    other = asyncio.ensure_future(canceller())
    with pytest.raises(RuntimeError, match="interrupted while waiting"):
        await control.within(work())
    await other
    task = asyncio.current_task()
    assert task is not None
    assert task.cancelling() == 0  # a later asyncio.timeout in this task reads the count
    async with asyncio.timeout(5):
        await asyncio.sleep(0)
