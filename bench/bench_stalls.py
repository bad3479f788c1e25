"""What the event loop's longest stalls are made of while many sessions run (issue 33).

Runs ``bench_sessions.many_sessions`` (``--sessions`` prompts dispatched at once through the
runtime API against ``loopback_agent_server.py``, in memory or file-backed) with three
instruments on the loop's thread, and reports beside the runtime's longest stall:

- every turn of the loop (``BaseEventLoop._run_once``, wrapped for this process only): its
  wall and CPU time (``time.thread_time``) and how many callbacks it ran; the CPU figures
  are the loop's own work, the wall figures add what a loaded machine takes away;
- every callback's CPU time and, for a task's step, where the task was suspended before and
  after it (the innermost frame of its coroutine chain): the steps that cost most, by where
  they begin and end, over the run and within each of the five longest turns (what a long
  turn held: a wave of sessions woken together shows as one kind of step, many times);
- every collection (``gc.callbacks``): generation, wall and CPU time, and which turn of the
  loop it fell in.

A turn of the loop runs every callback ready when it starts: 150 sessions woken together
(a burst of responses) are one turn as long as their 150 steps.

Usage: python bench/bench_stalls.py [--sessions 1000] [--store memory|files] [--no-freeze]
"""

from __future__ import annotations

import argparse
import asyncio
import asyncio.base_events
import asyncio.events
import collections
import gc
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from bench_sessions import make_agent, many_sessions, run_once
from loopback_agent_server import start_server

from rho_adapters.model import SHARED_POOL
from rho_adapters.store import FileSessionStore

# wall, CPU, the callbacks run (where a task resumed, where it stopped, CPU), the collections
_turns: list[tuple[float, float, list[tuple[str, str, float]], list[tuple[int, float]]]] = []
_collections: list[tuple[int, float, float]] = []  # generation, wall, CPU
_steps: collections.Counter[tuple[str, str]] = collections.Counter()
_step_cpu: dict[tuple[str, str], float] = collections.defaultdict(float)
_started = [0.0, 0.0]
_current: list[tuple[str, str, float]] = []  # callbacks run in the turn under way


def _where(task: asyncio.Task[Any]) -> str:
    """The innermost frame a task is suspended in: ``file:line:function``."""
    awaited: Any = task.get_coro()
    last = "?"
    while awaited is not None:
        frame = getattr(awaited, "cr_frame", None) or getattr(awaited, "gi_frame", None)
        frame = frame or getattr(awaited, "ag_frame", None)
        if frame is not None:
            code = frame.f_code
            last = f"{Path(code.co_filename).name}:{frame.f_lineno}:{code.co_name}"
        awaited = getattr(awaited, "cr_await", None) or getattr(awaited, "gi_yieldfrom", None)
    return last


def _collected(phase: str, info: dict[str, int]) -> None:
    if phase == "start":
        _started[:] = time.perf_counter(), time.thread_time()
    else:
        wall, cpu = time.perf_counter() - _started[0], time.thread_time() - _started[1]
        _collections.append((info["generation"], wall, cpu))


def _instrument() -> Callable[[], None]:
    """Wrap the loop's turn and callbacks; returns what undoes it."""
    run_once = asyncio.base_events.BaseEventLoop._run_once  # type: ignore[attr-defined]
    handle_run = asyncio.events.Handle._run

    def timed_turn(loop: Any) -> None:
        _current.clear()
        seen = len(_collections)
        wall, cpu = time.perf_counter(), time.thread_time()
        run_once(loop)
        wall, cpu = time.perf_counter() - wall, time.thread_time() - cpu
        pauses = [(g, round(c * 1e3, 1)) for g, _, c in _collections[seen:]]
        _turns.append((wall, cpu, list(_current), pauses))

    def timed_callback(handle: asyncio.Handle) -> None:
        owner = getattr(handle._callback, "__self__", None)  # type: ignore[attr-defined]
        task = owner if isinstance(owner, asyncio.Task) else None
        before = _where(task) if task is not None else type(owner).__name__
        cpu = time.thread_time()
        handle_run(handle)
        cpu = time.thread_time() - cpu
        after = "" if task is None else ("done" if task.done() else _where(task))
        _current.append((before, after, cpu))
        _steps[(before, after)] += 1
        _step_cpu[(before, after)] += cpu

    asyncio.base_events.BaseEventLoop._run_once = timed_turn  # type: ignore[attr-defined]
    asyncio.events.Handle._run = timed_callback  # type: ignore[method-assign,assignment]
    gc.callbacks.append(_collected)

    def undo() -> None:
        asyncio.base_events.BaseEventLoop._run_once = run_once  # type: ignore[attr-defined]
        asyncio.events.Handle._run = handle_run  # type: ignore[method-assign]
        gc.callbacks.remove(_collected)

    return undo


