"""Sessions, signals and operator control on PostgreSQL (extra ``postgres``; psycopg is
imported only when a store is used).

``postgres_store(url, origin=...)`` returns the three adapters of one store, sharing the
process's backend for that URL (one pool, one listener, one heartbeat):

- ``PgSessionStore`` (SessionStore): the trace in ``rho_events``, one driver per session
  (a claim renewed by heartbeats), a versioned schema created or migrated on first use;
- ``PgSignals`` (SignalSource): cancel by LISTEN/NOTIFY, pause, directives, exports;
- ``PgSessions`` (SessionCatalog, SessionControl): listings with liveness, trace lines and a
  live tail, signals and answers from any host.

Lifetime: the listener thread runs only while a session is held here or a wait/tail is under
way. Each ``PgSessionStore`` (and a ``PgSessions`` built alone) holds a share of the backend
until its ``aclose()``; the three adapters of ``postgres_store`` share the store's, so closing
the store closes them (``PostgresStore.aclose``). When no share of the URL is left, the pool's
connections close; a closed adapter used again connects for that call only (a connection no
share holds would stay open until the process ends).
"""

from __future__ import annotations

import threading
from typing import Any

import attrs

from rho_adapters.pgstore.backend import PgBackend
from rho_adapters.pgstore.connection import StoreAddress, load_psycopg, shown_url
from rho_adapters.pgstore.control import PgSessions
from rho_adapters.pgstore.schema import SCHEMA_VERSION
from rho_adapters.pgstore.signals import PgSignals
from rho_adapters.pgstore.store import PgSessionStore
from rho_domain.value_methods import value_eq, value_hash, value_repr

__all__ = [
    "SCHEMA_VERSION",
    "PgBackend",
    "PgSessionStore",
    "PgSessions",
    "PgSignals",
    "PostgresStore",
    "StoreAddress",
    "postgres_sessions",
    "postgres_store",
    "shown_url",
]


@attrs.frozen
class PostgresStore:
    """The adapters of one PostgreSQL store."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    store: PgSessionStore
    signals: PgSignals
    sessions: PgSessions

    async def aclose(self) -> None:
        """Close the store and the catalog (``PgSessionStore.aclose``); idempotent."""
        try:
            await self.store.aclose()
        finally:
            await self.sessions.aclose()


def postgres_store(url: str, *, origin: str = "the store setting", **options: Any) -> PostgresStore:
    """The adapters for ``url`` (``postgresql://...``), sharing this process's backend for it.
    Nothing connects until first use; ``options`` (``heartbeat``, ``stale_after``,
    ``pool_size``) apply when the backend is first built."""
    backend = backend_for(StoreAddress(url, origin), **options)
    return of_backend(backend)


def postgres_sessions(url: str, *, origin: str = "the store setting", **options: Any) -> PgSessions:
    """The operator's adapter alone (listings, traces, signals, answers), holding a share of
    this process's backend for ``url`` until its ``aclose``."""
    return PgSessions(backend_for(StoreAddress(url, origin), **options))


def of_backend(backend: PgBackend) -> PostgresStore:
    """The adapters over an existing backend (tests build one with their own bounds)."""
    return PostgresStore(
        store=PgSessionStore(backend),
        signals=PgSignals(backend),
        sessions=PgSessions(backend, owner=False),  # the store's share covers the three
    )


_BACKENDS: dict[str, PgBackend] = {}
_BACKENDS_LOCK = threading.Lock()


def backend_for(address: StoreAddress, **options: Any) -> PgBackend:
    """The process's backend for this URL (one pool and one listener per URL): every store
    object the process builds for it shares them. ``options`` apply when it is first built.
    Without psycopg, a ``ConfigError`` naming the extra now, not at the first write: a run
    printed its session header, then failed on its first event."""
    load_psycopg(address)
    with _BACKENDS_LOCK:
        found = _BACKENDS.get(address.url)
        if found is None:
            found = _BACKENDS[address.url] = PgBackend(address, **options)
        return found
