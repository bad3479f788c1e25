"""Heartbeats: how live workers notice a dead one and recover its runs.

DBOS recovers a process's unfinished workflows when a process with the same executor id starts
again; a worker that never comes back needs someone else to do it. Each worker writes its
executor id and the time (the database's clock, one for every host) into the table
``rho_workers`` of the system database every ``interval`` seconds (the first row before it takes
any run), with its own ``dead_after``. Every worker also looks for rows older than the row's
``dead_after`` and its own (the longer counts): it claims one by deleting
it (one claimant wins: ``DELETE`` with the stale time in its condition), then asks DBOS to
recover that executor's pending workflows (``DBOS._recover_pending_workflows``, the hook DBOS's
own conductor uses), which puts them back on the queue they were enqueued on (the named
queue: DBOS falls back to its internal queue only for a workflow that had none), where any
live worker with capacity takes them, within the queue's concurrency limit. A run of a dead
worker therefore resumes within ``dead_after + interval`` seconds plus the queue's polling
interval.

A worker never claims its own row, however old: it is running, so its runs are too, and
putting them back on the queue would run them twice. Its beats and checks run on a thread of
their own, from its first beat on: not as a task of its event loop, which DBOS's launch and
any blocking call hold for seconds (a live worker was taken for dead during its own start at
a load of 18), nor in asyncio's shared pool, which the runs' blocking calls fill. A worker
recovers others only once it ``watch``es, after DBOS is launched.
"""

from __future__ import annotations

import asyncio
import logging
import math
import threading
from collections.abc import Callable

from rho_adapters.durable import load_dbos
from rho_adapters.durable.system_db import engine_url
from rho_domain.errors import ConfigError

load_dbos()  # MissingExtra naming the extra, before the import below fails

import sqlalchemy as sa  # noqa: E402 - DBOS's dependency: after the check above

LOG = logging.getLogger("rho_adapters.durable")

_METADATA = sa.MetaData()
WORKERS = sa.Table(
    "rho_workers",
    _METADATA,
    sa.Column("executor_id", sa.String(200), primary_key=True),
    sa.Column("app_version", sa.String(200), nullable=False),
    sa.Column("seen_at", sa.Float, nullable=False),
    # the row's own bound: how long its worker may go silent (its --dead-after); NULL in a
    # row an earlier version wrote
    sa.Column("dead_after", sa.Float, nullable=True),
)


