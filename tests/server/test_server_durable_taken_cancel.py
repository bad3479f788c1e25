"""A cancel sent to a durable server after a worker took the run, before it opened the session.

Between the two, the queue said the run was running (no longer queued: ``cancel_queued``
found nothing) and the store knew of no run, so ``POST .../cancel`` answered 409 'no run in
progress', and the run then ran to its end: a stop signal requested then would have been
cleared by the run's own start. Here a real worker (DBOS, in this process, on a SQLite queue)
runs the real ``DurableRunner``, held by the test at that very point (taken, session not
opened) until the cancel has been answered: the cancel is recorded on the queue for the run,
which reads it once started and ends ``cancelled`` without a model call.
"""

from __future__ import annotations

import asyncio
import importlib.util
import threading
from pathlib import Path

import attrs
import pytest
from server_support import place, settings

from rho_adapters.fakes.loopback import LoopbackServer
from rho_adapters.fakes.wire import text_reply
from rho_domain.config import AgentConfig
from rho_domain.events import RunEnded
from rho_domain.ports.durable import CancelAsked, DurableSteps, QueuedRun
from rho_entry.server.bodies import CreateSession
from rho_entry.server.durable_runs import DurableSettings
from rho_entry.server.host import SessionHost

if importlib.util.find_spec("dbos") is None:  # found, not imported: dbos costs 0.65 s
    pytest.skip("the durable extra (dbos) is not installed", allow_module_level=True)


@attrs.define
class Held:
    """The worker's runner, stopped after the take until ``release`` is set."""

    took: threading.Event = attrs.field(factory=threading.Event)
    release: threading.Event = attrs.field(factory=threading.Event)
    runs: list[QueuedRun] = attrs.field(factory=list)


def test_a_cancel_after_the_take_before_the_session_opened_cancels_the_run(
    tmp_path: Path,
) -> None:
    from rho_adapters.durable.system_db import system_db_url
    from rho_adapters.durable.worker import DbosWorker, WorkerOptions
    from rho_entry.durable.app_version import app_version
    from rho_entry.durable.runner import DurableRunner, WorkerSetup

    where = place(tmp_path)
    db = str(tmp_path / "runs.sqlite")
    durable = DurableSettings(database=db, queue="taken-cancel")
    held = Held()

    async def drive(base_url: str) -> tuple[str, str, str, list[str]]:
        config = AgentConfig(model="fake-model", base_url=base_url)
        host = SessionHost(
            settings(where), base_config=config, config_dir=where.home, durable=durable
        )
        assert host.durable is not None
        host.durable.open()  # the queue; the worker is the test's, held
        runner = DurableRunner(
            WorkerSetup(
                store=host.store,
                config=host.runs.runtime.agent.config,
                authority=host.runs.runtime.resume_authority(),
            )
        )

        async def hold(run: QueuedRun, steps: DurableSteps, asked: CancelAsked) -> str:
            held.runs.append(run)
            held.took.set()
            await asyncio.to_thread(held.release.wait, 30)
            return await runner(run, steps, asked)

        options = WorkerOptions(
            url=system_db_url(db),
            queue=durable.queue,
            concurrency=1,
            app_version=app_version(),
            executor_id="taken-cancel",
            poll_interval=0.05,
            heartbeat=0.5,
        )
        worker = DbosWorker(options, hold)
        await worker.start()
        try:
            sid = await host.create(CreateSession(prompt="count", profile="readonly"))
            assert await asyncio.to_thread(held.took.wait, 30), "the worker took no run"
            said = await host.cancel(sid)  # taken, its session not opened yet
            held.release.set()
            run_id = held.runs[0].run_id
            status = await host.durable.queue.wait(run_id, 30)
            events = (await host.sessions.recording(sid))[1]
            ends = [e.status.value for e in events if isinstance(e, RunEnded)]
            return said, status, sid, ends
        finally:
            held.release.set()
            await worker.stop()
            await host.aclose()

    with LoopbackServer([text_reply("counted")]) as model:
        said, status, _, ends = asyncio.run(drive(model.base_url))
        sent = list(model.requests)
    assert said == "cancel requested"
    assert status == "cancelled"
    assert ends == ["cancelled"]
    assert sent == []  # cancelled before its first model call
