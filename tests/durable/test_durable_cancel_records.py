"""The cancels recorded for taken runs (``rho_cancels``) live as long as their runs: a worker
starting forgets those of runs no longer queued or running (a run whose workflow failed, one
that ended before its canceller's record was written, a run the database never had), and
keeps the record of a run still queued. They were never removed: the table grew by a row for
every cancel. (The record of a run that ends is forgotten by its workflow: the contract
suite's ``test_a_taken_run_cancelled_has_the_cancel_recorded_for_it``; a record it cannot
remove leaves the run's status as the run ended it.)"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from rho_domain.ports.durable import CancelAsked, DurableSteps, QueuedRun
from rho_domain.run import new_id

if importlib.util.find_spec("dbos") is None:  # found, not imported: dbos costs 0.65 s
    pytest.skip("the durable extra (dbos) is not installed", allow_module_level=True)


class DropsTheTable:
    """A runner whose run ends after the table of cancels went away (a database restored
    without it): its record cannot be removed, which must not make the run an error."""

    def __init__(self, url: str) -> None:
        self.url = url

    async def __call__(self, queued: QueuedRun, steps: DurableSteps, asked: CancelAsked) -> str:
        import sqlalchemy as sa

        from rho_adapters.durable.system_db import engine_url

        engine = sa.create_engine(engine_url(self.url))
        with engine.begin() as conn:
            conn.execute(sa.text("DROP TABLE rho_cancels"))
        engine.dispose()
        return "completed"


async def test_a_worker_starting_forgets_the_cancels_of_runs_that_ended(tmp_path: Path) -> None:
    from rho_adapters.durable.cancels import CancelRecords
    from rho_adapters.durable.system_db import system_db_url
    from rho_adapters.durable.worker import DbosWorker, WorkerOptions
    from rho_entry.durable.queueing import enqueue_prompt, open_queue

    url = system_db_url(str(tmp_path / "runs.sqlite"))
    # a queue no worker consumes: what is enqueued there stays queued
    idle = open_queue(url, queue="nobody", version="v1")
    records = CancelRecords(url)
    try:
        waiting = await enqueue_prompt(idle, "stays queued")
        ended = await enqueue_prompt(idle, "cancelled while queued")
        assert await idle.cancel_queued(ended.session_id) is not None
        assert await idle.status(ended.run_id) == "cancelled"
        unknown = new_id()
        for run_id in (waiting.run_id, ended.run_id, unknown):
            records.ask(run_id)
        options = WorkerOptions(
            url=url,
            queue="rho-runs",
            concurrency=1,
            app_version="v1",
            executor_id="forget",
            poll_interval=0.05,
        )
        worker = DbosWorker(options, DropsTheTable(url))
        await worker.start()
        consumed = open_queue(url, version="v1")
        try:
            assert records.recorded() == [waiting.run_id]
            assert await idle.cancel_asked(waiting.run_id)
            assert not await idle.cancel_asked(ended.run_id)
            run = await enqueue_prompt(consumed, "ends without the table")
            assert await consumed.wait(run.run_id, 30) == "completed"
        finally:
            await worker.stop()
            consumed.close()
    finally:
        records.close()
        idle.close()


class Held:
    """A runner that takes its run and ends it ``completed`` once ``release`` is set."""

    def __init__(self) -> None:
        import threading

        self.took, self.release = threading.Event(), threading.Event()

    async def __call__(self, queued: QueuedRun, steps: DurableSteps, asked: CancelAsked) -> str:
        import asyncio

        self.took.set()
        await asyncio.to_thread(self.release.wait, 30)
        return "completed"


async def test_a_cancel_recorded_as_its_run_ends_does_not_stay(tmp_path: Path) -> None:
    """A canceller saw the run taken (``PENDING``), then the run ended and forgot its record,
    then the canceller's record was written: it stayed until a worker started, never read.
    The canceller now looks again once its record is written, and forgets it when the run
    has ended; and every run's end forgets the records of runs that ended (one left by a
    canceller that died between the two), not only a worker's start."""
    import asyncio

    from rho_adapters.durable.cancels import CancelRecords
    from rho_adapters.durable.system_db import system_db_url
    from rho_adapters.durable.worker import DbosWorker, WorkerOptions
    from rho_entry.durable.queueing import enqueue_prompt, open_queue

    url = system_db_url(str(tmp_path / "runs.sqlite"))
    loop = asyncio.get_running_loop()
    queue = open_queue(url, version="v1")
    held = Held()

    class Late(CancelRecords):
        """Records the cancel only once the run it is for has ended (and forgotten its own)."""

        def ask(self, run_id: str) -> None:
            held.release.set()
            ended = asyncio.run_coroutine_threadsafe(queue.wait(run_id, 30), loop).result()
            assert ended == "completed"
            super().ask(run_id)

    queue._cancels = Late(url)  # the canceller's record, written late
    records = CancelRecords(url)
    options = WorkerOptions(
        url=url,
        queue="rho-runs",
        concurrency=1,
        app_version="v1",
        executor_id="late-cancel",
        poll_interval=0.05,
    )
    worker = DbosWorker(options, held)
    await worker.start()
    try:
        run = await enqueue_prompt(queue, "ends as it is cancelled")
        assert await asyncio.to_thread(held.took.wait, 30), "the worker took no run"
        cancelled = await queue.cancel_queued(run.session_id)
        assert cancelled is not None
        assert cancelled.taken
        assert records.recorded() == []  # before: [run.run_id], until a worker started
        records.ask(run.run_id)  # as a canceller that died before its second look leaves it
        assert records.recorded() == [run.run_id]
        held.release.set()
        after = await enqueue_prompt(queue, "any run's end")
        assert await queue.wait(after.run_id, 30) == "completed"
        assert records.recorded() == []  # before: kept until a worker started
    finally:
        await worker.stop()
        records.close()
        queue.close()
