"""Durable runs on DBOS (the ``dbos`` extra): the only package that imports ``dbos``.

- ``steps.DbosSteps``: ``ports.durable.DurableSteps`` as DBOS steps of the running workflow.
- ``worker.DbosWorker``: one worker process: the ``rho.run`` workflow, the named queue it
  consumes with a concurrency limit, the heartbeat through which live workers recover the runs
  of a dead one (``heartbeat.py``).
- ``run_queue.DbosRunQueue``: ``ports.durable.RunQueue`` for any process (a ``DBOSClient``: it
  enqueues and reads statuses without running workflows).
- ``system_db``: the system database URL (SQLite path or PostgreSQL URL) checked and shown
  with its password hidden.

Nothing here is imported by ``import rho_adapters``; ``load_dbos()`` raises ``MissingExtra``
naming the extra when ``dbos`` is not installed.
"""

from __future__ import annotations

from types import ModuleType

from rho_adapters.extras import missing_extra


def load_dbos() -> ModuleType:
    """The ``dbos`` module. Raises ``MissingExtra`` (extra ``dbos``) when it is missing."""
    try:
        import dbos
    except ImportError as exc:
        raise missing_extra("dbos", "dbos", "durable runs") from exc
    return dbos