def _held(callbacks: list[tuple[str, str, float]]) -> None:
    """What a long turn held: its three costliest kinds of step (a wave of sessions woken
    together shows as one kind, many times)."""
    kinds: dict[tuple[str, str], list[float]] = collections.defaultdict(list)
    for before, after, cpu in callbacks:
        kinds[(before, after)].append(cpu)
    for (before, after), cpus in sorted(kinds.items(), key=lambda kv: -sum(kv[1]))[:3]:
        print(
            f"    held {sum(cpus) * 1e3:.1f} ms: {len(cpus)} x {before} -> {after or '(callback)'}"
        )


def _quantile(values: list[float], q: float) -> float:
    return sorted(values)[round(q * (len(values) - 1))]


async def main_async(args: argparse.Namespace) -> None:
    SHARED_POOL.configure(max_in_flight=100)
    child, base_url = start_server()
    try:
        with tempfile.TemporaryDirectory(prefix="rho-bench-stalls-") as tmp:
            workdir = Path(tmp) / "work"
            workdir.mkdir()
            for i in range(20):
                (workdir / f"file{i}.txt").write_text("x")
            agent = make_agent(base_url, workdir)
            store = FileSessionStore(Path(tmp) / "sessions") if args.store == "files" else None
            await run_once(agent, store)
            undo = _instrument()
            try:
                result = await many_sessions(agent, args.sessions, store, freeze=not args.no_freeze)
            finally:
                undo()
            await SHARED_POOL.aclose()
    finally:
        assert child.stdin is not None
        child.stdin.close()
        child.wait(10)
    _report(args, result)


def _report(args: argparse.Namespace, result: dict[str, float]) -> None:
    print(
        f"{args.sessions} sessions ({args.store}): {result['wall_s']:.1f} s, longest loop "
        f"stall {result['stall_ms']:.0f} ms, {result['stalls_over_50ms']:.0f} ticks over 50 ms"
    )
    cpus = [t[1] * 1e3 for t in _turns]
    print(
        f"  turns of the loop: {len(_turns)}; CPU per turn p50 {_quantile(cpus, 0.5):.2f}, "
        f"p99 {_quantile(cpus, 0.99):.1f}, p99.9 {_quantile(cpus, 0.999):.1f}, "
        f"max {max(cpus):.1f} ms"
    )
    for wall, cpu, callbacks, pauses in sorted(_turns, key=lambda t: -t[1])[:5]:
        print(
            f"  a turn of {cpu * 1e3:.1f} ms CPU ({wall * 1e3:.1f} ms wall): {len(callbacks)} "
            f"callbacks, collections in it (generation, ms CPU): {pauses}"
        )
        _held(callbacks)
    for generation in range(3):
        walls = [wall for g, wall, _ in _collections if g == generation]
        cpus = [cpu for g, _, cpu in _collections if g == generation]
        if cpus:
            print(
                f"  generation {generation}: {len(cpus)} collections, CPU {sum(cpus) * 1e3:.0f} "
                f"ms in all, longest {max(cpus) * 1e3:.1f} ms (wall {max(walls) * 1e3:.1f})"
            )
    print("  the steps that cost most CPU (where a task resumed -> where it stopped):")
    for key, cpu in sorted(_step_cpu.items(), key=lambda kv: -kv[1])[:8]:
        n = _steps[key]
        print(f"    {cpu * 1e3:6.0f} ms, {n:5d} x {cpu / n * 1e6:5.0f} us  {key[0]} -> {key[1]}")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--store", choices=["memory", "files"], default="memory")
    parser.add_argument(
        "--no-freeze", action="store_true", help="start the runtime without freeze_start_up"
    )
    asyncio.run(main_async(parser.parse_args(argv)))


if __name__ == "__main__":
    main()
