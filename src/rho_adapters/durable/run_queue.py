"""``RunQueue`` for any process: enqueue durable runs and read their statuses (``DBOSClient``).

A run's workflow id is its ``run_id``, so enqueuing the same run twice runs it once. Its
status is DBOS's (``ENQUEUED`` → ``queued``, ``PENDING`` → ``running``) until the workflow
ends; then it is the run's own status, the workflow's result. A run that ends
``awaiting_approval`` holds no worker slot: answering enqueues its continuation, a run with
the id ``<run_id>~<n>`` whose prompt is None and whose approvals are in ``settings``
(``answer:CALL`` yes or no, ``reason:CALL``, and ``always:TOOL`` for the tools answered
"always", carried into every later continuation). One answer set per run: the
continuation's id is derived from the run's, so two answers of one run race for one id;
DBOS keeps the first, the same answers again get its continuation, and other answers are
refused (``SessionStateError`` naming what the run was answered), never silently dropped.
A continuation cancelled while queued (``cancel_queued``) never ran: answering the run again
enqueues the next id, ``<run_id>~<n+1>``.

One run of a session at a time on a queue: each run is enqueued under its session's id as
DBOS's deduplication id, which DBOS holds from the enqueue until the run's workflow ends (a
run waiting for approval has ended), so a second run of a session queued or running is
refused by the database itself, whoever enqueues it (``SessionStateError``). Two servers'
chats of one session at the same moment, or a chat and an answer, queued two runs, and both
ran, the second after waiting for the first's session lock.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Collection, Iterator, Mapping
from typing import Any

from rho_adapters.durable import load_dbos
from rho_adapters.durable.cancels import CancelRecords
from rho_adapters.durable.continuations import (
    answered_otherwise,
    answers_of,
    continuation_ids,
    continuation_settings,
    not_waiting,
    session_busy,
)
from rho_adapters.durable.payloads import payload_of, run_of
from rho_adapters.durable.system_db import said_by_database, shown
from rho_domain.errors import ConfigError, SessionStateError
from rho_domain.ports.durable import CancelledRun, QueuedRun, RunQueue

WORKFLOW = "rho.run"  # the worker registers the workflow under this name
_SETTLED = frozenset({"completed", "cancelled", "max_turns", "budget_exceeded", "error"})
_DBOS_STATUS = {"ENQUEUED": "queued", "PENDING": "running", "DELAYED": "queued"}


class DbosRunQueue(RunQueue):
    """The queue ``queue`` of the system database ``url``, for an application version."""

    def __init__(self, url: str, *, queue: str, app_version: str) -> None:
        dbos = load_dbos()
        try:
            # the client never creates the tables; an enqueuer may come before any worker.
            # DBOS warns "Could not connect ... Continuing..." before failing on an
            # unreachable server: the failure below says it once, in our words.
            with _quiet("dbos"):
                dbos.DBOS.migrate(url)
            self.client = dbos.DBOSClient(system_database_url=url)
        except Exception as exc:
            raise ConfigError(
                f"cannot open the durable runs' database {shown(url)}: {said_by_database(exc)}"
            ) from exc
        self.url = url
        self._cancels = CancelRecords(url)
        self.queue = queue
        self.app_version = app_version

    async def enqueue(self, run: QueuedRun) -> None:
        """See ``RunQueue.enqueue``. Raises ``SessionStateError`` while another run of the
        session is queued or running on this queue (the same run again is taken once)."""
        load_dbos()
        from dbos import error as dbos_errors

        try:
            await self.client.enqueue_async(
                {
                    "workflow_name": WORKFLOW,
                    "queue_name": self.queue,
                    "workflow_id": run.run_id,
                    "app_version": self.app_version,
                    "deduplication_id": run.session_id,  # one run of a session at a time
                },
                payload_of(run),
            )
        except dbos_errors.DBOSQueueDeduplicatedError:
            raise session_busy(run.session_id, self.queue, run.run_id) from None

    async def answer(
        self,
        run_id: str,
        answers: Mapping[str, bool],
        *,
        reasons: Mapping[str, str],
        always: Collection[str] = (),
        digests: Mapping[str, str] | None = None,
    ) -> str:
        """See ``RunQueue.answer``: the continuation is enqueued as ``<run_id>~<n>``."""
        status = await self.status(run_id)
        if status != "awaiting_approval":
            raise not_waiting(run_id, status)
        workflow = await self._workflow(run_id)
        if not workflow or not workflow.input:
            raise SessionStateError(f"run {run_id} has no recorded session")
        run = run_of(workflow.input["args"][0], run_id)
        return await self._continue(run, answers, reasons, always, digests or {})

    async def _continue(
        self,
        run: QueuedRun,
        answers: Mapping[str, bool],
        reasons: Mapping[str, str],
        always: Collection[str],
        digests: Mapping[str, str],
    ) -> str:
        run_id = run.run_id
        answered, settings = continuation_settings(run.settings, answers, reasons, always, digests)
        base, attempt = continuation_ids(run_id)
        while True:
            continuation = f"{base}~{attempt}"
            # the continuation's id is the answered run's: a second answer of the same run
            # (on another server, at the same moment) finds the first one's continuation
            # enqueued, and DBOS keeps the first; it counts only if it says the same
            await self.enqueue(
                QueuedRun(
                    run_id=continuation,
                    session_id=run.session_id,
                    prompt=None,
                    settings=settings,
                )
            )
            kept = await self._workflow(continuation)
            # one cancelled (cancel_queued, or DBOS's own cancel) recorded no answers, or
            # not all (each is recorded once): the calls still wait, and the next id takes
            # this answer; before, every answer again "succeeded" with that cancelled run
            if kept is None or kept.status != "CANCELLED":
                break
            attempt += 1
        kept_settings = (
            run_of(kept.input["args"][0], continuation).settings if kept and kept.input else {}
        )
        theirs = answers_of(kept_settings)
        if theirs != answered:
            raise answered_otherwise(run_id, continuation, theirs, answered)
        return continuation

    async def cancel_queued(self, session_id: str) -> CancelledRun | None:
        """See ``RunQueue.cancel_queued``. The session's run is the one holding its
        deduplication id: ``ENQUEUED`` (or ``DELAYED``) waits, and DBOS's cancel takes it off
        the queue and frees that id; ``PENDING`` is taken, and its cancel is recorded in
        ``rho_cancels`` (``cancels.py``: DBOS's cancel would stop it mid-step, unrecorded)."""
        found = await self.client.list_workflows_async(
            queue_name=self.queue,
            status=["ENQUEUED", "DELAYED", "PENDING"],
            name=WORKFLOW,
            load_input=False,
            load_output=False,
        )
        mine = [w for w in found if w.deduplication_id == session_id]
        waiting = [str(w.workflow_id) for w in mine if w.status != "PENDING"]
        if waiting:
            await self.client.cancel_workflows_async(waiting)
            return CancelledRun(run_id=waiting[0], taken=False)
        if not mine:
            return None
        taken = str(mine[0].workflow_id)
        await asyncio.to_thread(self._cancels.ask, taken)
        # the run may have ended between the look above and the record: it forgot its
        # record before this one was written, which stayed until a worker started
        if await self.status(taken) not in ("queued", "running"):
            await asyncio.to_thread(self._cancels.forget, taken)
        return CancelledRun(run_id=taken, taken=True)

    async def cancel_asked(self, run_id: str) -> bool:
        """See ``RunQueue.cancel_asked`` (``rho_cancels``)."""
        return await asyncio.to_thread(self._cancels.asked, run_id)

    async def status(self, run_id: str) -> str | None:
        """See ``RunQueue.status``."""
        return (await self.statuses([run_id]))[run_id]

    async def statuses(self, run_ids: Collection[str]) -> Mapping[str, str | None]:
        """See ``RunQueue.statuses``: one query for all of them, without their inputs."""
        wanted = list(dict.fromkeys(run_ids))
        if not wanted:
            return {}
        found = await self.client.list_workflows_async(workflow_ids=wanted, load_input=False)
        by_id = {workflow.workflow_id: workflow for workflow in found}
        return {run_id: _status(by_id.get(run_id)) for run_id in wanted}

    async def wait(self, run_id: str, timeout: float) -> str:
        """See ``RunQueue.wait`` (polls every 0.1 s)."""
        deadline = time.monotonic() + timeout
        while True:
            status = await self.status(run_id)
            if status in _SETTLED or status == "awaiting_approval":
                return status
            if time.monotonic() > deadline:
                raise TimeoutError(f"run {run_id} is still {status} after {timeout:.0f} s")
            await asyncio.sleep(0.1)

    async def session_of(self, run_id: str) -> str | None:
        """The session the run ``run_id`` runs (None for a run this queue never had)."""
        workflow = await self._workflow(run_id)
        if workflow is None or not workflow.input:
            return None
        return run_of(workflow.input["args"][0], run_id).session_id

    async def _workflow(self, run_id: str) -> Any:
        found = await self.client.list_workflows_async(workflow_ids=[run_id])
        return found[0] if found else None

    def close(self) -> None:
        """Release the client's connections."""
        self.client.destroy()
        self._cancels.close()


def _status(workflow: Any) -> str | None:
    """A run's status from its DBOS workflow (None: no such workflow)."""
    if workflow is None:
        return None
    if workflow.status == "SUCCESS":
        return str(workflow.output)
    if workflow.status in ("ERROR", "MAX_RECOVERY_ATTEMPTS_EXCEEDED"):
        return "error"
    if workflow.status == "CANCELLED":
        return "cancelled"
    return _DBOS_STATUS.get(workflow.status, "running")


@contextlib.contextmanager
def _quiet(name: str) -> Iterator[None]:
    """The logger ``name`` says only errors while the block runs."""
    logger = logging.getLogger(name)
    level = logger.level
    logger.setLevel(max(level, logging.ERROR))
    try:
        yield
    finally:
        logger.setLevel(level)
