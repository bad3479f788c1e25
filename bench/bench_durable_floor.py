"""The floor under a durable run's cost: what a bare commit costs on this machine, against
what DBOS spends on an empty step checkpoint and on an empty workflow (start to result).

A bare commit is one ``INSERT`` of a 900-byte row and its ``COMMIT``: ``sqlite3`` on a file in
write-ahead logging with ``synchronous=NORMAL`` (as the worker sets it), and ``psycopg`` on
the PostgreSQL of ``tests/db`` (``fsync=off``). DBOS's figures run in a ``DbosWorker`` as a
worker runs them: 100 empty workflows, then one workflow of 200 empty steps (``DbosSteps``),
five times; the wall time and this process's CPU time (every thread), medians.

Usage: python bench/bench_durable_floor.py [--no-postgres]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests" / "db")]

from dbos import DBOS  # noqa: E402

from rho_adapters.durable.worker import DbosWorker, WorkerOptions  # noqa: E402
from rho_domain.ports.durable import DurableSteps, QueuedRun  # noqa: E402
from rho_domain.run import new_id  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from bench_durable import empty_steps  # noqa: E402  (the same 100-step workflow)

ROW = "x" * 900


def commits(execute: Callable[[int], object], commit: Callable[[], object]) -> float:
    """Median milliseconds of one ``execute`` + ``commit``, over 5 x 500."""
    medians = []
    for _ in range(5):
        started = time.perf_counter()
        for index in range(500):
            execute(index)
            commit()
        medians.append((time.perf_counter() - started) / 500 * 1000)
    return statistics.median(medians)


def sqlite_commit() -> float:
    conn = sqlite3.connect(f"{tempfile.mkdtemp()}/commits.sqlite")
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("CREATE TABLE t (i INTEGER, v TEXT)")
    try:
        return commits(lambda i: conn.execute("INSERT INTO t VALUES (?, ?)", (i, ROW)), conn.commit)
    finally:
        conn.close()


def postgres_commit(url: str) -> float:
    import psycopg

    with psycopg.connect(url) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS bench_commits (i INTEGER, v TEXT)")
        conn.commit()
        return commits(
            lambda i: conn.execute("INSERT INTO bench_commits VALUES (%s, %s)", (i, ROW)),
            conn.commit,
        )


@contextlib.contextmanager
def postgres_url() -> Iterator[str]:
    """A PostgreSQL server of ``tests/db`` (``fsync=off``), its URL."""
    from db_servers import running_postgres

    with running_postgres() as server:
        config = server.config
        yield f"postgresql://{config.user}@{config.host}:{config.port}/{config.database}"


@DBOS.workflow(name="bench.empty_workflow")
async def empty_workflow(value: int) -> int:
    """Nothing: the workflow's own start and end records."""
    return value


async def dbos_floor(url: str) -> dict[str, tuple[float, float]]:
    """(wall, CPU) milliseconds of an empty workflow and of an empty step."""

    async def nothing(_: QueuedRun, __: DurableSteps) -> str:
        return "completed"

    worker = DbosWorker(
        WorkerOptions(url=url, app_version="bench", executor_id=f"floor-{new_id()}"), nothing
    )
    await worker.start()
    seen: dict[str, list[tuple[float, float]]] = {"workflow": [], "step": []}
    try:
        for _ in range(5):
            started, used = time.perf_counter(), time.process_time()
            for _ in range(100):
                await (await DBOS.start_workflow_async(empty_workflow, 1)).get_result()
            seen["workflow"].append(
                ((time.perf_counter() - started) * 10, (time.process_time() - used) * 10)
            )
            started, used = time.perf_counter(), time.process_time()
            await (await DBOS.start_workflow_async(empty_steps, 200)).get_result()
            seen["step"].append(
                ((time.perf_counter() - started) * 5, (time.process_time() - used) * 5)
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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--no-postgres", action="store_true")
    args = parser.parse_args()
    url = f"sqlite:///{tempfile.mkdtemp()}/runs.sqlite"
    report("SQLite", sqlite_commit(), asyncio.run(dbos_floor(url)))
    if not args.no_postgres:
        with postgres_url() as url:
            report("PostgreSQL", postgres_commit(url), asyncio.run(dbos_floor(url)))


if __name__ == "__main__":
    main()
