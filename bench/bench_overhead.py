"""Harness overhead, as LLM gateways report theirs: our run beside raw httpx on the same server.

Two loopback agent servers in child processes (``bench/loopback_agent_server.py``): one answers
with 50 streamed deltas, one with ``--long`` deltas (default 1,000); each first asks for a
``list`` tool call. A round runs, alternating in this process against each server:

- the floor: a kept-alive ``httpx.AsyncClient`` POSTing the run's two request bodies and
  reading both streams line by line (no parsing, no tool);
- our run: ``Session(agent)`` as a service builds it (the ``Agent(config)`` built once, a new
  Session per run), the default wiring (the shared client pool, the real ``LocalExecutor``
  listing 20 real files).

Reported: median and spread (quartiles) per run, the ratio to the floor, the milliseconds our
run adds, and the microseconds each streamed delta adds ((added at long - added at 50) /
(long - 50)), with the load average before and after.

Usage: python bench/bench_overhead.py [--runs 100] [--long 1000]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).parent))
from bench_sessions import PROMPT, _floor, make_agent, start_server
from loopback_agent_server import next_reply

from rho_adapters.fakes.loopback import LoopbackServer
from rho_adapters.model import SHARED_POOL
from rho_entry import Agent, Session

WARM_UP = 10


async def _bodies(workdir: Path) -> list[dict[str, object]]:
    """The two request bodies of one run as our run sends them (the first request, then the
    one carrying the tool result), captured by an in-process server."""
    with LoopbackServer([], rules=[next_reply]) as server:
        async with Session(make_agent(server.base_url, workdir)) as session:
            await session.run(PROMPT)
        return [dict(server.requests[0]), dict(server.requests[1])]


async def _ours(agent: Agent) -> str:
    async with Session(agent) as session:
        return (await session.run(PROMPT)).text


def _quartiles(values: list[float]) -> str:
    q1, _, q3 = statistics.quantiles(values, n=4)
    return f"{statistics.median(values):7.2f} ms ({q1:.2f}-{q3:.2f})"


async def main_async(runs: int, long: int) -> None:
    servers = {50: start_server("50"), long: start_server(str(long))}
    load = os.getloadavg()[0]
    try:
        with tempfile.TemporaryDirectory(prefix="rho-bench-overhead-") as tmp:
            workdir = Path(tmp)
            for i in range(20):
                (workdir / f"file{i}.txt").write_text("x")
            bodies = await _bodies(workdir)
            agents = {deltas: make_agent(url, workdir) for deltas, (_, url) in servers.items()}
            times: dict[tuple[int, str], list[float]] = {}
            async with httpx.AsyncClient() as client:
                for round_ in range(runs + WARM_UP):
                    for deltas, (_, base_url) in servers.items():
                        started = time.perf_counter()
                        await _floor(client, base_url + "/chat/completions", bodies)
                        middle = time.perf_counter()
                        text = await _ours(agents[deltas])
                        ended = time.perf_counter()
                        assert text.count("word") == deltas, text[:80]
                        if round_ >= WARM_UP:
                            floor_ms, ours_ms = (middle - started) * 1e3, (ended - middle) * 1e3
                            times.setdefault((deltas, "floor"), []).append(floor_ms)
                            times.setdefault((deltas, "ours"), []).append(ours_ms)
            await SHARED_POOL.aclose()
    finally:
        for child, _ in servers.values():
            assert child.stdin is not None
            child.stdin.close()
            child.wait(10)
    print(f"load average {load:.1f} -> {os.getloadavg()[0]:.1f}; {runs} rounds after {WARM_UP}")
    print(f"{'answer':>14}  {'raw httpx floor':>26}  {'our run':>26}  ratio  added")
    added = {}
    for deltas in servers:
        floor, ours = times[(deltas, "floor")], times[(deltas, "ours")]
        added[deltas] = statistics.median(ours) - statistics.median(floor)
        ratio = statistics.median(ours) / statistics.median(floor)
        print(
            f"{deltas:>7} deltas  {_quartiles(floor):>26}  {_quartiles(ours):>26}  "
            f"{ratio:4.2f}x  {added[deltas]:+.2f} ms"
        )
    per_delta = (added[long] - added[50]) / (long - 50) * 1e3
    print(f"added per run (50 deltas): {added[50]:.2f} ms; per streamed delta: {per_delta:.1f} µs")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--long", type=int, default=1000)
    args = parser.parse_args()
    asyncio.run(main_async(args.runs, args.long))


if __name__ == "__main__":
    main()
