"""One polling timer per event loop for every session waiting for its cancel file."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))  # core_waits
from core_waits import Stopwatch

from rho_adapters.store import FileSignals
from rho_adapters.store.cancel_watch import cancel_watch


def timer_handles() -> int:
    """Timers scheduled on the running loop (the loop's own heap, for counting only)."""
    loop = asyncio.get_running_loop()
    scheduled: list[asyncio.TimerHandle] = loop._scheduled  # type: ignore[attr-defined]
    return sum(1 for h in scheduled if not h.cancelled())


async def until(condition: object, what: str) -> None:
    for _ in range(2000):  # loop turns, not a duration
        if callable(condition) and condition():
            return
        await asyncio.sleep(0.005)
    raise AssertionError(f"never happened: {what}")


async def test_fifty_waiting_sessions_share_one_poller_and_only_the_cancelled_one_wakes(
    tmp_path: Path,
) -> None:
    for index in range(50):
        (tmp_path / f"s{index}").mkdir()
    signals = FileSignals(tmp_path, poll=0.01)
    waits = [asyncio.create_task(signals.wait_for_cancel(f"s{i}")) for i in range(50)]
    watch = cancel_watch(0.01)
    await until(lambda: watch.waiting == 50, "every session waits")
    assert watch.ticking
    assert timer_handles() <= 2  # the watch's one timer (and at most the helper's sleep)
    assert not any(w.done() for w in waits)
    (tmp_path / "s7" / "cancel").touch()
    await until(lambda: waits[7].done(), "the cancelled session wakes")
    assert [i for i, w in enumerate(waits) if w.done()] == [7]
    for wait in waits:
        wait.cancel()
    await asyncio.gather(*waits, return_exceptions=True)
    assert watch.waiting == 0
    assert not watch.ticking  # stopped at once: nothing left pending on the loop


async def test_a_cancel_file_already_there_returns_at_once(tmp_path: Path) -> None:
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "cancel").touch()
    await FileSignals(tmp_path, poll=3600).wait_for_cancel("s")
    assert not cancel_watch(3600).ticking


async def test_a_tick_checks_a_slice_and_every_path_is_still_checked_each_poll(
    tmp_path: Path,
) -> None:
    from rho_adapters.store import cancel_watch as module

    count = 5 * module.SLICE
    for index in range(count):
        (tmp_path / f"s{index}").mkdir()
    signals = FileSignals(tmp_path, poll=0.2)
    waits = [asyncio.create_task(signals.wait_for_cancel(f"s{i}")) for i in range(count)]
    watch = cancel_watch(0.2)
    await until(lambda: watch.waiting == count, "every session waits")
    checks, ticks_seen = watch.checks, 0
    for _ in range(10):  # none checks more than a slice (a loaded loop may see two ticks)
        before, ticks_before = watch.checks, watch.ticks
        await until(lambda b=before: watch.checks > b, "the next tick")
        assert watch.checks - before <= module.SLICE * (watch.ticks - ticks_before)
        ticks_seen += 1
    assert watch.checks - checks >= ticks_seen  # the ticks went on
    (tmp_path / f"s{count - 1}" / "cancel").touch()
    (tmp_path / "s0" / "cancel").touch()
    watch_time = Stopwatch()
    await until(lambda: waits[0].done() and waits[count - 1].done(), "both cancelled wake")
    # Within about one pass (0.2 s); ticks a poll apart would take 1 s to reach the last path.
    # Less the time the process waited for a core: in wall time the load adds its own.
    assert watch_time.seconds() < 0.6
    assert [i for i, w in enumerate(waits) if w.done()] == [0, count - 1]
    for wait in waits:
        wait.cancel()
    await asyncio.gather(*waits, return_exceptions=True)
    assert not watch.ticking
