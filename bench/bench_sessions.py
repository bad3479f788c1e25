"""Service benchmark: a new Session per request, and 1,000 sessions at once, over real HTTP.

The model endpoint is ``bench/loopback_agent_server.py`` in another process (a real socket on
127.0.0.1): every session gets a ``list`` tool call, then a 50-delta text answer. Sessions are
built as a service builds them: the facade's ``Session(Agent(config))`` with the default
model (``build_model`` through the wiring, so the process's shared client pool) and a real
``LocalExecutor`` on a directory of 20 files.

1. **New Session per run** vs the raw-httpx floor, alternating rounds in this process: one
   facade run (two streamed calls + ``list``) with a NEW Session (and model and executor)
   each time, once with the real ``LocalExecutor`` and once with a ``MemoryExecutor`` (the
   tool cost of bench_model.py); the floor is a kept-alive ``httpx.AsyncClient`` POSTing the
   same two request bodies and reading both streams line by line.
2. **Many sessions at once**: ``--sessions`` prompts dispatched through the runtime API
   (``create_runtime`` / ``start_runtime`` / ``dispatch_prompt``, one handle per session,
   ``max_concurrent`` = the number of sessions), without a store and then file-backed
   (``FileSessionStore`` in a temporary directory); all must complete. Threads are sampled
   during the run, and the event loop's longest stall (``AgentRuntime.stats().loop_lag``, a
   10 ms timer), and the CPU time of the process (all threads) and of the loop's thread.
   Then the same number of file-backed sessions are opened, run once and left
   open, to measure resident memory per idle open session (RSS from /proc/self/statm, after
   ``gc.collect()``).

   Each turn of the loop is timed too (wall and the loop thread's CPU; a wrapper of
   ``BaseEventLoop._run_once``, about a microsecond a turn): the gauge gives the longest
   stall, the turns give its distribution (p50 / p99 / max), and the same for the loop's
   own work (a turn's CPU less the collections inside it).

   The runtimes start as a service whose start-up is over starts them
   (``start_runtime(..., freeze_start_up=True)``: the start-up heap frozen, out of every
   full collection's walk) where the tree has it; ``--no-freeze`` starts them without.

Usage: python bench/bench_sessions.py [--runs 200] [--sessions 1000] [--in-flight 100]
    [--warm-up 10] [--idle-seconds 3] [--no-freeze] [--file-backed-only]
"""

from __future__ import annotations

import argparse
import asyncio
import asyncio.base_events
import gc
import inspect
import itertools
import os
import resource
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import httpx

from rho_adapters.fakes import MemoryExecutor
from rho_adapters.fakes.loopback import LoopbackServer
from rho_adapters.loop_lag import LoopLag
from rho_adapters.model import SHARED_POOL
from rho_adapters.store import FileSessionStore
from rho_domain.ports.executor import Executor
from rho_entry import Agent, AgentConfig, Session
from rho_entry.runtime import close_runtime, create_runtime, dispatch_prompt, start_runtime

sys.path.insert(0, str(Path(__file__).parent))
from loopback_agent_server import ANSWER, next_reply, start_server

PROMPT = "What is here?"


def make_agent(base_url: str, workdir: Path) -> Agent:
    """The agent every benchmark session runs (readonly profile, the default model stack)."""
    return Agent(AgentConfig(model="fake-model", base_url=base_url, working_dir=str(workdir)))


async def request_bodies(workdir: Path) -> list[dict[str, object]]:
    """The two request bodies of one facade run, captured by an in-process server."""
    with LoopbackServer([], rules=[next_reply]) as server:
        result = await run_once(make_agent(server.base_url, workdir))
        assert result == ANSWER
        return [dict(server.requests[0]), dict(server.requests[1])]


async def run_once(
    agent: Agent, store: FileSessionStore | None = None, executor: Executor | None = None
) -> str:
    async with Session(agent, store=store, executor=executor) as session:
        return (await session.run(PROMPT)).text


async def floor_requests(
    client: httpx.AsyncClient, url: str, bodies: list[dict[str, object]]
) -> None:
    for body in bodies:
        async with client.stream("POST", url, json=body) as response:
            async for _line in response.aiter_lines():
                pass


