"""A taken run cancelled after it started, whose worker then died, ends ``cancelled`` on the
execution that takes it over, retracing its trace first: it ended ``error`` with
``ReplayDiverged``, since the execution read the queue's cancel as it started and stopped at
its first checkpoint, where the trace holds the model call the dead one had made.

One real worker (DBOS, in this process, SQLite) runs the real ``DurableRunner``. Its first
execution of the run dies before its second step (the tool call the model asked for): it
raises ``RunSuperseded``, which writes nothing more and releases the session, and then hangs,
its workflow left pending as a dead worker's is. The run is cancelled (the queue's record and
the session's stop signal, as ``DurableHandle.cancel`` does), then recovered as a live worker
recovers a dead one's runs (``_recover_pending_workflows``, ``heartbeat.py``)."""

from __future__ import annotations

import asyncio
import importlib.util
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

import pytest
from durable_support import answer, trace

from rho_adapters.fakes.loopback import LoopbackServer
from rho_adapters.fakes.wire import call, tool_reply
from rho_domain.errors import RunSuperseded
from rho_domain.ports.durable import CancelAsked, DurableSteps, QueuedRun

if importlib.util.find_spec("dbos") is None:  # found, not imported: dbos costs 0.65 s
    pytest.skip("the durable extra (dbos) is not installed", allow_module_level=True)

T = TypeVar("T")
EXECUTOR = "cancel-then-death"


class DiesAtItsSecondStep(DurableSteps):
    """The first execution's steps: the second step is never run; the worker dies there."""

    def __init__(self, inner: DurableSteps) -> None:
        self.inner = inner
        self.steps = 0

    async def once(self, name: str, run: Callable[[], Awaitable[T]]) -> T:
        self.steps += 1
        if self.steps == 2:
            raise RunSuperseded("the worker died here")
        return await self.inner.once(name, run)


def test_a_run_cancelled_then_recovered_ends_cancelled(tmp_path: Path) -> None:
    from dbos import DBOS

    from rho_adapters.durable.system_db import system_db_url
    from rho_adapters.durable.worker import DbosWorker, WorkerOptions
    from rho_adapters.store import FileSessionStore
    from rho_domain.config import AgentConfig
    from rho_entry.durable.handle import DurableHandle
    from rho_entry.durable.queueing import DEFAULT_QUEUE, enqueue_prompt, open_queue
    from rho_entry.durable.runner import DurableRunner, WorkerSetup

    url = system_db_url(str(tmp_path / "runs.sqlite"))
    store = FileSessionStore(tmp_path / "store")

    async def drive(base_url: str) -> tuple[str, DurableHandle, int]:
        config = AgentConfig(
            model="fake-model", base_url=base_url, working_dir=str(tmp_path), profile="readonly"
        )
        runner = DurableRunner(WorkerSetup(store=store, config=config))
        died = threading.Event()
        executions = 0

        async def dying(queued: QueuedRun, steps: DurableSteps, asked: CancelAsked) -> str:
            nonlocal executions
            executions += 1
            if executions > 1:
                return await runner(queued, steps, asked)
            dies = DiesAtItsSecondStep(steps)
            status = await runner(queued, dies, asked)  # it wrote nothing after its death
            assert dies.steps == 2, f"it ended {status} before its second step"
            died.set()
            await asyncio.Event().wait()  # dead: its workflow stays pending
            return status

        options = WorkerOptions(
            url=url,
            queue=DEFAULT_QUEUE,
            concurrency=2,
            app_version="v1",
            executor_id=EXECUTOR,
            poll_interval=0.05,
        )
        worker = DbosWorker(options, dying)
        await worker.start()
        queue = open_queue(url, version="v1")
        try:
            run = await enqueue_prompt(queue, "look: list the files")
            handle = DurableHandle(queue, store, run.session_id, run.run_id)
            assert await asyncio.to_thread(died.wait, 30), "the first execution never died"
            assert await handle.cancel() == "cancel requested"
            recovered = await asyncio.to_thread(DBOS._recover_pending_workflows, [EXECUTOR])
            assert [h.get_workflow_id() for h in recovered] == [run.run_id]
            return await handle.wait(30), handle, executions
        finally:
            await worker.stop()
            queue.close()

    replies = [tool_reply(call("list", {"path": "."}, "t1")), answer("never sent")]
    with LoopbackServer(replies) as model:
        ended, handle, executions = asyncio.run(drive(model.base_url))
        sent = len(model.requests)
    assert executions == 2
    events = trace(tmp_path / "store", handle.session_id)
    kinds = [(e["kind"], e.get("error_type") or e.get("reason") or "") for e in events]
    assert ended == "cancelled", str(kinds)
    assert [e["run_id"] for e in events if e["kind"] == "run_start"] == [handle.run_id]
    assert [e["status"] for e in events if e["kind"] == "run_end"] == ["cancelled"]
    assert not [e for e in events if e["kind"] == "error"]
    assert sent == 1  # the model call the dead execution made was answered from its record
