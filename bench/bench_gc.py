"""The garbage collector's pauses while many sessions run, beside the loop-lag gauge.

A collection runs on whichever thread allocates when the counts say so, holding the GIL: on
the event loop's thread it is a stall of the loop like any other, and a full (generation 2)
collection walks every tracked object. This runs ``bench_sessions.many_sessions`` (``--sessions``
prompts dispatched at once through the runtime API against ``loopback_agent_server.py``, in
memory or file-backed) with ``gc.callbacks`` timing every collection, and reports per
generation how many ran, their total and longest time and what they found, beside the
runtime's longest stall (``AgentRuntime.stats().loop_lag``). Then facade runs with
``gc.DEBUG_SAVEALL`` counts the objects a run leaves in reference cycles (the collector's
work: what reference counting alone cannot free; ``--runs`` runs), and ``--handles`` handles
dispatched and kept after they finished count the objects the collector tracks per kept
handle (what a service holding its handles makes every full pass walk). The CPU time of the
process over the many sessions (``getrusage``: user + system, all threads) and of the loop's
thread stand beside the wall time, steadier than it on a shared machine.

The runtime of the many sessions starts with ``freeze_start_up=True`` where the tree has it
(a service whose start-up is over: ``bench_sessions.many_sessions``), ``--no-freeze`` without;
each collection's CPU time (its thread's) stands beside its wall time, which a loaded machine
stretches.

Usage: python bench/bench_gc.py [--sessions 1000] [--store memory|files] [--runs 10]
    [--handles 200] [--no-freeze]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import resource
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_sessions import PROMPT, make_agent, many_sessions, run_once
from loopback_agent_server import start_server

from rho_adapters.model import SHARED_POOL
from rho_adapters.store import FileSessionStore
from rho_entry import Agent
from rho_entry.runtime import close_runtime, create_runtime, dispatch_prompt, start_runtime

_started = [0.0, 0.0]
# generation, seconds, objects found unreachable, CPU seconds of the thread that collected
_pauses: list[tuple[int, float, int, float]] = []


def _timed(phase: str, info: dict[str, int]) -> None:
    if phase == "start":
        _started[:] = time.perf_counter(), time.thread_time()
    else:
        wall, cpu = time.perf_counter() - _started[0], time.thread_time() - _started[1]
        _pauses.append((info["generation"], wall, info["collected"], cpu))


async def cyclic_garbage_per_run(agent: Agent, runs: int) -> float:
    """Objects left in reference cycles per facade run (``gc.DEBUG_SAVEALL``)."""
    for _ in range(3):
        await run_once(agent)
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        for _ in range(runs):
            await run_once(agent)
        gc.collect()
    finally:
        gc.set_debug(0)
    found = len(gc.garbage)
    gc.garbage.clear()
    return found / runs


async def tracked_per_kept_handle(agent: Agent, store: FileSessionStore | None, n: int) -> float:
    """Objects the collector tracks per finished handle still held (as a service holds them)."""
    runtime = await start_runtime(create_runtime(agent, store=store, max_concurrent=n))
    warm = await dispatch_prompt(runtime, PROMPT, new_session=True)
    await warm.wait_done()
    del warm
    gc.collect()
    before = len(gc.get_objects())
    handles = [await dispatch_prompt(runtime, PROMPT, new_session=True) for _ in range(n)]
    await asyncio.gather(*(h.wait_done() for h in handles))
    gc.collect()
    per_handle = (len(gc.get_objects()) - before) / n
    del handles
    await close_runtime(runtime)
    return per_handle


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def main_async(args: argparse.Namespace) -> None:
    sessions, store_kind = args.sessions, args.store
    _pauses.clear()
    SHARED_POOL.configure(max_in_flight=100)
    child, base_url = start_server()
    try:
        with tempfile.TemporaryDirectory(prefix="rho-bench-gc-") as tmp:
            workdir = Path(tmp) / "work"
            workdir.mkdir()
            for i in range(20):
                (workdir / f"file{i}.txt").write_text("x")
            agent = make_agent(base_url, workdir)
            cyclic = await cyclic_garbage_per_run(agent, args.runs)
            print(f"objects in reference cycles per run: {cyclic:.1f}")
            store = FileSessionStore(Path(tmp) / "sessions") if store_kind == "files" else None
            await run_once(agent, store)
            kept = await tracked_per_kept_handle(agent, store, args.handles)
            print(f"objects the collector tracks per kept finished handle: {kept:.1f}")
            gc.collect()
            gc.callbacks.append(_timed)
            cpu, loop_cpu = _cpu_seconds(), time.thread_time()
            try:
                result = await many_sessions(agent, sessions, store, freeze=not args.no_freeze)
            finally:
                gc.callbacks.remove(_timed)
            cpu, loop_cpu = _cpu_seconds() - cpu, time.thread_time() - loop_cpu
            await SHARED_POOL.aclose()
    finally:
        assert child.stdin is not None
        child.stdin.close()
        child.wait(10)
    print(
        f"{sessions} sessions ({store_kind}): {result['wall_s']:.1f} s, longest loop stall "
        f"{result['stall_ms']:.0f} ms, {result['stalls_over_50ms']:.0f} ticks over 50 ms; "
        f"CPU {cpu:.1f} s ({loop_cpu:.1f} s on the loop's thread)"
    )
    for generation in range(3):
        pauses = [p for p in _pauses if p[0] == generation]
        if pauses:
            longest = max(pauses, key=lambda p: p[1])
            print(
                f"  generation {generation}: {len(pauses)} collections, "
                f"{sum(p[1] for p in pauses) * 1e3:.0f} ms in all, longest "
                f"{longest[1] * 1e3:.1f} ms (found {longest[2]}), "
                f"found {sum(p[2] for p in pauses)} objects in all; CPU "
                f"{sum(p[3] for p in pauses) * 1e3:.0f} ms in all, longest "
                f"{max(p[3] for p in pauses) * 1e3:.1f} ms"
            )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--store", choices=["memory", "files"], default="memory")
    parser.add_argument("--runs", type=int, default=10, help="runs counted for cyclic garbage")
    parser.add_argument("--handles", type=int, default=200, help="finished handles kept")
    parser.add_argument(
        "--no-freeze", action="store_true", help="start the runtime without freeze_start_up"
    )
    asyncio.run(main_async(parser.parse_args(argv)))


if __name__ == "__main__":
    main()
