"""Where one run's time goes, phase by phase: the run of ``bench_overhead.py`` (a new
``Session(agent)`` per run, the default wiring, the real ``LocalExecutor`` listing 20 files)
against ``loopback_agent_server.py`` in a child process (a ``list`` tool call, then a 50-delta
answer).

Each phase runs from one of the run's events to the next, timed by a listener on the session's
journal: building the Session, ``run()`` to ``run_start``, to the first ``llm_start``, the model
calls (both summed), the tool (``tool_start`` to ``tool_end``), the end, closing. Medians and
quartiles in µs, with the load average before and after. Compare trees by running it with
each tree's ``src`` on ``PYTHONPATH``, alternately.

Usage: python bench/bench_run_phases.py [--runs 100] [--deltas 50] [--warm-up 20]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_sessions import PROMPT, make_agent
from loopback_agent_server import start_server

from rho_adapters.model import SHARED_POOL
from rho_domain import events as ev
from rho_entry import Session

MARKS = frozenset({"run_start", "llm_start", "llm_end", "tool_start", "tool_end", "run_end"})


async def _one(session: Session, marks: list[tuple[str, float]]) -> float:
    def listener(event: ev.Event) -> None:
        if event.kind in MARKS:
            marks.append((event.kind, time.perf_counter()))

    session.domain.journal.listeners.append(listener)
    async with session:
        await session.run(PROMPT)
        return time.perf_counter()


async def main_async(runs: int, deltas: int, warm_up: int) -> None:
    child, url = start_server(str(deltas))
    load = os.getloadavg()[0]
    phases: dict[str, list[float]] = {}
    try:
        with tempfile.TemporaryDirectory(prefix="rho-bench-phases-") as tmp:
            workdir = Path(tmp)
            for i in range(20):
                (workdir / f"file{i}.txt").write_text("x")
            agent = make_agent(url, workdir)
            for round_ in range(runs + warm_up):
                marks: list[tuple[str, float]] = []
                started = time.perf_counter()
                session = Session(agent)
                built = time.perf_counter()
                returned = await _one(session, marks)
                closed = time.perf_counter()
                if round_ < warm_up:
                    continue
                row = {"new Session": built - started}
                previous, name = built, "run()"
                for kind, at in marks:
                    key = f"{name} -> {kind}"
                    row[key] = row.get(key, 0.0) + at - previous
                    previous, name = at, kind
                row[f"{name} -> returned"] = returned - previous
                row["close"] = closed - returned
                row["whole run"] = closed - started
                for key, seconds in row.items():
                    phases.setdefault(key, []).append(seconds * 1e6)
            await SHARED_POOL.aclose()
    finally:
        assert child.stdin is not None
        child.stdin.close()
        child.wait(10)
    print(f"load average {load:.1f} -> {os.getloadavg()[0]:.1f}; {runs} runs after {warm_up}")
    for key, values in phases.items():
        q1, median, q3 = statistics.quantiles(values, n=4, method="inclusive")
        print(f"{key:28s} {median:8.0f} µs  ({q1:.0f}-{q3:.0f})")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--deltas", type=int, default=50)
    parser.add_argument("--warm-up", type=int, default=20, help="runs before the timed ones")
    args = parser.parse_args(argv)
    asyncio.run(main_async(args.runs, args.deltas, args.warm_up))


if __name__ == "__main__":
    main()
