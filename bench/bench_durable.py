"""What durability costs: a run through a DBOS workflow (each model call and tool call a
step checkpoint) against the same run without it, on SQLite and PostgreSQL.

The model endpoint is ``bench/loopback_agent_server.py`` in a child process (a ``list`` tool
call, then a 50-delta answer: two model calls and one tool call per run). Both sides run the
facade's ``Session`` with the shared file store and a real ``LocalExecutor``, one run after
another, in pairs (a plain run next to a durable one, which goes first alternating: the
machine's load drifts over seconds, and a pair sees one load); "added" is the median of the
pairs' differences; the durable side starts each run as a workflow in this process
(``DBOS.start_workflow_async``, no queue polling) and waits for its result. A third measure
is the bare checkpoint: a workflow of 100 empty steps, per step. Beside the wall time, the
CPU time of this process (every thread: the loop, DBOS's, SQLite's) per run, which the
machine's load moves far less than the wall time (PostgreSQL's own work is not in it).

Usage: python bench/bench_durable.py [--runs 100] [--rounds 3] [--warm-up 3] [--steps 100]
    [--no-postgres | --postgres URL]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The tests' database helpers; our sources from PYTHONPATH or the install, as every bench
# takes them (so --against-style runs measure the tree asked for), else this checkout's.
sys.path.insert(0, str(ROOT / "tests" / "db"))
if importlib.util.find_spec("rho_domain") is None:
    sys.path.insert(0, str(ROOT / "src"))

from dbos import DBOS  # noqa: E402
from loopback_agent_server import start_server  # noqa: E402

from rho_adapters.durable.payloads import payload_of  # noqa: E402
from rho_adapters.durable.steps import DbosSteps  # noqa: E402
from rho_adapters.durable.worker import DbosWorker, WorkerOptions, run_workflow  # noqa: E402
from rho_adapters.store import FileSessionStore  # noqa: E402
from rho_domain.config import AgentConfig  # noqa: E402
from rho_domain.ports.durable import CancelAsked, DurableSteps, QueuedRun  # noqa: E402
from rho_domain.run import new_id  # noqa: E402
from rho_entry.durable.runner import DurableRunner, WorkerSetup  # noqa: E402
from rho_entry.facade import Agent, Session  # noqa: E402


@DBOS.workflow(name="bench.empty_steps")
async def empty_steps(count: int) -> int:
    """``count`` empty steps, each checkpointed."""
    steps = DbosSteps()

    async def nothing() -> int:
        return 0

    for _ in range(count):
        await steps.once("empty", nothing)
    return count


async def plain_run(agent: Agent, store: FileSessionStore) -> None:
    async with Session(agent, store=store) as session:
        result = await session.run("list the files")
    assert result.status.value == "completed", result


async def durable_run(prompt_id: int) -> None:
    run = QueuedRun(run_id=new_id(), session_id=new_id(), prompt="list the files")
    handle = await DBOS.start_workflow_async(run_workflow, payload_of(run))
    assert await handle.get_result() == "completed", prompt_id


async def measure(database: str, base_url: str, args: argparse.Namespace) -> dict[str, float]:
    """Median milliseconds of a plain run, a durable one, and of the difference within each
    pair (wall and this process's CPU); one checkpoint's."""
    with tempfile.TemporaryDirectory(prefix="rho-bench-durable-") as tmp:
        return await measure_in(Path(tmp), database, base_url, args)


async def measure_in(
    work: Path, database: str, base_url: str, args: argparse.Namespace
) -> dict[str, float]:
    """``measure`` with its store and workspace in ``work``."""
    config = AgentConfig(model="fake-model", base_url=base_url, working_dir=str(work))
    store = FileSessionStore(work / "store")
    agent = Agent(config)
    runner = DurableRunner(WorkerSetup(store=store, config=config))

    async def run(queued: QueuedRun, steps: DurableSteps, asked: CancelAsked) -> str:
        return await runner(queued, steps, asked)

    worker = DbosWorker(
        WorkerOptions(url=database, app_version="bench", executor_id=f"bench-{new_id()}"), run
    )
    await worker.start()
    wall: dict[str, list[float]] = {"plain": [], "durable": []}
    cpu: dict[str, list[float]] = {"plain": [], "durable": []}
    step: list[float] = []

    async def timed(kind: str, index: int) -> None:
        started, used = time.perf_counter(), time.process_time()
        if kind == "plain":
            await plain_run(agent, store)
        else:
            await durable_run(index)
        wall[kind].append((time.perf_counter() - started) * 1000)
        cpu[kind].append((time.process_time() - used) * 1000)

    try:
        for _ in range(args.warm_up):  # warm both paths
            await plain_run(agent, store)
            await durable_run(0)
        for _ in range(args.rounds):
            # paired: a plain run and a durable one next to each other (which goes first
            # alternates), so both see the same load; the load drifts over a block of runs
            for index in range(args.runs):
                for kind in ("plain", "durable") if index % 2 else ("durable", "plain"):
                    await timed(kind, index)
            started = time.perf_counter()
            handle = await DBOS.start_workflow_async(empty_steps, args.steps)
            await handle.get_result()
            step.append((time.perf_counter() - started) / args.steps * 1000)
    finally:
        await worker.stop()
    return {
        "plain": statistics.median(wall["plain"]),
        "durable": statistics.median(wall["durable"]),
        "added": paired_median(wall),
        "step": statistics.median(step),
        "plain_cpu": statistics.median(cpu["plain"]),
        "durable_cpu": statistics.median(cpu["durable"]),
        "added_cpu": paired_median(cpu),
    }


def paired_median(times: dict[str, list[float]]) -> float:
    """The median of durable minus plain, pair by pair."""
    pairs = zip(times["plain"], times["durable"], strict=True)
    return statistics.median(durable - plain for plain, durable in pairs)


@contextlib.contextmanager
def postgres_url(given: str | None) -> Iterator[str]:
    """``given``, else the URL of a PostgreSQL of ``tests/db`` started for the benchmark."""
    if given is not None:
        yield given
        return
    from db_servers import running_postgres

    with running_postgres() as server:
        config = server.config
        yield f"postgresql://{config.user}@{config.host}:{config.port}/{config.database}"


@contextlib.contextmanager
def sqlite_url() -> Iterator[str]:
    """A SQLite database's URL in a temporary directory, removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="rho-bench-durable-db-") as tmp:
        yield f"sqlite:///{tmp}/runs.sqlite"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--warm-up", type=int, default=3, help="pairs run before the rounds")
    parser.add_argument("--steps", type=int, default=100, help="steps of the bare workflow")
    parser.add_argument("--no-postgres", action="store_true")
    parser.add_argument(
        "--postgres", metavar="URL", help="a running server to use (else one starts)"
    )
    args = parser.parse_args(argv)
    child, base_url = start_server()
    try:
        databases: list[tuple[str, contextlib.AbstractContextManager[str]]] = [
            ("SQLite", sqlite_url())
        ]
        if not args.no_postgres:
            databases.append(("PostgreSQL", postgres_url(args.postgres)))
        for name, opened in databases:
            with opened as url:
                figures = asyncio.run(measure(url, base_url, args))
            added = figures["added"]
            print(
                f"{name}: plain {figures['plain']:.2f} ms/run, durable {figures['durable']:.2f}"
                f" ms/run (+{added:.2f} ms, +{added / figures['plain'] * 100:.0f} %), "
                f"one step checkpoint {figures['step']:.2f} ms; CPU of this process "
                f"{figures['plain_cpu']:.2f} / {figures['durable_cpu']:.2f} ms/run "
                f"(+{figures['added_cpu']:.2f} ms)",
                flush=True,
            )
    finally:
        assert child.stdin is not None
        child.stdin.close()
        child.wait(10)


if __name__ == "__main__":
    main()
