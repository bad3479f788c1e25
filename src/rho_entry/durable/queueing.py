"""The library API of durable runs: put prompts on a queue, answer, wait, read statuses.

::

    queue = open_queue("runs.sqlite")              # or "postgresql://user:pw@host/db"
    run = await enqueue_prompt(queue, "count the files")   # a new session
    status = await queue.wait(run.run_id, timeout=60)      # "completed", "awaiting_approval"...
    await cancel_session_run(queue, run.session_id)        # or stop it: see its docstring

Workers (``rho-agent worker``) consume the queue; the session's trace is in the store they
share (``--store``), readable with every tool that reads sessions (``export``, ``stats``).
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from rho_domain.errors import SessionNotFound, SessionStateError
from rho_domain.ports.durable import CancelledRun, QueuedRun, RunQueue
from rho_domain.run import new_id
from rho_entry.durable.app_version import app_version

if TYPE_CHECKING:
    from rho_adapters.durable.run_queue import DbosRunQueue
    from rho_domain.ports.session_control import SessionControl

DEFAULT_QUEUE = "rho-runs"


def open_queue(
    database: str, *, queue: str = DEFAULT_QUEUE, version: str | None = None
) -> DbosRunQueue:
    """The ``RunQueue`` named ``queue`` in ``database`` (a SQLite path or a PostgreSQL URL),
    for runs of ``version`` (default: this code's ``app_version()``). Raises ``MissingExtra``
    without the ``dbos`` extra, ``ConfigError`` naming the database (password hidden) when it
    cannot be opened. Call ``close()`` when done."""
    from rho_adapters.durable.run_queue import DbosRunQueue
    from rho_adapters.durable.system_db import system_db_url

    return DbosRunQueue(system_db_url(database), queue=queue, app_version=version or app_version())


async def enqueue_prompt(
    queue: RunQueue, prompt: str | None, *, session_id: str | None = None
) -> QueuedRun:
    """Put ``prompt`` on ``queue`` for the session ``session_id`` (a new one when None); the
    run, whose ``run_id`` ``queue.wait`` / ``queue.status`` take."""
    run = QueuedRun(run_id=new_id(), session_id=session_id or new_id(), prompt=prompt)
    await queue.enqueue(run)
    return run


async def cancel_session_run(
    queue: RunQueue, session_id: str, *, control: SessionControl | None = None
) -> CancelledRun:
    """Cancel the run of ``session_id`` on ``queue`` (the one queued or running: its first
    run or a continuation); what was cancelled. A run no worker took never runs (``taken``
    False). A run a worker took ends ``cancelled``: the queue records the cancel, which the
    run reads as it starts, and ``control`` (the store's ``SessionControl``,
    ``config.stores.control_of``) is asked for the stop signal after that, which a run that
    had started already hears (without ``control``, only a run not started yet is reached).
    Raises ``SessionStateError`` when no run of the session is queued or running."""
    cancelled = await queue.cancel_queued(session_id)
    if cancelled is None:
        raise SessionStateError(
            f"session {session_id} has no run queued or running on the queue: nothing to "
            "cancel (a run waiting for approval has ended: deny its calls instead)"
        )
    if cancelled.taken and control is not None:
        # a new session its run has not created yet: not started either (it creates the
        # session before it starts, so it reads the record)
        with contextlib.suppress(SessionNotFound):
            await control.request(session_id, "cancel")
    return cancelled
