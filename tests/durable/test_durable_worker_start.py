"""A worker whose start fails or is cancelled leaves nothing running in its process.

In this process, with the real DBOS on a SQLite system database: a start cancelled during its
first heartbeat (a service embedding the worker cancelled, Ctrl+C), a start whose DBOS
launch fails (the database's system tables are not DBOS's) and one refused after the launch
(runs of another version queued) each leave no thread of theirs,
the heartbeat's engine disposed and DBOS destroyed (so a worker started again in the same
process is built from its own configuration, not the failed one's).
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import sqlite3
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from rho_domain.errors import ConfigError
from rho_domain.ports.durable import CancelAsked, DurableSteps, QueuedRun

if TYPE_CHECKING:
    from rho_adapters.durable.worker import DbosWorker

if importlib.util.find_spec("dbos") is None:  # found, not imported (below)
    pytest.skip("the durable extra (dbos) is not installed", allow_module_level=True)


async def _never_run(run: QueuedRun, steps: DurableSteps, asked: CancelAsked) -> str:
    raise AssertionError("no run is taken by a worker that did not start")


def _worker(db: Path, executor_id: str = "start-test") -> DbosWorker:
    from rho_adapters.durable.worker import DbosWorker, WorkerOptions

    options = WorkerOptions(
        url=f"sqlite:///{db}",
        app_version="v-start-test",
        executor_id=executor_id,
        poll_interval=0.05,
        heartbeat=0.05,
    )
    return DbosWorker(options, _never_run)


def _dbos_instance() -> object:
    """DBOS's process-wide instance (None once destroyed): what ``DBOS(config=...)`` returns
    again, config and all, until ``DBOS.destroy``."""
    return importlib.import_module("dbos._dbos")._dbos_global_instance


def _left_running(before: set[threading.Thread], *, grace: float = 5.0) -> list[str]:
    """The threads started since ``before`` still alive after ``grace`` seconds in all.
    DBOS shuts its executor down without waiting (``shutdown(wait=False)``): a pool thread
    told to end may still be ending when the start returns (1 check in 8 saw one); a thread
    left running (a heartbeat, an event loop) is still there after the grace."""
    deadline = time.monotonic() + grace
    for thread in set(threading.enumerate()) - before:
        thread.join(max(0.0, deadline - time.monotonic()))
    return sorted(t.name for t in set(threading.enumerate()) - before if t.is_alive())


def _connections(worker: DbosWorker) -> tuple[int, int]:
    """The heartbeat engine's pooled connections (idle, in use): none once it is disposed
    (a beat leaves one idle in the pool of a SQLite file)."""
    from sqlalchemy.pool import QueuePool

    pool = worker.heartbeat.engine.pool
    assert isinstance(pool, QueuePool)
    return pool.checkedin(), pool.checkedout()


def _teardown(worker: DbosWorker) -> None:
    """Whatever a failing check left running, stopped: the next test in this process starts
    clean (``stop`` is idempotent)."""
    asyncio.run(worker.stop())


def test_a_start_cancelled_during_its_first_beat_leaves_nothing_running(
    tmp_path: Path,
) -> None:
    before = set(threading.enumerate())
    worker = _worker(tmp_path / "system.db")
    entered, gate = threading.Event(), threading.Event()
    first_beat = worker.heartbeat.beat

    def held_beat() -> None:  # the first beat, held until the test lets it go
        entered.set()
        gate.wait(30)
        first_beat()

    worker.heartbeat.beat = held_beat  # type: ignore[method-assign]

    async def scenario() -> None:
        start = asyncio.ensure_future(worker.start())
        assert await asyncio.to_thread(entered.wait, 30), "the first beat never came"
        start.cancel()
        with pytest.raises(asyncio.CancelledError):
            await start
        gate.set()  # the beat's thread goes on past the cancellation, and ends

    try:
        # asyncio.run joins its thread pool on the way out: the held beat is over after it
        asyncio.run(scenario())
        assert _left_running(before) == []  # no "rho-heartbeat" thread started after all
        assert _connections(worker) == (0, 0)  # the heartbeat's engine disposed
        assert _dbos_instance() is None
    finally:
        gate.set()
        _teardown(worker)


def test_a_failed_launch_leaves_nothing_running_and_names_the_database(
    tmp_path: Path,
) -> None:
    bad = tmp_path / "taken.db"
    with sqlite3.connect(bad) as db:  # a table of DBOS's name that is not DBOS's
        db.execute("CREATE TABLE dbos_migrations (owner TEXT)")
    before = set(threading.enumerate())
    worker = _worker(bad)
    try:
        with pytest.raises(ConfigError) as raised:
            asyncio.run(worker.start())
        assert _left_running(before) == []  # neither the heartbeat's nor DBOS's threads
        assert _connections(worker) == (0, 0)
        assert _dbos_instance() is None
        assert str(bad) in str(raised.value)  # what to fix: this database's tables
        assert "system tables are DBOS's" in str(raised.value)
    finally:
        _teardown(worker)

    # DBOS destroyed: a worker started again in this process runs on its own database
    again = _worker(tmp_path / "good.db", executor_id="start-test-again")

    async def start_and_stop() -> None:
        await again.start()
        await again.stop()
        # DBOS's executor was this loop's default and is shut down: the loop has one again
        assert await asyncio.to_thread(int) == 0

    try:
        asyncio.run(start_and_stop())
    finally:
        _teardown(again)
    assert _left_running(before) == []


def test_a_worker_refused_for_another_version_leaves_nothing_running(tmp_path: Path) -> None:
    """Refused after DBOS launched (runs of another version queued): DBOS's threads too."""
    from rho_adapters.durable.run_queue import DbosRunQueue
    from rho_adapters.durable.worker import VersionMismatch

    db = tmp_path / "system.db"
    before = set(threading.enumerate())
    queue = DbosRunQueue(f"sqlite:///{db}", queue="rho-runs", app_version="v-old")
    try:
        asyncio.run(queue.enqueue(QueuedRun(run_id="old-run", session_id="s1", prompt="go")))
    finally:
        queue.close()
    worker = _worker(db)
    try:
        with pytest.raises(VersionMismatch, match="version v-old"):
            asyncio.run(worker.start())
        assert _left_running(before) == []
        assert _connections(worker) == (0, 0)
        assert _dbos_instance() is None
    finally:
        _teardown(worker)
