"""PgBackend: what the PostgreSQL adapters of one process share for one store URL.

- one connection pool (``connection.Pool``), the schema checked once;
- this backend's name as a holder (``schema.holder_name``: unique by construction), written
  on the sessions it holds;
- one background thread that LISTENs on the ``rho`` channel and wakes the waiters of this
  process (a cancel, a new trace line) at once, and between notifications beats: one UPDATE
  renews ``beat`` on the sessions held here (``held``: ``held_here``), whatever their number.

Ownership: the thread runs only while something here needs it, counted by ``start`` / ``stop``
(a session held by this process, a cancel waiter, a live tail): the last ``stop`` ends it, so a
process whose sessions were released (or that never closes its stores) keeps no listener and
never logs a reconnection to a database it stopped using. The pool belongs to the store objects
built over the backend (``acquire`` / ``release``, called by their ``aclose``): the last
``release`` ends the thread and closes the pool's connections. Either comes back on next use;
a use while no store object holds a share closes its connection when it ends (``run``).

Why a thread: the adapters work from any event loop (the CLI runs one per command), and beats
go on while a loop is blocked. Waiters are ``asyncio.Event``s set with ``call_soon_threadsafe``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import select
import socket
import threading
import time
from collections import defaultdict
from typing import Any

from rho_adapters.pgstore.connection import POOL_SIZE, Pool, StoreAddress, pg_errors
from rho_adapters.pgstore.creators import creator_name
from rho_adapters.pgstore.held_here import HeldHere
from rho_adapters.pgstore.schema import CHANNEL, declare, ensure_schema, holder_name
from rho_adapters.store.trace import TRACE_BYTES
from rho_domain.errors import StoreError

log = logging.getLogger("rho_adapters.pgstore")

HEARTBEAT_SECONDS = 2.0
"""How often the holder renews ``beat`` on the sessions it holds."""

STALE_AFTER_SECONDS = 8.0
"""A holder whose beat is older than this is gone: its sessions show ``stale`` (or their last
status) and may be opened elsewhere. The bound on noticing a dead host is this plus a beat."""


class PgBackend:
    """The shared part of the PostgreSQL adapters (see the module docstring)."""

    def __init__(
        self,
        address: StoreAddress,
        *,
        heartbeat: float = HEARTBEAT_SECONDS,
        stale_after: float = STALE_AFTER_SECONDS,
        pool_size: int | None = None,
        trace_bytes: int = TRACE_BYTES,
        creator: str | None = None,
    ) -> None:
        self.address = address
        self.creator = creator_name() if creator is None else creator  # whose ``latest``
        self.heartbeat = heartbeat
        self.stale_after = stale_after
        self.trace_bytes = trace_bytes  # the most of a trace read at once (a test's smaller)
        size = POOL_SIZE if pool_size is None else pool_size
        self.pool = Pool(address, size=size, prepare=declare)
        self._holder: str | None = None
        self.held = HeldHere()  # the sessions this holder holds here: beaten, or taken back
        self._ready = False
        self._ready_lock = threading.Lock()
        self._waiters: dict[str, set[tuple[asyncio.AbstractEventLoop, asyncio.Event]]] = (
            defaultdict(set)
        )
        self._waiters_lock = threading.Lock()
        self._listener: threading.Thread | None = None
        self._stop = threading.Event()  # the running thread's own: a new thread, a new event
        self._bell: socket.socket | None = None  # closed by ``_halt``: the thread stops waiting
        self._listening = threading.Event()
        self._ending: list[threading.Thread] = []  # halted threads that may still be closing
        self._uses = 0  # start() calls not yet stopped: while > 0 the thread runs
        self._owners = 0  # acquire() calls not yet released

    # -- connections ---------------------------------------------------------------------------

    @property
    def holder(self) -> str:
        """This backend's name on the sessions it holds (``schema.holder_name``), drawn by
        ``ready`` (blocking) on first use."""
        if self._holder is None:
            self.ready()
        assert self._holder is not None  # ready() drew it
        return self._holder

    def ready(self) -> None:
        """Check (create or migrate) the schema once per process and draw this backend's
        ``holder``. Blocking."""
        with self._ready_lock:
            if self._ready:
                return
            with self.pool.connection() as conn:  # kept or closed as ``run``'s, next
                ensure_schema(conn, self.address)
                self._holder = holder_name(conn)
            self._ready = True

    def run(self, work: Any, *args: Any, transaction: bool = True) -> Any:
        """``work(conn, *args)`` in one transaction on a pooled connection (``transaction``
        False: one statement, committed alone). Blocking. Used while no store object holds a
        share (``acquire``), the connection is closed after the work, not kept: nobody would
        close it again (garbage-collected with the process: psycopg's ResourceWarning)."""
        try:
            self.ready()
            with self.pool.connection(transaction=transaction) as conn:
                return work(conn, *args)
        finally:
            self._close_unowned()

    def _close_unowned(self) -> None:
        with self._ready_lock:
            unowned = self._owners == 0
        if unowned:
            self.pool.close()

    async def call(self, work: Any, *args: Any) -> Any:
        """``run`` in a worker thread."""
        return await asyncio.to_thread(self.run, work, *args)

    # -- notifications and heartbeats ----------------------------------------------------------

    def start(self) -> None:
        """Take one use of the listening and beating thread, starting it if none runs; returns
        when it listens. Pair each call with ``stop`` (a held session's release, the end of a
        wait). Blocking."""
        with self._ready_lock:
            self._uses += 1
            if self._listener is None or not self._listener.is_alive() or self._stop.is_set():
                self._stop, self._listening = threading.Event(), threading.Event()
                self._bell, bell = socket.socketpair()  # ``_halt`` closes its end: the ring
                self._listener = threading.Thread(
                    target=self._listen,
                    args=(self._stop, self._listening, bell),
                    name="rho-pg-listen",
                    daemon=True,  # a process that never stops it still exits
                )
                self._listener.start()
            listening = self._listening
        if not listening.wait(10):
            self.stop()
            raise self.address.problem("cannot listen for signals", "no LISTEN within 10 s")

    async def start_off_loop(self) -> None:
        """``start`` in a worker thread, for async callers. A caller cancelled meanwhile takes
        no use: the thread's use is given back when done (else the listener outlives all)."""
        starting = asyncio.ensure_future(asyncio.to_thread(self.start))
        try:
            await asyncio.shield(starting)
        except asyncio.CancelledError:
            starting.add_done_callback(self._give_back_if_started)
            raise

    def _give_back_if_started(self, starting: asyncio.Future[None]) -> None:
        if not starting.cancelled() and starting.exception() is None:
            self.stop()

    def stop(self) -> None:
        """Give back one use taken by ``start``; the last one ends the thread (woken from its
        wait, it closes its connection at once and logs nothing more)."""
        with self._ready_lock:
            self._uses = max(0, self._uses - 1)
            if self._uses == 0:
                self._halt()

    def _halt(self) -> threading.Thread | None:
        # under _ready_lock: the running thread (if any) told to end, and forgotten
        self._stop.set()
        if self._bell is not None:  # closing this end wakes the thread's wait (EOF) at once
            self._bell.close()
            self._bell = None
        ended, self._listener = self._listener, None
        if ended is not None:  # ``close`` waits for it too: its connection closes as it ends
            self._ending = [t for t in self._ending if t.is_alive()] + [ended]
        return ended

    @property
    def listening(self) -> bool:
        """True while a listener thread runs for this backend."""
        with self._ready_lock:
            return self._listener is not None and self._listener.is_alive()

    def waiter(self, key: str) -> asyncio.Event:
        """An event set when ``key`` (``cancel <id>``, ``trace <id>``) is notified, or when the
        listener reconnected (look again). Call it on the loop that waits, after ``start``."""
        event = asyncio.Event()
        with self._waiters_lock:
            self._waiters[key].add((asyncio.get_running_loop(), event))
        return event

    def forget(self, key: str, event: asyncio.Event) -> None:
        """Stop waking ``event``."""
        with self._waiters_lock:
            entries = self._waiters.get(key, set())
            for entry in [e for e in entries if e[1] is event]:
                entries.discard(entry)
            if not entries:
                self._waiters.pop(key, None)

    def _wake(self, key: str | None) -> None:
        with self._waiters_lock:
            if key is None:
                targets = [e for entries in self._waiters.values() for e in entries]
            else:
                targets = list(self._waiters.get(key, ()))
        for loop, event in targets:
            with contextlib.suppress(RuntimeError):  # that loop is closed: nobody waits
                loop.call_soon_threadsafe(event.set)

    def _listen(
        self, stop: threading.Event, listening: threading.Event, bell: socket.socket
    ) -> None:
        with bell:  # the receiving end of the halting bell is this thread's to close
            self._listen_until(stop, listening, bell)

    def _listen_until(
        self, stop: threading.Event, listening: threading.Event, bell: socket.socket
    ) -> None:
        backoff = 0.2
        while not stop.is_set():
            try:
                conn = self.pool.connect(autocommit=True)
            except StoreError as exc:
                if stop.is_set():
                    return  # stopped while connecting: nobody needs it, say nothing
                log.warning("%s; retrying in %.1f s", exc, backoff)
                stop.wait(backoff)
                backoff = min(backoff * 2, 5.0)
                continue
            backoff = 0.2
            try:
                conn.execute(f"LISTEN {CHANNEL}")
                listening.set()
                self._wake(None)  # whatever was missed while not listening: look again
                self._serve(conn, stop, bell)
            except Exception as exc:  # noqa: BLE001 (a dropped connection: reconnect, never die)
                if stop.is_set():
                    return  # the finally closes the connection
                log.warning("session store listener: %s", self.address.scrub(str(exc)))
            finally:
                with contextlib.suppress(Exception):
                    conn.close()

    def _serve(self, conn: Any, stop: threading.Event, bell: socket.socket) -> None:
        # One wait on the connection's socket and the halting bell together, so a halt (the
        # last ``stop``, ``close``) ends it at once rather than after up to a heartbeat; then
        # psycopg reads what arrived without waiting (``timeout=0`` also hands over what came
        # in during the heartbeat's UPDATE).
        next_beat = time.monotonic()
        while not stop.is_set():
            for note in conn.notifies(timeout=0):
                self._wake(note.payload)
            if time.monotonic() >= next_beat:
                with pg_errors(self.address, "heartbeat"):
                    conn.execute(
                        "UPDATE rho_sessions SET beat = now() WHERE holder = %s AND id = ANY(%s)",
                        (self._holder, self.held.ids()),
                    )
                next_beat = time.monotonic() + self.heartbeat
                continue
            timeout = max(0.0, next_beat - time.monotonic())
            select.select([conn.fileno(), bell], [], [], timeout)

    def acquire(self) -> None:
        """Count one owner of the pool (a store object; ``release`` when it is closed)."""
        with self._ready_lock:
            self._owners += 1

    def release(self) -> None:
        """Give back an ``acquire``; the last one closes the backend (``close``)."""
        with self._ready_lock:
            self._owners = max(0, self._owners - 1)
            last = self._owners == 0
        if last:
            self.close()

    def close(self, *, wait: float | None = None) -> None:
        """End the thread (whatever its uses), wait for it to close its connection, and close
        the pool's idle connections. The backend stays usable: the next use reconnects and
        the next ``start`` listens again. Blocking (at most ``wait`` s, default two beats)."""
        with self._ready_lock:
            self._uses = 0
            self._halt()
            ending, self._ending = self._ending, []
        limit = time.monotonic() + (self.heartbeat * 2 + 1 if wait is None else wait)
        for thread in ending:  # the one just halted and any a last ``stop`` halted before
            if thread is not threading.current_thread():
                thread.join(max(0.0, limit - time.monotonic()))
        self.pool.close()
