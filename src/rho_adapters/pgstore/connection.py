"""Where the PostgreSQL session store is, how it is named in messages, and its connection pool.

The URL may hold a password; it never leaves this module in clear: ``shown_url`` replaces it
with ``***`` and ``StoreProblem`` messages are scrubbed of it, so no error, log line or trace
carries it. ``origin`` names the setting the URL came from (``--store``, ``$RHO_AGENT_STORE``,
``store: in agent.yaml``) so that an error says what to fix.

The pool is thread-safe (the adapters run the blocking driver in worker threads, which keeps
them free of any one event loop: the CLI runs a new loop per command, the library a loop per
sync call). It holds at most ``size`` connections for the whole process, whatever the number of
sessions; a session never holds a connection between calls.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlsplit

import attrs

from rho_adapters.extras import missing_extra
from rho_domain.errors import ConfigError, StoreError
from rho_domain.url_logins import hide_url_logins
from rho_domain.value_methods import value_eq, value_hash, value_repr

log = logging.getLogger("rho_adapters.pgstore")

POOL_SIZE = 8
"""Connections per process and URL (appends, listings, signals); LISTEN has one more."""

CONNECT_TIMEOUT = 5


def shown_url(url: str) -> str:
    """The URL with its password (if any) replaced by ``***`` (``url_logins``'s one rule)."""
    return hide_url_logins(url)


@attrs.frozen
class StoreAddress:
    """A PostgreSQL store: the URL (secret: never printed) and the setting it came from."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    url: str = attrs.field(repr=False)
    origin: str = "the store setting"

    @property
    def shown(self) -> str:
        """The URL as messages show it (password hidden)."""
        return shown_url(self.url)

    def scrub(self, text: str) -> str:
        """``text`` without the URL's password, whatever quoted it."""
        try:
            password = urlsplit(self.url).password
        except ValueError:
            password = None
        return text.replace(password, "***") if password else text

    def problem(self, what: str, exc: BaseException | str) -> StoreError:
        """A StoreError saying what failed, on which store, from which setting."""
        detail = self.scrub(str(exc).strip().replace("\n", " "))
        return StoreError(
            f"{what}: the session store {self.shown} (set by {self.origin}) failed: {detail}"
        )


def load_psycopg(address: StoreAddress) -> Any:
    """The ``psycopg`` module, or a ConfigError naming the extra, the URL and the setting."""
    try:
        import psycopg
    except ImportError as exc:
        missing = missing_extra("psycopg", "postgres", "the PostgreSQL session store")
        raise ConfigError(f"{address.shown} (set by {address.origin}): {missing}") from exc
    return psycopg


@contextlib.contextmanager
def pg_errors(address: StoreAddress, what: str) -> Iterator[None]:
    """The one place where driver errors become StoreError (password scrubbed)."""
    psycopg = load_psycopg(address)
    try:
        yield
    except StoreError:
        raise
    except psycopg.errors.InsufficientPrivilege as exc:
        raise address.problem(f"{what} (the role lacks a right it needs)", exc) from None
    except psycopg.Error as exc:
        raise address.problem(what, exc) from None


class Pool:
    """At most ``size`` connections, lent one at a time (``connection()``), reused. Each new
    connection is given to ``prepare`` (in autocommit) before its first use."""

    def __init__(
        self,
        address: StoreAddress,
        *,
        size: int = POOL_SIZE,
        prepare: Callable[[Any], None] | None = None,
    ) -> None:
        self.address = address
        self.size = size
        self.prepare = prepare
        self._idle: queue.LifoQueue[Any] = queue.LifoQueue()
        self._slots = threading.BoundedSemaphore(size)
        self._opened = 0
        self._lock = threading.Lock()
        self._closes = 0  # how many times ``close`` ran: a connection lent before one is not kept

    @property
    def opened(self) -> int:
        """Connections open now (idle or lent)."""
        with self._lock:
            return self._opened

    def connect(self, *, autocommit: bool = False) -> Any:
        """A new connection outside the pool (the listener's). Its transactions are READ
        COMMITTED whatever the server's ``default_transaction_isolation``: the store's work
        relies on each statement seeing what committed before it (the migration's check of
        the version once the lock is won, a claim's recheck after ``FOR UPDATE``); under a
        database's ``serializable`` default, a second host starting beside the first read the
        store as empty and failed creating its tables ('relation already exists')."""
        psycopg = load_psycopg(self.address)
        with pg_errors(self.address, "cannot connect"):
            # prepare_threshold=None: psycopg prepares a statement on the server after its
            # fifth run, which a transaction-mode pooler (PgBouncer's pool_mode=transaction)
            # sends to another server connection: 'prepared statement "_pg3_0" does not
            # exist' in the middle of a claim or an append
            conn = psycopg.connect(
                self.address.url,
                autocommit=True,
                connect_timeout=CONNECT_TIMEOUT,
                prepare_threshold=None,
            )
            try:
                if self.prepare is not None:
                    self.prepare(conn)
                conn.autocommit = autocommit
            except BaseException:
                conn.close()
                raise
        conn.isolation_level = psycopg.IsolationLevel.READ_COMMITTED
        return conn

    @contextlib.contextmanager
    def connection(self, *, transaction: bool = True) -> Iterator[Any]:
        """A pooled connection; its work is committed when the block ends, rolled back when it
        raises (``transaction=False``: each statement commits alone, one round trip, for work
        that is one statement). A broken connection is closed, not returned."""
        self._slots.acquire()
        conn = None
        lent_at = self._closes
        try:
            conn = self._take()
            with pg_errors(self.address, "a query failed"):
                if not transaction:
                    yield conn
                    return
                with conn.transaction():
                    yield conn
        finally:
            if conn is not None:
                # given back after a ``close`` (a query still running in a thread its caller
                # stopped waiting for): closed, not kept, or it would stay open until next use
                if conn.closed or conn.broken or lent_at != self._closes:
                    self._discard(conn)
                else:
                    self._idle.put(conn)
            self._slots.release()

    def _take(self) -> Any:
        while True:
            try:
                conn = self._idle.get_nowait()
            except queue.Empty:
                conn = self.connect(autocommit=True)  # transactions are explicit blocks
                with self._lock:
                    self._opened += 1
                return conn
            if not (conn.closed or conn.broken):
                return conn
            self._discard(conn)

    def _discard(self, conn: Any) -> None:
        with contextlib.suppress(Exception):
            conn.close()
        with self._lock:
            self._opened -= 1

    def close(self) -> None:
        """Close the idle connections; the lent ones close when they are given back. The pool
        stays usable: the next ``connection()`` connects again."""
        with self._lock:
            self._closes += 1
        while True:
            try:
                conn = self._idle.get_nowait()
            except queue.Empty:
                return
            self._discard(conn)
