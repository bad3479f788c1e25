"""Cancelling a durable run from the library (``DurableHandle.cancel``) and the command line
(``rho-agent queue cancel RUN``): there was no way but a server's cancel or DBOS's own tools.

One real worker (DBOS, in this process, on a SQLite queue, concurrency one) runs the real
``DurableRunner``, held by the test after it took the first run and before it opened its
session, a new one the run has not created yet: the handle's cancel finds the run taken,
records it on the queue (the session's stop signal cannot be asked: there is no session yet)
and the run, released, ends ``cancelled`` without a model call. The second run, still queued
behind it, is cancelled by ``queue cancel`` (the CLI's ``main``, in this process) and never
runs. Cancelling
either again names the session with nothing to cancel.
"""

from __future__ import annotations

import asyncio
import importlib.util
import threading
from pathlib import Path

import pytest
from durable_support import queue_here, rho, trace

from rho_adapters.fakes.loopback import LoopbackServer
from rho_adapters.fakes.wire import text_reply
from rho_domain.errors import SessionStateError
from rho_domain.ports.durable import CancelAsked, DurableSteps, QueuedRun

if importlib.util.find_spec("dbos") is None:  # found, not imported: dbos costs 0.65 s
    pytest.skip("the durable extra (dbos) is not installed", allow_module_level=True)


def test_a_durable_run_is_cancelled_from_the_library_and_the_command_line(
    tmp_path: Path,
) -> None:
    from rho_adapters.durable.system_db import system_db_url
    from rho_adapters.durable.worker import DbosWorker, WorkerOptions
    from rho_adapters.store import FileSessionStore
    from rho_entry import AgentConfig, close_runtime, create_runtime, dispatch_prompt, start_runtime
    from rho_entry.durable.app_version import app_version
    from rho_entry.durable.handle import DurableHandle
    from rho_entry.durable.queueing import DEFAULT_QUEUE
    from rho_entry.durable.runner import DurableRunner, WorkerSetup

    db, store = str(tmp_path / "runs.sqlite"), tmp_path / "store"
    took, release = threading.Event(), threading.Event()
    taken: list[QueuedRun] = []

    async def drive(base_url: str) -> tuple[str, str, str, DurableHandle, DurableHandle]:
        config = AgentConfig(model="fake-model", base_url=base_url, working_dir=str(tmp_path))
        runner = DurableRunner(WorkerSetup(store=FileSessionStore(store), config=config))

        async def hold(queued: QueuedRun, steps: DurableSteps, asked: CancelAsked) -> str:
            taken.append(queued)
            took.set()
            await asyncio.to_thread(release.wait, 30)
            return await runner(queued, steps, asked)

        options = WorkerOptions(
            url=system_db_url(db),
            queue=DEFAULT_QUEUE,
            concurrency=1,
            app_version=app_version(),
            executor_id="cancel-surfaces",
            poll_interval=0.05,
            heartbeat=0.5,
        )
        worker = DbosWorker(options, hold)
        await worker.start()
        runtime = create_runtime(config, store=FileSessionStore(store), durable_db=db)
        await start_runtime(runtime)
        try:
            first = await dispatch_prompt(runtime, "first", durable=True)
            assert isinstance(first, DurableHandle)
            assert await asyncio.to_thread(took.wait, 30), "the worker took no run"
            second = await dispatch_prompt(runtime, "second", durable=True)
            assert isinstance(second, DurableHandle)
            said = await first.cancel()  # taken, its new session not created yet
            # the command in this process, on a thread (it runs a loop of its own), while the
            # worker is held: nothing else reads the environment it swaps meanwhile
            printed = await asyncio.to_thread(
                queue_here, tmp_path, db, "--store", str(store), "cancel", second.run_id
            )
            release.set()
            ended = await first.wait(30)
            with pytest.raises(SessionStateError) as again:
                await first.cancel()
            assert f"session {first.session_id} has no run queued or running" in str(again.value)
            assert await second.status() == "cancelled"
            return said, printed, ended, first, second
        finally:
            release.set()
            await close_runtime(runtime)
            await worker.stop()

    with LoopbackServer([text_reply("never")]) as model:
        said, printed, ended, first, second = asyncio.run(drive(model.base_url))
        sent = list(model.requests)
    assert said == "cancel requested"
    assert printed == f"cancelled {second.run_id}"
    assert ended == "cancelled"
    assert [q.run_id for q in taken] == [first.run_id]  # the second never ran
    ends = [e["status"] for e in trace(store, first.session_id) if e["kind"] == "run_end"]
    assert ends == ["cancelled"]
    assert sent == []
    argv = ["queue", "--durable-db", db, "--store", str(store), "cancel", second.run_id]
    refused = rho(*argv, cwd=tmp_path, home=tmp_path / "home")
    assert refused.returncode == 1, refused.stdout
    assert (
        f"session {second.session_id} has no run queued or running on the queue: nothing to "
        "cancel" in refused.stderr
    )
