"""Cancels asked of taken runs: the table ``rho_cancels`` of the durable system database.

A run a worker has taken (DBOS's ``PENDING``) may not have opened its session yet, and a run
clears its session's stop signal as it starts: a cancel sent through the stop signal alone
before that moment was lost, and the run ran to its end (a server answered 409 'no run in
progress'). So the cancel of a taken run is recorded here, by run id (``ask``), and the run
reads it once it has started (``asked``: after clearing the stop signal), while the asker
also requests the stop signal after recording: the run either finds the record or hears the
signal, whatever the timing.

DBOS's own cancel is not used for a taken run: it makes the workflow's next step raise a
``BaseException`` that no layer of the loop catches (the trace would stop without its
``run_end``, the session still held). A run executed again after its worker died reads the
same record and ends ``cancelled`` too, as it should.

A record lives as long as its run: the workflow forgets it when its run ends (``forget``); a
canceller looks at the run again once its record is written and forgets it when the run has
ended (it ended between the canceller's look and its record); every run's end and a worker's
start forget those of runs no longer queued or running (``forget_all_but``: a run whose
workflow failed, a canceller that died between its record and its second look). Kept, they
were never read again, and the table grew by a row for every cancel.
"""

from __future__ import annotations

import threading
from collections.abc import Collection

from rho_adapters.durable import load_dbos
from rho_adapters.durable.cancel_bells import ring
from rho_adapters.durable.system_db import engine_url

load_dbos()  # MissingExtra naming the extra, before the import below fails

import sqlalchemy as sa  # noqa: E402 - DBOS's dependency: after the check above

_METADATA = sa.MetaData()
CANCELS = sa.Table(
    "rho_cancels",
    _METADATA,
    sa.Column("run_id", sa.String(200), primary_key=True),
)


class CancelRecords:
    """The cancels of taken runs in the system database ``url`` (SQLAlchemy's URL of it)."""

    def __init__(self, url: str) -> None:
        self.engine = sa.create_engine(engine_url(url), pool_pre_ping=True)
        self._created = False
        self._lock = threading.Lock()

    def ask(self, run_id: str) -> None:
        """Record a cancel of ``run_id`` (again: nothing more). Blocking: run it in a thread."""
        self._create()
        try:
            with self.engine.begin() as conn:
                conn.execute(sa.insert(CANCELS).values(run_id=run_id))
        except sa.exc.IntegrityError:  # asked before (or at the same moment elsewhere)
            pass
        ring(run_id)  # a run of this process reads the record at once (``cancel_bells``)

    def asked(self, run_id: str) -> bool:
        """Whether a cancel of ``run_id`` is recorded. Blocking: run it in a thread."""
        self._create()
        with self.engine.connect() as conn:
            found = conn.execute(sa.select(CANCELS.c.run_id).where(CANCELS.c.run_id == run_id))
            return found.first() is not None

    def forget(self, run_id: str) -> None:
        """The record of ``run_id`` removed (none: nothing). Blocking: run it in a thread."""
        self._create()
        with self.engine.begin() as conn:
            conn.execute(sa.delete(CANCELS).where(CANCELS.c.run_id == run_id))

    def recorded(self) -> list[str]:
        """The run ids with a record. Blocking: run it in a thread."""
        self._create()
        with self.engine.connect() as conn:
            return [str(row[0]) for row in conn.execute(sa.select(CANCELS.c.run_id))]

    def forget_all_but(self, live: Collection[str], among: Collection[str]) -> int:
        """The records of ``among`` removed, but those of ``live`` (runs still queued or
        running, read after ``among``: a record written since is not in ``among``); how many.
        Blocking: run it in a thread."""
        gone = sorted(set(among) - set(live))
        if not gone:
            return 0
        with self.engine.begin() as conn:
            conn.execute(sa.delete(CANCELS).where(CANCELS.c.run_id.in_(gone)))
        return len(gone)

    def _create(self) -> None:
        """The table, made on first use (by whichever process comes first)."""
        with self._lock:
            if self._created:
                return
            try:
                _METADATA.create_all(self.engine, checkfirst=True)
            except sa.exc.DBAPIError:  # another process created it at the same moment
                if not sa.inspect(self.engine).has_table(CANCELS.name):
                    raise
            self._created = True

    def close(self) -> None:
        """Release the engine's connections."""
        self.engine.dispose()
