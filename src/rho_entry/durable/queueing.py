"""The library API of durable runs: put prompts on a queue, answer, wait, read statuses.

::

    queue = open_queue("runs.sqlite")              # or "postgresql://user:pw@host/db"
    run = await enqueue_prompt(queue, "count the files")   # a new session
    status = await queue.wait(run.run_id, timeout=60)      # "completed", "awaiting_approval"...

Workers (``rho-agent worker``) consume the queue; the session's trace is in the store they
share (``--store``), readable with every tool that reads sessions (``export``, ``stats``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rho_domain.ports.durable import QueuedRun, RunQueue
from rho_domain.run import new_id
from rho_entry.durable.app_version import app_version

if TYPE_CHECKING:
    from rho_adapters.durable.run_queue import DbosRunQueue

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