class Heartbeat:
    """Writes this worker's heartbeat and recovers the runs of workers whose beat stopped."""

    def __init__(
        self,
        url: str,
        executor_id: str,
        app_version: str,
        *,
        recover: Callable[[str], int],
        interval: float = 2.0,
        dead_after: float = 10.0,
    ) -> None:
        self.engine = sa.create_engine(engine_url(url), pool_pre_ping=True)
        self.executor_id = executor_id
        self.app_version = app_version
        self.recover = recover
        self.interval = interval
        self.dead_after = dead_after
        self._created = False
        self._thread: threading.Thread | None = None
        self._starting = False  # the first beat under way (``start``'s, on a worker thread)
        self._state = threading.Lock()  # start and stop agree on who disposes the engine
        self._stopping = threading.Event()
        self._watching = threading.Event()

    def beat(self) -> None:
        """Write this worker's row (create the table on first use)."""
        if not self._created:
            self._create()
            self._created = True
        mine = {
            "seen_at": self._now(),
            "app_version": self.app_version,
            "dead_after": self.dead_after,
        }
        with self.engine.begin() as conn:
            updated = conn.execute(
                sa.update(WORKERS).where(WORKERS.c.executor_id == self.executor_id).values(mine)
            ).rowcount
            if not updated:
                conn.execute(sa.insert(WORKERS).values(executor_id=self.executor_id, **mine))

    def _create(self) -> None:
        """The table, or its ``dead_after`` column in a table an earlier version made."""
        try:
            _METADATA.create_all(self.engine, checkfirst=True)
        except sa.exc.DBAPIError:  # another worker created it at the same moment
            if not sa.inspect(self.engine).has_table(WORKERS.name):
                raise
        columns = {c["name"] for c in sa.inspect(self.engine).get_columns(WORKERS.name)}
        if "dead_after" not in columns:
            try:
                with self.engine.begin() as conn:
                    conn.execute(sa.text("ALTER TABLE rho_workers ADD COLUMN dead_after FLOAT"))
            except sa.exc.DBAPIError:  # another worker added it at the same moment
                columns = {c["name"] for c in sa.inspect(self.engine).get_columns(WORKERS.name)}
                if "dead_after" not in columns:
                    raise

    def recover_dead(self) -> list[str]:
        """Claim every worker whose heartbeat is older than its own ``dead_after`` (stored in
        its row) and than this worker's, and recover its runs; the executor ids recovered.
        Whose bound counts is the silent worker's, which knows how often it beats: judged
        by the asker's alone, a worker started with ``--dead-after 1`` took every live worker
        beating each 2 s for dead between two beats and put its running runs back on the
        queue, to run a second time beside it."""
        with self.engine.connect() as conn:
            now = conn.execute(sa.select(self._now())).scalar_one()
            stale = [
                (row.executor_id, row.seen_at)
                for row in conn.execute(
                    sa.select(WORKERS.c.executor_id, WORKERS.c.seen_at, WORKERS.c.dead_after).where(
                        WORKERS.c.seen_at < now - self.dead_after,
                        WORKERS.c.app_version == self.app_version,
                        WORKERS.c.executor_id != self.executor_id,  # alive: it is asking
                    )
                )
                if row.seen_at < now - self._bound(row.dead_after)
            ]
        recovered = []
        for executor_id, seen_at in stale:
            with self.engine.begin() as conn:
                claimed = conn.execute(
                    sa.delete(WORKERS).where(
                        WORKERS.c.executor_id == executor_id, WORKERS.c.seen_at == seen_at
                    )
                ).rowcount
            if claimed:
                count = self.recover(executor_id)
                LOG.warning(
                    "worker %s stopped beating; %d of its runs put back on the queue",
                    executor_id,
                    count,
                )
                recovered.append(executor_id)
        return recovered

    def _bound(self, theirs: object) -> float:
        """How long a row may be silent: its worker's ``dead_after`` or this one's, whichever
        is longer. A row's value is whatever its writer wrote: one that is no number of
        seconds (NULL from an earlier version, infinity or NaN from a hand edit, which
        never compared older and kept a dead worker's runs unrecovered for good; text,
        which SQLite keeps in a FLOAT column and which made every worker's check raise, so
        no dead worker's runs were recovered) is not counted, nor is one below this
        worker's own (0, negative)."""
        seconds = _seconds(theirs)
        return self.dead_after if seconds is None else max(seconds, self.dead_after)

    def _now(self) -> sa.ColumnElement[float]:
        """The database's clock in Unix seconds: every host reads one clock, so a worker whose
        own clock runs behind is never taken for dead (nor a dead one for alive)."""
        if self.engine.dialect.name == "sqlite":
            return sa.cast((sa.func.julianday("now") - 2440587.5) * 86400.0, sa.Float)
        return sa.cast(sa.func.extract("epoch", sa.func.now()), sa.Float)

    def start(self) -> None:
        """Beat now (before any run is taken; a live worker with this executor id first
        waited for, then refused: ``_namesake_gone``), then every ``interval`` seconds on a
        thread of its own until ``stop``. Raises what the first beat raises (the database
        unreachable; ``ConfigError`` for an executor id in use);
        later failures are logged and tried again. A ``stop`` that comes while the first beat
        runs (a cancelled start: this runs on a worker thread, which a cancellation does not
        end) wins: no thread is started and the engine is disposed here, once the beat is
        back."""
        with self._state:
            if self._stopping.is_set():
                return
            self._starting = True
        beating = False
        try:
            if self._namesake_gone():
                self.beat()
                beating = True
        finally:
            with self._state:
                self._starting = False
                stopped = self._stopping.is_set()
                if beating and not stopped:
                    self._thread = threading.Thread(
                        target=self._run, name="rho-heartbeat", daemon=True
                    )
                    self._thread.start()
            if stopped:  # stop left the engine to us: the beat was using it
                self.engine.dispose()

    def _namesake_gone(self) -> bool:
        """Whether no live worker has this executor id; False when ``stop`` came meanwhile.

        DBOS's launch recovers the unfinished runs of its executor id: that is how a worker
        restarted with its ``--executor-id`` picks up what it left. Launched while a worker
        with that id still ran (the same id on two hosts), it ran that worker's runs a second
        time beside it. So a row with this id whose beat is within its bound is waited for,
        up to that bound: silent by then, its worker is gone (a restart); beating again, it
        is alive, and this worker refuses to start (``ConfigError`` naming the id)."""
        if not self._created:
            self._create()
            self._created = True
        seen = None
        while True:
            with self.engine.connect() as conn:
                now = conn.execute(sa.select(self._now())).scalar_one()
                row = conn.execute(
                    sa.select(WORKERS.c.seen_at, WORKERS.c.dead_after).where(
                        WORKERS.c.executor_id == self.executor_id
                    )
                ).first()
            # a row whose beat is no number of seconds (a hand edit) is no live worker's
            if row is None or (seen_at := _seconds(row.seen_at)) is None:
                return True
            bound = self._bound(row.dead_after)
            if seen_at < now - bound:
                return True
            if seen is not None and seen_at != seen:
                raise ConfigError(
                    f"a worker with the executor id {self.executor_id!r} is running (it beat "
                    f"{max(now - seen_at, 0.0):.1f} s ago): give this one another "
                    "--executor-id, or stop that one first; two workers with one id run each "
                    "other's runs twice"
                )
            seen = seen_at
            if self._stopping.wait(min(self.interval, seen_at + bound - now) + 0.01):
                return False

    def watch(self) -> None:
        """From the next beat on, also recover the runs of workers whose beat stopped (once
        the runs can be recovered: DBOS launched)."""
        self._watching.set()

    def _run(self) -> None:
        while not self._stopping.wait(self.interval):
            try:
                self.beat()
                if self._watching.is_set():
                    self.recover_dead()
            except Exception:
                LOG.exception("heartbeat failed; trying again in %.1f s", self.interval)

    async def stop(self) -> None:
        """Stop beating and dispose of the engine (once a first beat under way is back: the
        ``start`` running it does it then). The row stays: runs this worker leaves unfinished
        are recovered by the others once it is stale, as after a crash (a row with nothing
        pending recovers nothing). Idempotent."""
        with self._state:
            self._stopping.set()
            thread, starting = self._thread, self._starting
        if thread is not None:
            await asyncio.to_thread(thread.join)  # a beat under way ends first
        if not starting:
            self.engine.dispose()


def _seconds(value: object) -> float | None:
    """``value`` as a finite number of seconds, or None: a row holds what its writer wrote."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None
