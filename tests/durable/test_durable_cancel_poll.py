"""How soon a cancel reaches a durable run whose store has no signals (a library's own
``SessionStore``): the run reads the queue's record of a cancel every ``poll`` seconds
(``RunSignals``, 1 s by default), so the cancel is heard at the first read after it is
recorded: within one poll and one read of the queue's database (docs/durable.md), and at
once when it is recorded in the run's own process. Counted in reads, not timed."""

from __future__ import annotations

import asyncio
import importlib.util
from pathlib import Path

import pytest

from rho_entry.durable.run_signals import RunSignals


async def test_a_cancel_is_heard_at_the_first_read_after_it_is_recorded() -> None:
    reads: list[bool] = []
    recorded_at = 3  # the record is written between the third read and the fourth

    async def asked() -> bool:
        reads.append(len(reads) >= recorded_at)
        return reads[-1]

    signals = RunSignals(None, asked, poll=0)
    await signals.clear_cancel("s1")  # the run's start: the first read
    await signals.wait_for_cancel("s1")
    assert reads == [False, False, False, True]


async def test_a_cancel_recorded_before_the_start_is_heard_with_no_wait() -> None:
    reads: list[bool] = []

    async def asked() -> bool:
        reads.append(True)
        return True

    signals = RunSignals(None, asked, poll=3600)  # a wait would not end within the test
    await signals.clear_cancel("s1")
    await signals.wait_for_cancel("s1")
    assert reads == [True]


def test_the_default_poll_is_one_second() -> None:
    async def asked() -> bool:
        return False

    assert RunSignals(None, asked).poll == 1.0  # the figure docs/durable.md gives


async def test_a_cancel_recorded_in_this_process_wakes_the_run_at_once(tmp_path: Path) -> None:
    """The queue's real record (``CancelRecords``, SQLite) written in the run's own process
    rings its bell (``cancel_bells``): the run reads it at once, not at its next poll (an
    hour here; the bound below only ends a failing test)."""
    if importlib.util.find_spec("dbos") is None:
        pytest.skip("the durable extra (dbos) is not installed")
    from rho_adapters.durable.cancels import CancelRecords
    from rho_adapters.durable.system_db import system_db_url

    records = CancelRecords(system_db_url(str(tmp_path / "runs.sqlite")))
    reads: list[bool] = []

    async def asked() -> bool:
        reads.append(await asyncio.to_thread(records.asked, "r1"))
        return reads[-1]

    signals = RunSignals(None, asked, poll=3600, run_id="r1")
    try:
        await signals.clear_cancel("s1")
        waiting = asyncio.ensure_future(signals.wait_for_cancel("s1"))
        while len(reads) < 2:  # the start's read and the wait's first, both before the cancel
            await asyncio.sleep(0)
        await asyncio.to_thread(records.ask, "r1")  # as DbosRunQueue.cancel_queued records it
        await asyncio.wait_for(waiting, 30)
    finally:
        records.close()
    assert reads == [False, False, True]
