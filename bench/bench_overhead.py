"""Harness overhead, as LLM gateways report theirs: our run beside raw httpx on the same server.

Two loopback agent servers in child processes (``bench/loopback_agent_server.py``): one answers
with 50 streamed deltas, one with ``--long`` deltas (default 1,000); each first asks for a
``list`` tool call. A round runs, alternating against each server:

- the floor, in this process: a kept-alive ``httpx.AsyncClient`` POSTing the run's two
  request bodies and reading both streams line by line (no parsing, no tool);
- our run, in a worker process of its own (this script with ``--worker``), one run per
  round when this process asks for it: ``Session(agent)`` as a service builds it (the
  ``Agent(config)`` built once, a new Session per run), the default wiring (the shared client
  pool, the real ``LocalExecutor`` listing 20 real files);
- with ``--against OTHER/src``, the same run by a second worker importing that tree (e.g.
  ``git archive`` of an earlier commit unpacked): before and after alternate round by round.

Reported: median and spread (quartiles) per run of the wall time and of the worker's CPU time
(``time.process_time``, which the other processes on the cores move less), the ratio to the
floor, the milliseconds a run adds, and the microseconds each streamed delta adds ((added at
long - added at 50) / (long - 50)), with the load average before and after.

Usage: python bench/bench_overhead.py [--runs 100] [--long 1000] [--warm-up 10]
    [--against OTHER/src]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).parent))
from bench_sessions import PROMPT, floor_requests, make_agent
from loopback_agent_server import next_reply, start_server

from rho_adapters.fakes.loopback import LoopbackServer
from rho_adapters.model import SHARED_POOL
from rho_entry import Agent, Session


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


async def worker(urls: dict[int, str], workdir: Path) -> None:
    """``--worker``: for each line ``DELTAS`` on stdin, one run against that server; print
    ``wall_ms cpu_ms`` (after checking the answer)."""
    agents = {deltas: make_agent(url, workdir) for deltas, url in urls.items()}
    loop = asyncio.get_running_loop()
    while line := await loop.run_in_executor(None, sys.stdin.readline):
        deltas = int(line)
        started, cpu = time.perf_counter(), time.process_time()
        text = await _ours(agents[deltas])
        wall_ms, cpu_ms = (time.perf_counter() - started) * 1e3, (time.process_time() - cpu) * 1e3
        assert text.count("word") == deltas, text[:80]
        print(f"{wall_ms} {cpu_ms}", flush=True)
    await SHARED_POOL.aclose()


def _start_worker(src: str, urls: dict[int, str], workdir: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": src}
    return subprocess.Popen(
        [sys.executable, __file__, "--worker", json.dumps(urls), str(workdir)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )


def _ask(child: subprocess.Popen[str], deltas: int) -> tuple[float, float]:
    assert child.stdin is not None
    assert child.stdout is not None
    child.stdin.write(f"{deltas}\n")
    child.stdin.flush()
    wall, cpu = child.stdout.readline().split()
    return float(wall), float(cpu)


def _quartiles(values: list[float]) -> str:
    q1, _, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return f"{statistics.median(values):7.2f} ms ({q1:.2f}-{q3:.2f})"


async def main_async(args: argparse.Namespace) -> None:
    runs, long, against, warm_up = args.runs, args.long, args.against, args.warm_up
    servers = {50: start_server("50"), long: start_server(str(long))}
    urls = {deltas: url for deltas, (_, url) in servers.items()}
    load = os.getloadavg()[0]
    trees = {"ours": str(Path(__file__).resolve().parents[1] / "src")}
    if against:
        trees["against"] = str(Path(against).resolve())
    times: dict[tuple[int, str], list[float]] = {}
    try:
        with tempfile.TemporaryDirectory(prefix="rho-bench-overhead-") as tmp:
            workdir = Path(tmp)
            for i in range(20):
                (workdir / f"file{i}.txt").write_text("x")
            bodies = await _bodies(workdir)
            workers = {name: _start_worker(src, urls, workdir) for name, src in trees.items()}
            async with httpx.AsyncClient() as client:
                for round_ in range(runs + warm_up):
                    for deltas, base_url in urls.items():
                        started, cpu = time.perf_counter(), time.process_time()
                        await floor_requests(client, base_url + "/chat/completions", bodies)
                        floor_ms = (time.perf_counter() - started) * 1e3
                        floor_cpu = (time.process_time() - cpu) * 1e3
                        order = list(workers) if round_ % 2 == 0 else list(workers)[::-1]
                        measured = {name: _ask(workers[name], deltas) for name in order}
                        if round_ >= warm_up:
                            times.setdefault((deltas, "floor"), []).append(floor_ms)
                            times.setdefault((deltas, "floor cpu"), []).append(floor_cpu)
                            for name, (wall, cpu) in measured.items():
                                times.setdefault((deltas, name), []).append(wall)
                                times.setdefault((deltas, name + " cpu"), []).append(cpu)
            for child in workers.values():
                assert child.stdin is not None
                child.stdin.close()
                child.wait(10)
    finally:
        for child, _ in servers.values():
            assert child.stdin is not None
            child.stdin.close()
            child.wait(10)
    print(f"load average {load:.1f} -> {os.getloadavg()[0]:.1f}; {runs} rounds after {warm_up}")
    for name, src in trees.items():
        print(f"{name}: {src}")
    print(
        f"{'answer':>14}  {'tree':>7}  clock  {'raw httpx floor':>26}  {'our run':>26}  "
        "ratio  added"
    )
    for name in trees:
        for clock in ("wall", "cpu"):
            suffix = "" if clock == "wall" else " cpu"
            added = {}
            for deltas in servers:
                floor, ours = times[(deltas, "floor" + suffix)], times[(deltas, name + suffix)]
                added[deltas] = statistics.median(ours) - statistics.median(floor)
                ratio = statistics.median(ours) / statistics.median(floor)
                print(
                    f"{deltas:>7} deltas  {name:>7}  {clock:>5}  {_quartiles(floor):>26}  "
                    f"{_quartiles(ours):>26}  {ratio:4.2f}x  {added[deltas]:+.2f} ms"
                )
            per_delta = (added[long] - added[50]) / (long - 50) * 1e3
            print(
                f"{name} ({clock}): added per run (50 deltas): {added[50]:.2f} ms; "
                f"per streamed delta: {per_delta:.1f} µs"
            )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--long", type=int, default=1000)
    parser.add_argument("--warm-up", type=int, default=10, help="rounds before the timed ones")
    parser.add_argument("--against", metavar="SRC", help="another tree's src/, in the same rounds")
    parser.add_argument("--worker", nargs=2, metavar=("URLS", "WORKDIR"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        urls = {int(deltas): url for deltas, url in json.loads(args.worker[0]).items()}
        asyncio.run(worker(urls, Path(args.worker[1])))
        return
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
