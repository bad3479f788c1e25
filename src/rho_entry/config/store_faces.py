"""What ``rho_entry.config.stores`` chooses for the operator and the server: a store's faces
(``StoreChoice``: the run's store, its signals, the operator's catalog and control) or the
operator's face alone (``Operator``), and how to close what a store holds open.

Apart from ``stores`` because a run never builds them: a one-shot and the facade open their
store with ``session_store`` (the store alone), so these classes are built with the first
``choose_store``/``choose_operator`` (``rho-agent serve``, ``monitor``, ``connect``, a worker).
``stores`` names them lazily.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from rho_domain.errors import ConfigError
from rho_domain.value_methods import value_eq, value_hash, value_repr

if TYPE_CHECKING:
    from rho_domain.ports.session_control import SessionCatalog, SessionControl, SessionOperator
    from rho_domain.ports.signals import SignalSource
    from rho_domain.ports.store import SessionStore


@attrs.frozen
class StoreChoice:
    """The chosen store's three faces, and how messages name it."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    store: SessionStore
    signals: SignalSource | None
    sessions: SessionOperator  # FileSessions, PgSessions, ...
    shown: str
    origin: str
    root: Path | None = None
    """The sessions directory of a file store (None for another store)."""

    async def aclose(self) -> None:
        """Close what the store holds open (PostgreSQL: its share of the process's pool and
        listener, ``PgSessionStore.aclose``; files: nothing). Idempotent."""
        await close_store(self.store)
        await close_store(self.sessions)

    @property
    def catalog(self) -> SessionCatalog:
        """The store's ``SessionCatalog``."""
        found: SessionCatalog = self.sessions
        return found

    @property
    def control(self) -> SessionControl:
        """The store's ``SessionControl``."""
        found: SessionControl = self.sessions
        return found


@attrs.frozen
class Operator:
    """The operator's face of a store alone (``choose_operator``): light for files (the
    monitor loads no yaml or cattrs)."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    sessions: SessionOperator
    shown: str
    origin: str
    root: Path | None = None

    async def aclose(self) -> None:
        """Give back what the sessions hold open (PostgreSQL: a share of the pool; files:
        nothing). Idempotent."""
        await close_store(self.sessions)

    def files_root(self) -> Path:
        """The sessions directory of a file store; ConfigError for another store."""
        if self.root is None:
            raise ConfigError(
                f"this command reads session directories; the store {self.shown} (set by "
                f"{self.origin}) is not one: give a file store (a path) instead"
            )
        return self.root


async def close_store(store: object) -> None:
    """``await store.aclose()`` when the object has one (a PostgreSQL store or catalog, the
    seeds' ``SessionStore``); a store without one holds nothing open."""
    close = getattr(store, "aclose", None)
    if close is not None:
        await close()
