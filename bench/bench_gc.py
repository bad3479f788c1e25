"""The garbage collector's pauses while many sessions run, beside the loop-lag gauge.

A collection runs on whichever thread allocates when the counts say so, holding the GIL: on
the event loop's thread it is a stall of the loop like any other, and a full (generation 2)
collection walks every tracked object. This runs ``bench_sessions.many_sessions`` (``--sessions``
prompts dispatched at once through the runtime API against ``loopback_agent_server.py``, in
memory or file-backed) with ``gc.callbacks`` timing every collection, and reports per
generation how many ran, their total and longest time and what they found, beside the
runtime's longest stall (``AgentRuntime.stats().loop_lag``). Then one facade run with
``gc.DEBUG_SAVEALL`` counts the objects a run leaves in reference cycles (the collector's
work: what reference counting alone cannot free).

Usage: python bench/bench_gc.py [--sessions 1000] [--store memory|files]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from bench_sessions import _run_once, make_agent, many_sessions, start_server

from rho_adapters.model import SHARED_POOL
from rho_adapters.store import FileSessionStore

_started = [0.0]
_pauses: list[tuple[int, float, int]] = []  # generation, seconds, objects found unreachable


def _timed(phase: str, info: dict[str, Any]) -> None:
    if phase == "start":
        _started[0] = time.perf_counter()
    else:
        _pauses.append((info["generation"], time.perf_counter() - _started[0], info["collected"]))


async def cyclic_garbage_per_run(agent: Any, runs: int = 10) -> float:
    """Objects left in reference cycles per facade run (``gc.DEBUG_SAVEALL``)."""
    for _ in range(3):
        await _run_once(agent)
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        for _ in range(runs):
            await _run_once(agent)
        gc.collect()
    finally:
        gc.set_debug(0)
    found = len(gc.garbage)
    gc.garbage.clear()
    return found / runs


async def main_async(sessions: int, store_kind: str) -> None:
    SHARED_POOL.configure(max_in_flight=100)
    child, base_url = start_server()
    try:
        with tempfile.TemporaryDirectory(prefix="rho-bench-gc-") as tmp:
            workdir = Path(tmp) / "work"
            workdir.mkdir()
            for i in range(20):
                (workdir / f"file{i}.txt").write_text("x")
            agent = make_agent(base_url, workdir)
            print(f"objects in reference cycles per run: {await cyclic_garbage_per_run(agent):.1f}")
            store = FileSessionStore(Path(tmp) / "sessions") if store_kind == "files" else None
            await _run_once(agent, store)
            gc.callbacks.append(_timed)
            try:
                result = await many_sessions(agent, sessions, store)
            finally:
                gc.callbacks.remove(_timed)
            await SHARED_POOL.aclose()
    finally:
        assert child.stdin is not None
        child.stdin.close()
        child.wait(10)
    print(
        f"{sessions} sessions ({store_kind}): {result['wall_s']:.1f} s, longest loop stall "
        f"{result['stall_ms']:.0f} ms, {result['stalls_over_50ms']:.0f} ticks over 50 ms"
    )
    for generation in range(3):
        pauses = [p for p in _pauses if p[0] == generation]
        if pauses:
            longest = max(pauses, key=lambda p: p[1])
            print(
                f"  generation {generation}: {len(pauses)} collections, "
                f"{sum(p[1] for p in pauses) * 1e3:.0f} ms in all, longest "
                f"{longest[1] * 1e3:.1f} ms (found {longest[2]}), "
                f"found {sum(p[2] for p in pauses)} objects in all"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--store", choices=["memory", "files"], default="memory")
    args = parser.parse_args()
    asyncio.run(main_async(args.sessions, args.store))


if __name__ == "__main__":
    main()
