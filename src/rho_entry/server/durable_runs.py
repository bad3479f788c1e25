"""``rho-agent serve --durable``: the server's runs go on a queue of durable runs.

A run the server starts (a new session's prompt, a chat, a resume) is enqueued on the named
queue instead of run in this process's runtime, and the server runs a worker of that queue in
process (``rho_adapters.durable.worker``: one per process). Every server on the same durable
database and session store is such a worker: when one dies (SIGKILL, a lost host), the others
notice its heartbeat stop and recover its runs, which continue from their recorded steps
(docs/durable.md); no one has to ``--resume`` them.

An approval answered over HTTP, on any of these servers, goes through the queue: the session's
last run (its trace's last ``run_start`` names the run, whose id is its workflow's; the queue
must have it as a run of that session: the trace is data) waits for approval, so the answer
enqueues its continuation (``RunQueue.answer``), which a worker with capacity runs. A waiting
run holds no worker slot. "always" is carried by the queue: the continuation, and every later
continuation of the same run, allows the call's tool without asking (a resumed session never
takes "always" from its trace). One answer per waiting run counts: a second answer of the same
run with another decision, at the same moment on another server, is a ``Conflict`` naming the
answer taken (``RunQueue.answer``).

A run is in progress from its enqueuing on, not only once a worker opens its session (when
the store learns of it): the queue takes one run of a session at a time (``DbosRunQueue``,
by DBOS's deduplication id), whichever server enqueues it, and a start or an answer it
refuses is a ``Conflict``. Before, two chats of one session at the same moment, or a chat
and an answer, both queued a run, and both ran. The caller holds the session's turn
(``Runs.turn``), so that two at once on one server are taken one after the other.
"""

from __future__ import annotations

import socket
import uuid
from typing import TYPE_CHECKING

import attrs

from rho_domain.config import AgentConfig
from rho_domain.errors import SessionStateError
from rho_domain.events import Event, RunStarted
from rho_domain.ports.session_control import SessionControl
from rho_domain.ports.store import SessionStore
from rho_domain.state import State
from rho_domain.value_methods import value_eq, value_hash, value_repr
from rho_entry.resume_policy import ResumeAuthority
from rho_entry.server.bodies import Decision
from rho_entry.server.errors import Conflict

if TYPE_CHECKING:
    from rho_adapters.durable.run_queue import DbosRunQueue
    from rho_adapters.durable.worker import DbosWorker


ANSWER_WAIT = 5.0  # seconds an answer waits for the run's end to be recorded


