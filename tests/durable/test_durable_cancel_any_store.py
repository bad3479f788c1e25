"""A durable run is stopped by ``DurableHandle.cancel`` after it started, whatever its store:
one without signals (neither files nor PostgreSQL: a library's own ``SessionStore``, here
``MemorySessionStore``) has its run read the queue's record of the cancel while it goes
(``run_signals``); a file store's handle built without ``control`` asks the store's own stop
signal. Both runs ran to their end before, the handle saying "cancel requested".

One real worker (DBOS, in this process, SQLite) runs the real ``DurableRunner``; the model's
answer stalls for 8 s after its first delta, so the run is inside its model call when the
test cancels it."""

from __future__ import annotations

import asyncio
import importlib.util
import threading
from pathlib import Path

import pytest
from durable_support import trace

from rho_adapters.fakes import MemorySessionStore
from rho_adapters.fakes.loopback import LoopbackServer
from rho_adapters.fakes.wire import Exchange, Reply, stall, text_reply
from rho_adapters.store import FileSessionStore
from rho_domain.events import RunEnded
from rho_domain.ports.store import SessionStore

if importlib.util.find_spec("dbos") is None:  # found, not imported: dbos costs 0.65 s
    pytest.skip("the durable extra (dbos) is not installed", allow_module_level=True)


@pytest.mark.parametrize("kind", ["memory", "files"])
def test_a_started_run_is_cancelled_whatever_its_store(tmp_path: Path, kind: str) -> None:
    from rho_adapters.durable.system_db import system_db_url
    from rho_adapters.durable.worker import DbosWorker, WorkerOptions
    from rho_domain.config import AgentConfig
    from rho_entry.durable.handle import DurableHandle
    from rho_entry.durable.queueing import DEFAULT_QUEUE, enqueue_prompt, open_queue
    from rho_entry.durable.runner import DurableRunner, WorkerSetup

    url = system_db_url(str(tmp_path / "runs.sqlite"))
    asked = threading.Event()

    def slow(exchange: Exchange) -> Reply | None:
        if not exchange.is_chat:
            return None
        asked.set()
        return text_reply("too late", deltas=3, faults=(stall(after=1, seconds=8),))

    async def drive(base_url: str, store: SessionStore) -> tuple[str, str, DurableHandle]:
        config = AgentConfig(model="fake-model", base_url=base_url, working_dir=str(tmp_path))
        runner = DurableRunner(WorkerSetup(store=store, config=config))
        options = WorkerOptions(
            url=url,
            queue=DEFAULT_QUEUE,
            concurrency=1,
            app_version="v1",
            executor_id="any-store",
            poll_interval=0.05,
        )
        worker = DbosWorker(options, runner)
        await worker.start()
        queue = open_queue(url, version="v1")
        try:
            run = await enqueue_prompt(queue, "hello")
            handle = DurableHandle(queue, store, run.session_id, run.run_id)
            assert await asyncio.to_thread(asked.wait, 30), "the run never called its model"
            said = await handle.cancel()
            return said, await handle.wait(30), handle
        finally:
            await worker.stop()
            queue.close()

    store = MemorySessionStore() if kind == "memory" else FileSessionStore(tmp_path / "store")
    with LoopbackServer([], rules=[slow]) as model:
        said, ended, handle = asyncio.run(drive(model.base_url, store))
    assert said == "cancel requested"
    assert ended == "cancelled"
    if isinstance(store, MemorySessionStore):
        ends = [e.status.value for e in store.events(handle.session_id) if isinstance(e, RunEnded)]
    else:
        ends = [
            e["status"]
            for e in trace(tmp_path / "store", handle.session_id)
            if e["kind"] == "run_end"
        ]
    assert ends == ["cancelled"]
