"""The floor under a durable run's cost: what a bare commit costs on this machine, against
what DBOS spends on an empty step checkpoint and on an empty workflow (start to result).

A bare commit is one ``INSERT`` of a 900-byte row and its ``COMMIT``: ``sqlite3`` on a file in
write-ahead logging with ``synchronous=NORMAL`` (as the worker sets it), and ``psycopg`` on
the PostgreSQL of ``tests/db`` (``fsync=off``). DBOS's figures run in a ``DbosWorker`` as a
worker runs them: 100 empty workflows, then one workflow of 200 empty steps (``DbosSteps``),
five times; the wall time and this process's CPU time (every thread), medians.

Usage: python bench/bench_durable_floor.py [--rounds 5] [--commits 500] [--workflows 100]
    [--steps 200] [--no-postgres | --postgres URL]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The tests' database helpers; our sources from PYTHONPATH or the install, as every bench
# takes them (so --against-style runs measure the tree asked for), else this checkout's.
sys.path.insert(0, str(ROOT / "tests" / "db"))
if importlib.util.find_spec("rho_domain") is None:
    sys.path.insert(0, str(ROOT / "src"))

import attrs  # noqa: E402
from dbos import DBOS  # noqa: E402

from rho_adapters.durable.worker import DbosWorker, WorkerOptions  # noqa: E402
from rho_domain.ports.durable import CancelAsked, DurableSteps, QueuedRun  # noqa: E402
from rho_domain.run import new_id  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from bench_durable import empty_steps  # noqa: E402  (the same 100-step workflow)

ROW = "x" * 900


@attrs.frozen(kw_only=True)
class Sizes:
    """How much each measure does: ``rounds`` of ``commits`` bare commits, of ``workflows``
    empty workflows and of one workflow of ``steps`` empty steps."""

    rounds: int
    commits: int
    workflows: int
    steps: int


def commits(execute: Callable[[int], object], commit: Callable[[], object], size: Sizes) -> float:
    """Median milliseconds of one ``execute`` + ``commit``, over rounds x commits."""
    medians = []
    for _ in range(size.rounds):
        started = time.perf_counter()
        for index in range(size.commits):
            execute(index)
            commit()
        medians.append((time.perf_counter() - started) / size.commits * 1000)
    return statistics.median(medians)


def sqlite_commit(directory: str, size: Sizes) -> float:
    conn = sqlite3.connect(f"{directory}/commits.sqlite")
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("CREATE TABLE t (i INTEGER, v TEXT)")
    try:
        return commits(
            lambda i: conn.execute("INSERT INTO t VALUES (?, ?)", (i, ROW)), conn.commit, size
        )
    finally:
        conn.close()


def postgres_commit(url: str, size: Sizes) -> float:
    import psycopg

    with psycopg.connect(url) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS bench_commits (i INTEGER, v TEXT)")
        conn.commit()
        return commits(
            lambda i: conn.execute("INSERT INTO bench_commits VALUES (%s, %s)", (i, ROW)),
            conn.commit,
            size,
        )


@contextlib.contextmanager
def postgres_url(given: str | None) -> Iterator[str]:
    """``given``, else the URL of a PostgreSQL server of ``tests/db`` (``fsync=off``)."""
    if given is not None:
        yield given
        return
    from db_servers import running_postgres

    with running_postgres() as server:
        config = server.config
        yield f"postgresql://{config.user}@{config.host}:{config.port}/{config.database}"


@DBOS.workflow(name="bench.empty_workflow")
async def empty_workflow(value: int) -> int:
    """Nothing: the workflow's own start and end records."""
    return value


async def dbos_floor(url: str, size: Sizes) -> dict[str, tuple[float, float]]:
    """(wall, CPU) milliseconds of an empty workflow and of an empty step."""

    async def nothing(_: QueuedRun, __: DurableSteps, ___: CancelAsked) -> str:
        return "completed"

    worker = DbosWorker(
        WorkerOptions(url=url, app_version="bench", executor_id=f"floor-{new_id()}"), nothing
    )
    await worker.start()
    seen: dict[str, list[tuple[float, float]]] = {"workflow": [], "step": []}
    try:
        for _ in range(size.rounds):
            started, used = time.perf_counter(), time.process_time()
            for _ in range(size.workflows):
                await (await DBOS.start_workflow_async(empty_workflow, 1)).get_result()
            per_workflow = 1000 / size.workflows
            seen["workflow"].append(
                (
                    (time.perf_counter() - started) * per_workflow,
                    (time.process_time() - used) * per_workflow,
                )
            )
            started, used = time.perf_counter(), time.process_time()
            await (await DBOS.start_workflow_async(empty_steps, size.steps)).get_result()
            per_step = 1000 / size.steps
            seen["step"].append(
                (
                    (time.perf_counter() - started) * per_step,
                    (time.process_time() - used) * per_step,
                )
            )
    finally:
        await worker.stop()
    return {
        kind: (statistics.median(w for w, _ in values), statistics.median(c for _, c in values))
        for kind, values in seen.items()
    }


def report(name: str, commit: float, floor: dict[str, tuple[float, float]]) -> None:
    (workflow_wall, workflow_cpu), (step_wall, step_cpu) = floor["workflow"], floor["step"]
    print(
        f"{name}: bare INSERT+COMMIT {commit:.3f} ms; DBOS empty step {step_wall:.2f} ms wall, "
        f"{step_cpu:.2f} ms CPU; empty workflow {workflow_wall:.2f} ms wall, "
        f"{workflow_cpu:.2f} ms CPU",
        flush=True,
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--commits", type=int, default=500, help="bare commits a round")
    parser.add_argument("--workflows", type=int, default=100, help="empty workflows a round")
    parser.add_argument("--steps", type=int, default=200, help="steps of the workflow a round")
    parser.add_argument("--no-postgres", action="store_true")
    parser.add_argument(
        "--postgres", metavar="URL", help="a running server to use (else one starts)"
    )
    args = parser.parse_args(argv)
    size = Sizes(
        rounds=args.rounds, commits=args.commits, workflows=args.workflows, steps=args.steps
    )
    with tempfile.TemporaryDirectory(prefix="rho-bench-durable-floor-") as tmp:
        url = f"sqlite:///{tmp}/runs.sqlite"
        report("SQLite", sqlite_commit(tmp, size), asyncio.run(dbos_floor(url, size)))
    if not args.no_postgres:
        with postgres_url(args.postgres) as url:
            report("PostgreSQL", postgres_commit(url, size), asyncio.run(dbos_floor(url, size)))


if __name__ == "__main__":
    main()