@attrs.frozen(kw_only=True)
class DurableSettings:
    """Where a durable server's runs are queued: ``database`` (a SQLite path or a PostgreSQL
    URL, ``rho_adapters.durable.system_db``), the ``queue`` name, and how many of its runs
    this server's worker runs at once; ``heartbeat`` and ``dead_after`` as the worker's."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    database: str
    queue: str = "rho-runs"
    concurrency: int = 4
    heartbeat: float = 2.0
    dead_after: float = 10.0
    poll: float = 1.0


class DurableRuns:
    """The queue a durable server enqueues on, and its in-process worker."""

    def __init__(
        self,
        settings: DurableSettings,
        *,
        store: SessionStore,
        config: AgentConfig,
        authority: ResumeAuthority,
    ) -> None:
        self.settings = settings
        self._store = store
        self._config = config
        self._authority = authority
        self._queue: DbosRunQueue | None = None
        self._worker: DbosWorker | None = None

    async def start(self) -> None:
        """Open the queue and start this server's worker. Raises ``MissingExtra`` without the
        ``dbos`` extra, ``ConfigError`` naming the database when it cannot be opened or its
        queue holds another version's runs."""
        from rho_adapters.durable.system_db import system_db_url
        from rho_adapters.durable.worker import DbosWorker, WorkerOptions
        from rho_entry.durable.app_version import app_version
        from rho_entry.durable.runner import DurableRunner, WorkerSetup

        settings = self.settings
        self.open()
        setup = WorkerSetup(store=self._store, config=self._config, authority=self._authority)
        options = WorkerOptions(
            url=system_db_url(settings.database),
            queue=settings.queue,
            concurrency=max(settings.concurrency, 1),
            app_version=app_version(),
            executor_id=f"serve-{socket.gethostname()}-{uuid.uuid4().hex[:8]}",
            poll_interval=settings.poll,
            heartbeat=settings.heartbeat,
            dead_after=settings.dead_after,
        )
        self._worker = DbosWorker(options, DurableRunner(setup))
        await self._worker.start()

    def open(self) -> None:
        """Open the queue without a worker (``start`` does both): runs are enqueued,
        answered and cancelled, and other servers' workers run them. Raises as ``start``."""
        from rho_entry.durable.queueing import open_queue

        if self._queue is None:
            self._queue = open_queue(self.settings.database, queue=self.settings.queue)

    @property
    def queue(self) -> DbosRunQueue:
        """The open queue (``start`` first)."""
        if self._queue is None:
            raise SessionStateError("the durable runs are not started")
        return self._queue

    async def enqueue(self, session_id: str, prompt: str | None) -> str:
        """Put a run of the stored session ``session_id`` on the queue; its run id.
        ``Conflict`` while a run of it is queued or running (the queue refuses it)."""
        from rho_entry.durable.queueing import enqueue_prompt

        try:
            return (await enqueue_prompt(self.queue, prompt, session_id=session_id)).run_id
        except SessionStateError as exc:  # a run of it queued or running, from any server
            raise Conflict(str(exc)) from None

    async def cancel(self, session_id: str, control: SessionControl) -> str | None:
        """Cancel the session's run on the queue (``RunQueue.cancel_queued``): ``cancelled``
        when it still waited (it never runs); ``cancel requested`` when a worker took it,
        perhaps before opening its session, whose start clears the stop signal: the queue
        holds the cancel for the run, which reads it once started, and the stop signal
        (``control``), requested after that record, reaches a run that had started before
        it (``queueing.cancel_session_run``, ``rho_entry.durable.run_signals``). None when no
        run of the session is queued or running."""
        from rho_entry.durable.queueing import cancel_session_run

        try:
            cancelled = await cancel_session_run(self.queue, session_id, control=control)
        except SessionStateError:  # none queued or running: the caller's 409
            return None
        return "cancel requested" if cancelled.taken else "cancelled"

    async def answer(
        self,
        session_id: str,
        events: tuple[Event, ...],
        call_id: str,
        decision: Decision,
        digest: str | None,
    ) -> str:
        """Answer ``call_id`` of the session whose trace is ``events`` (``always``: its
        tool is allowed for the rest of the run, every continuation of it included): the
        continuation's run id. ``Conflict`` when its last run is not one waiting for
        approval, or was answered already with other answers (at the same moment, on
        another server: the message names them; answer again once the run waits anew).
        ``digest`` (the call's as shown) goes with the answer: the worker checks it again."""
        run_id = last_run(events)
        if run_id is None:
            raise Conflict(f"session {session_id} has no durable run to continue")
        # the trace is data: the run it names must be this session's on the queue, else an
        # answer shown with this session would continue another's run (a copied directory)
        owner = await self.queue.session_of(run_id)
        if owner != session_id:
            whose = f"a run of session {owner}" if owner else "a run this queue does not have"
            raise Conflict(
                f"session {session_id}'s trace names the durable run {run_id}, which is "
                f"{whose}: an answer continues its own session's run only (the trace was "
                "copied or changed); nothing was answered"
            )
        tools = {c.id: c.name for c in State.from_events(events).pending_calls}
        always = (tools[call_id],) if decision == "always" and call_id in tools else ()
        try:
            # the worker releases the session a moment before it records the run's result
            await self.queue.wait(run_id, ANSWER_WAIT)
            return await self.queue.answer(
                run_id,
                {call_id: decision != "deny"},
                reasons={},
                always=always,
                digests={} if digest is None else {call_id: digest},
            )
        except (SessionStateError, TimeoutError) as exc:
            raise Conflict(str(exc)) from None

    async def aclose(self) -> None:
        """Stop the worker (its runs in flight are recovered by the other workers, or by
        this server started again) and close the queue."""
        if self._worker is not None:
            await self._worker.stop()
            self._worker = None
        if self._queue is not None:
            self._queue.close()
            self._queue = None


def last_run(events: tuple[Event, ...]) -> str | None:
    """The id of the trace's last run (a durable run's is its workflow's), None without one."""
    for event in reversed(events):
        if isinstance(event, RunStarted):
            return event.run_id
    return None
