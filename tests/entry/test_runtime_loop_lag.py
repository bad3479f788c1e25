"""The loop-lag gauge: a stall of the event loop shows in LoopLag and in the runtime's stats."""

from __future__ import annotations

import asyncio
import gc
import time
from pathlib import Path

import pytest

from rho_adapters.fakes import FunctionModel, text
from rho_adapters.fakes.scripted_model import Turn
from rho_adapters.loop_lag import LoopLag
from rho_domain.model import ModelRequest
from rho_entry import (
    AgentConfig,
    close_runtime,
    create_runtime,
    dispatch_prompt,
    run_prompt,
    start_runtime,
)
from rho_entry.runtime import RuntimeStats


async def _ticks(lag: LoopLag, n: int) -> None:
    """Wait until the gauge ticked ``n`` more times."""
    target = lag.stats().ticks + n
    while lag.stats().ticks < target:
        await asyncio.sleep(lag.stats().interval_seconds)


async def test_a_blocked_loop_is_the_longest_stall() -> None:
    lag = LoopLag(interval=0.005)
    lag.start()
    await _ticks(lag, 2)
    time.sleep(0.15)  # blocking on purpose: what a synchronous write on the loop does
    await _ticks(lag, 2)
    stats = lag.stats()
    assert stats.longest_stall_seconds >= 0.14
    assert stats.stalls_over_50ms >= 1
    assert stats.mean_stall_seconds <= stats.longest_stall_seconds
    lag.reset()
    assert lag.stats().ticks == 0
    assert lag.stats().longest_stall_seconds == 0.0
    lag.stop()
    assert not lag.running
    await asyncio.sleep(0.03)
    assert lag.stats().ticks == 0  # stopped: no tick after stop


def test_the_interval_must_be_positive() -> None:
    with pytest.raises(ValueError, match="positive"):
        LoopLag(interval=0)


async def test_the_runtime_reports_a_model_that_blocks_its_loop(tmp_path: Path) -> None:
    """A model adapter that blocks (here 120 ms of synchronous sleep) stalls every session the
    runtime runs; the runtime's stats show it, and stop ticking when it closes."""

    def blocking(request: ModelRequest) -> Turn:
        time.sleep(0.12)
        return text("done")

    runtime = create_runtime(AgentConfig(working_dir=str(tmp_path)), model=FunctionModel(blocking))
    before = runtime.stats()
    assert before.loop_lag.ticks == 0  # not started: not ticking
    await start_runtime(runtime)
    assert (await run_prompt(runtime, "go")).text == "done"
    await asyncio.sleep(0.03)
    stats = runtime.stats()
    assert isinstance(stats, RuntimeStats)
    assert stats.sessions_active == 0
    assert stats.loop_lag.longest_stall_seconds >= 0.1
    assert stats.loop_lag.stalls_over_50ms >= 1
    await close_runtime(runtime)
    ticks = runtime.stats().loop_lag.ticks
    await asyncio.sleep(0.03)
    assert runtime.stats().loop_lag.ticks == ticks


async def test_a_burst_of_dispatches_opens_one_session_per_turn_of_the_loop(
    tmp_path: Path,
) -> None:
    """Twenty prompts dispatched at once: each session opens (and makes its first model call)
    in a turn of the loop of its own, so the loop runs everything else between them instead
    of stalling for all twenty openings at once."""
    turn = [0]
    loop = asyncio.get_running_loop()

    def count() -> None:
        turn[0] += 1
        handle[0] = loop.call_soon(count)  # runs once per turn of the loop

    handle = [loop.call_soon(count)]
    first_calls: list[int] = []

    def answer(request: ModelRequest) -> Turn:
        first_calls.append(turn[0])
        return text("done")

    runtime = create_runtime(
        AgentConfig(working_dir=str(tmp_path)),
        model=FunctionModel(answer),
        max_concurrent=20,
    )
    await start_runtime(runtime)
    try:
        handles = [await dispatch_prompt(runtime, "go", new_session=True) for _ in range(20)]
        results = [await h for h in handles]
    finally:
        handle[0].cancel()
        await close_runtime(runtime)
    assert [r.text for r in results] == ["done"] * 20
    assert len(first_calls) == 20
    assert len(set(first_calls)) == 20, f"openings shared turns of the loop: {first_calls}"


async def test_the_gauge_times_the_collectors_pauses_while_it_runs() -> None:
    """A full collection holds the loop like any blocking call: the gauge says how long the
    collector held it, so a stall can be told from one; nothing is counted once stopped."""
    keep = [[i] for i in range(200_000)]  # something for a full pass to walk
    hooks = len(gc.callbacks)
    lag = LoopLag()
    lag.start()
    gc.collect()
    gc.collect(0)
    stats = lag.stats()
    assert stats.full_collections == 1
    assert 0 < stats.longest_collection_seconds <= stats.collector_seconds
    lag.reset()
    assert (lag.stats().full_collections, lag.stats().collector_seconds) == (0, 0.0)
    lag.stop()
    gc.collect()
    assert (lag.stats().full_collections, lag.stats().collector_seconds) == (0, 0.0)
    assert len(gc.callbacks) == hooks  # its hook is gone
    assert len(keep) == 200_000


async def test_the_runtime_reports_the_collectors_pauses(tmp_path: Path) -> None:
    runtime = await start_runtime(create_runtime(AgentConfig(working_dir=str(tmp_path))))
    gc.collect()
    stats = runtime.stats().loop_lag
    await close_runtime(runtime)
    assert stats.full_collections >= 1
    assert stats.longest_collection_seconds > 0


async def test_a_service_freezes_its_start_up_heap_when_it_starts_a_runtime(
    tmp_path: Path,
) -> None:
    """``start_runtime(runtime, freeze_start_up=True)``: what start-up built (here a list the
    service made before) leaves the collector's generations for its permanent one, so no
    full pass under the sessions walks it again; by default the process's heap is left as
    it is (the library never freezes its host's heap unasked)."""
    plain = await start_runtime(create_runtime(AgentConfig(working_dir=str(tmp_path))))
    built_before = [[i] for i in range(3)]  # a service's start-up objects
    frozen = gc.get_freeze_count()
    other = create_runtime(AgentConfig(working_dir=str(tmp_path)))
    await close_runtime(plain)
    assert gc.get_freeze_count() == frozen  # not asked: nothing frozen
    assert any(o is built_before for o in gc.get_objects())  # walked by every full pass
    started = await start_runtime(other, freeze_start_up=True)
    try:
        assert started is other
        assert gc.get_freeze_count() > frozen
        # the frozen are in no generation: a full pass walks none of them
        assert not any(o is built_before for o in gc.get_objects())
    finally:
        await close_runtime(other)