async def new_session_per_run(
    agent: Agent, base_url: str, bodies: list[dict[str, object]], runs: int, warm_up: int
) -> dict[str, float]:
    """Median ms of the floor and of a facade run with a new Session (real LocalExecutor, and
    a MemoryExecutor as in bench_model.py), alternating; ratios to the floor."""
    url = base_url + "/chat/completions"
    times: dict[str, list[float]] = {"floor": [], "local": [], "memory": []}
    files = {f"file{i}.txt": "x" for i in range(20)}
    created = SHARED_POOL.clients_created
    async with httpx.AsyncClient() as client:
        for round_ in range(runs + warm_up):
            started = time.perf_counter()
            await floor_requests(client, url, bodies)
            floor_end = time.perf_counter()
            assert await run_once(agent) == ANSWER
            local_end = time.perf_counter()
            assert await run_once(agent, executor=MemoryExecutor(files)) == ANSWER
            memory_end = time.perf_counter()
            if round_ >= warm_up:
                times["floor"].append(floor_end - started)
                times["local"].append(local_end - floor_end)
                times["memory"].append(memory_end - local_end)
    ms = {name: statistics.median(values) * 1e3 for name, values in times.items()}
    return {
        **{f"{name}_ms": value for name, value in ms.items()},
        "local_ratio": ms["local"] / ms["floor"],
        "memory_ratio": ms["memory"] / ms["floor"],
        "clients_created": SHARED_POOL.clients_created - created,
    }


def can_freeze() -> bool:
    """Whether this tree's ``start_runtime`` takes ``freeze_start_up`` (stall17 on)."""
    return "freeze_start_up" in inspect.signature(start_runtime).parameters


class TurnTimes:
    """Every turn of the event loop timed while inside: wall and CPU (``time.thread_time``)
    seconds, the CPU of the collections inside it, and their p50 / p99 / max in ms. Patches
    ``BaseEventLoop._run_once`` for this process (a benchmark's instrument, never the
    library's)."""

    def __init__(self) -> None:
        self.walls: list[float] = []
        self.cpus: list[float] = []
        self.own: list[float] = []  # a turn's CPU less its collections'
        self._collecting = [0.0, 0.0]  # the current collection's start, this turn's total

    def _collected(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._collecting[0] = time.thread_time()
        else:
            self._collecting[1] += time.thread_time() - self._collecting[0]

    def __enter__(self) -> TurnTimes:
        base = asyncio.base_events.BaseEventLoop
        self._run_once = run_once = base._run_once  # type: ignore[attr-defined]
        walls, cpus, own, collecting = self.walls, self.cpus, self.own, self._collecting
        perf, thread = time.perf_counter, time.thread_time

        def timed(loop: asyncio.AbstractEventLoop) -> None:
            collecting[1] = 0.0
            wall, cpu = perf(), thread()
            run_once(loop)
            walls.append(perf() - wall)
            cpu = thread() - cpu
            cpus.append(cpu)
            own.append(cpu - collecting[1])

        base._run_once = timed  # type: ignore[attr-defined]
        gc.callbacks.append(self._collected)
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.base_events.BaseEventLoop._run_once = self._run_once  # type: ignore[attr-defined]
        gc.callbacks.remove(self._collected)

    def summary(self) -> dict[str, float]:
        """Turns, and the wall, CPU and own CPU of a turn at p50 / p99 / max, in ms; and the
        most two adjacent turns took together (``pair_*_max_ms``): a timer that falls due
        during one turn runs only after the next turn's earlier callbacks (asyncio queues a
        due timer behind what the last turn woke and behind the new I/O callbacks), so the
        gauge's longest stall is bounded by two turns, not one."""
        out: dict[str, float] = {"turns": len(self.walls)}
        for name, values in (("wall", self.walls), ("cpu", self.cpus), ("own", self.own)):
            ordered = sorted(values)
            for label, q in (("p50", 0.5), ("p99", 0.99), ("max", 1.0)):
                value = ordered[round(q * (len(ordered) - 1))] if ordered else 0.0
                out[f"turn_{name}_{label}_ms"] = value * 1e3
            pairs = [a + b for a, b in itertools.pairwise(values)]
            out[f"pair_{name}_max_ms"] = max(pairs, default=0.0) * 1e3
        return out


async def many_sessions(
    agent: Agent, n: int, store: FileSessionStore | None, *, freeze: bool = False
) -> dict[str, float]:
    """Dispatch ``n`` sessions at once through the runtime API; wall seconds, how many
    completed, most threads seen. ``freeze``: start the runtime as a service whose start-up
    is over (``start_runtime(..., freeze_start_up=True)``, where the tree has it)."""
    runtime = create_runtime(agent, store=store, max_concurrent=n, max_queued=n)
    if freeze and can_freeze():
        await start_runtime(runtime, freeze_start_up=True)  # type: ignore[call-arg,unused-ignore]
    else:
        await start_runtime(runtime)
    most_threads = threading.active_count()
    done = asyncio.Event()

    async def sample() -> None:
        nonlocal most_threads
        while not done.is_set():
            most_threads = max(most_threads, threading.active_count())
            await asyncio.sleep(0.05)

    sampler = asyncio.create_task(sample())
    started = time.perf_counter()
    loop_cpu, process_cpu = time.thread_time(), _process_cpu()
    with TurnTimes() as turns:
        handles = [await dispatch_prompt(runtime, PROMPT, new_session=True) for _ in range(n)]
        results = await asyncio.gather(*(h.wait() for h in handles), return_exceptions=True)
    wall = time.perf_counter() - started
    loop_cpu, process_cpu = time.thread_time() - loop_cpu, _process_cpu() - process_cpu
    lag = runtime.stats().loop_lag
    done.set()
    await sampler
    await close_runtime(runtime)
    completed = sum(1 for r in results if not isinstance(r, BaseException) and r.text == ANSWER)
    failed = [r for r in results if isinstance(r, BaseException)]
    if failed:
        print(f"  {len(failed)} failed, e.g. {failed[0]!r}")
    return {
        "wall_s": wall,
        "completed": completed,
        "threads": most_threads,
        "stall_ms": lag.longest_stall_seconds * 1000,
        "stalls_over_50ms": lag.stalls_over_50ms,
        "loop_cpu_s": loop_cpu,
        "cpu_s": process_cpu,
        # the collector's pauses, from a gauge that times them (a tree before it: -1)
        "longest_collection_ms": getattr(lag, "longest_collection_seconds", -0.001) * 1000,
        "full_collections": getattr(lag, "full_collections", -1),
        "collector_ms": getattr(lag, "collector_seconds", -0.001) * 1000,
        **turns.summary(),
    }


def _process_cpu() -> float:
    """User + system CPU seconds of this process so far, every thread."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def idle_loop_stall(seconds: float) -> float:
    """The longest stall of this process's loop doing nothing for ``seconds``: the floor the
    machine's load sets for the gauge (a busy machine deschedules an idle process too)."""
    lag = LoopLag()
    lag.start()
    await asyncio.sleep(seconds)
    lag.stop()
    return lag.stats().longest_stall_seconds * 1000


def rss_bytes() -> int:
    """Resident set size of this process."""
    with open("/proc/self/statm", encoding="ascii") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


async def idle_sessions(agent: Agent, n: int, store: FileSessionStore) -> dict[str, float]:
    """RSS per file-backed session that ran once and is still open; threads while open."""
    await run_once(agent, store)  # warm: imports, pool, store directory
    gc.collect()
    before = rss_bytes()
    sessions = [Session(agent, store=store) for _ in range(n)]
    for chunk in range(0, n, 100):
        await asyncio.gather(*(s.run(PROMPT) for s in sessions[chunk : chunk + 100]))
    gc.collect()
    after = rss_bytes()
    threads = threading.active_count()
    for session in sessions:
        await session.close()
    return {"per_session_kib": (after - before) / n / 1024, "threads_open": threads}


async def _many(
    agent: Agent, n: int, tmp: Path, args: argparse.Namespace
) -> dict[str, dict[str, float]]:
    """Part 2's runs by name: the idle sessions' RSS, the idle loop's stall and ``n`` sessions
    in memory, then ``n`` file-backed; only the last with ``--file-backed-only`` (a bisect's
    measure: the same process state whichever tree it runs)."""
    freeze = not args.no_freeze and can_freeze()
    runs: dict[str, dict[str, float]] = {}
    if not args.file_backed_only:
        # First, while the heap has not grown yet: RSS of sessions left open.
        idle = await idle_sessions(agent, n, FileSessionStore(tmp / "idle"))
        kib, threads = idle["per_session_kib"], idle["threads_open"]
        print(
            f"{n} idle open file-backed sessions: {kib:.1f} KiB RSS each "
            f"(goal <= 100 KiB); threads while open {threads:.0f}"
        )
        idle_stall = await idle_loop_stall(args.idle_seconds)
        print(
            f"longest stall of an idle event loop over {args.idle_seconds:g} s: {idle_stall:.0f} ms"
        )
        print(f"start-up heap frozen when the runtime starts: {freeze}")
        memory = runs["in memory"] = await many_sessions(agent, n, None, freeze=freeze)
        print(
            f"{n} sessions at once, in memory: {memory['completed']:.0f} completed in "
            f"{memory['wall_s']:.1f} s; threads at most {memory['threads']:.0f}; "
            f"longest loop stall {memory['stall_ms']:.0f} ms, "
            f"{memory['stalls_over_50ms']:.0f} ticks over 50 ms; CPU "
            f"{memory['cpu_s']:.1f} s ({memory['loop_cpu_s']:.1f} s on the loop's thread)"
        )
    else:
        await run_once(agent)  # warm: imports, pool
    store = FileSessionStore(tmp / "sessions")
    runs["file-backed"] = await many_sessions(agent, n, store, freeze=freeze)
    return runs


def _against_memory(runs: dict[str, dict[str, float]]) -> str:
    """`` (1.45x in memory; goal <= 3x)`` when the in-memory run was made."""
    if "in memory" not in runs:
        return ""
    ratio = runs["file-backed"]["wall_s"] / runs["in memory"]["wall_s"]
    return f" ({ratio:.2f}x in memory; goal <= 3x)"


async def main_async(args: argparse.Namespace) -> None:
    SHARED_POOL.configure(max_in_flight=args.in_flight)
    child, base_url = start_server()
    try:
        with tempfile.TemporaryDirectory(prefix="rho-bench-sessions-") as tmp:
            workdir = Path(tmp) / "work"
            workdir.mkdir()
            for i in range(20):
                (workdir / f"file{i}.txt").write_text("x")
            agent = make_agent(base_url, workdir)
            if args.runs:
                bodies = await request_bodies(workdir)
                one = await new_session_per_run(agent, base_url, bodies, args.runs, args.warm_up)
                floor_ms = one["floor_ms"]
                print(f"floor (raw httpx, kept-alive client, same 2 streams): {floor_ms:.2f} ms")
                print(
                    f"new Session per run, MemoryExecutor: {one['memory_ms']:.2f} ms = "
                    f"{one['memory_ratio']:.2f}x floor (goal <= 1.5x)"
                )
                print(
                    f"new Session per run, LocalExecutor: {one['local_ms']:.2f} ms = "
                    f"{one['local_ratio']:.2f}x floor"
                )
                print(f"pooled model clients created over all runs: {one['clients_created']:.0f}")
            if args.sessions:
                n = args.sessions
                runs = await _many(agent, n, Path(tmp), args)
                files = runs["file-backed"]
                print(
                    f"{n} sessions at once, file-backed: {files['completed']:.0f} completed in "
                    f"{files['wall_s']:.1f} s{_against_memory(runs)}; threads at most "
                    f"{files['threads']:.0f}"
                )
                print(
                    f"  longest event-loop stall {files['stall_ms']:.0f} ms (goal < 50 ms), "
                    f"{files['stalls_over_50ms']:.0f} ticks over 50 ms "
                    "(AgentRuntime.stats().loop_lag); CPU "
                    f"{files['cpu_s']:.1f} s ({files['loop_cpu_s']:.1f} s on the loop's thread)"
                )
                for name, run in runs.items():
                    print(
                        f"  the collector, {name}: longest pause "
                        f"{run['longest_collection_ms']:.0f} ms, {run['full_collections']:.0f} "
                        f"full passes, {run['collector_ms']:.0f} ms in all"
                    )
                    print(
                        f"  turns of the loop, {name}: {run['turns']:.0f}; wall p50 "
                        f"{run['turn_wall_p50_ms']:.2f}, p99 {run['turn_wall_p99_ms']:.1f}, max "
                        f"{run['turn_wall_max_ms']:.1f} ms; CPU p50 {run['turn_cpu_p50_ms']:.2f}, "
                        f"p99 {run['turn_cpu_p99_ms']:.1f}, max {run['turn_cpu_max_ms']:.1f} ms; "
                        f"without the collector's: p50 {run['turn_own_p50_ms']:.2f}, p99 "
                        f"{run['turn_own_p99_ms']:.1f}, max {run['turn_own_max_ms']:.1f} ms"
                    )
                    print(
                        f"  two adjacent turns at most, {name} (what the gauge's tick can wait "
                        f"through): wall {run['pair_wall_max_ms']:.1f}, CPU "
                        f"{run['pair_cpu_max_ms']:.1f}, without the collector's "
                        f"{run['pair_own_max_ms']:.1f} ms"
                    )
                for stats in SHARED_POOL.stats():
                    gate = stats.gate
                    mean = gate.wait_seconds / max(gate.waited, 1)
                    print(
                        f"  in-flight gate (limit {gate.limit}): {gate.requests} requests, "
                        f"{gate.waited} queued, mean wait {mean:.2f} s, "
                        f"longest {gate.max_wait_seconds:.2f} s"
                    )
            await SHARED_POOL.aclose()
    finally:
        assert child.stdin is not None
        child.stdin.close()
        child.wait(10)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200, help="rounds of part 1 (0: skip)")
    parser.add_argument("--sessions", type=int, default=1000, help="sessions of part 2 (0: skip)")
    parser.add_argument(
        "--in-flight", type=int, default=100, help="requests in flight per endpoint"
    )
    parser.add_argument("--warm-up", type=int, default=10, help="rounds of part 1 not timed")
    parser.add_argument(
        "--idle-seconds", type=float, default=3.0, help="how long the idle loop's stall is watched"
    )
    parser.add_argument(
        "--no-freeze",
        action="store_true",
        help="start the runtimes without freeze_start_up (a service that never freezes)",
    )
    parser.add_argument(
        "--file-backed-only",
        action="store_true",
        help="part 2 runs only the file-backed sessions (no idle sessions, no in-memory run)",
    )
    asyncio.run(main_async(parser.parse_args(argv)))


if __name__ == "__main__":
    main()
