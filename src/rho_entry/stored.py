"""The seeds' names for stored sessions: ``SessionStore`` and ``State.from_jsonl``.

``SessionStore`` is the file store of session directories (``FileSessionStore``, so it can be
passed as ``store=`` anywhere) with the seeds' conveniences: a default directory, ``resume``
returning a ready ``Session``, ``create_session`` and ``get_latest_id``. Given a
``postgresql://`` URL it is the PostgreSQL store instead, with the same conveniences::

    store = SessionStore()                     # $RHO_AGENT_HOME/sessions or ~/.config/...
    shared = SessionStore("postgresql://rho@db.internal/rho")  # every host with the URL
    session = store.create_session(agent)      # a Session persisted in store
    session = await store.resume("latest")     # a Session continuing a stored one

``State`` is ``rho_domain.state.State`` plus ``from_jsonl`` (replaying a ``trace.jsonl``) and
the documents' mutators (``rho_entry.seed_state``).
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any

import attrs

from rho_adapters.store import FileSessionStore
from rho_domain.agent import Agent
from rho_domain.config import AgentConfig
from rho_entry.facade import Session
from rho_entry.home import sessions_dir
from rho_entry.seed_state import State

__all__ = ["SessionStore", "State"]


class _Conveniences:
    """The seeds' conveniences over any store of ours (mixed into each)."""

    def create_session(
        self, agent: Agent, *, session_id: str | None = None, **ports: Any
    ) -> Session:
        """A new ``Session`` of ``agent`` persisted here (its directory appears on first run)."""
        return Session(agent, store=self, session_id=session_id, **ports)  # type: ignore[arg-type]

    async def resume(
        self, session_id: str, *, agent_config: AgentConfig | None = None, **ports: Any
    ) -> Session:
        """The stored session (id, unique prefix or ``latest``), ready to run again.

        ``agent_config`` replaces the saved config (the seeds' argument); without it the saved
        config is used as ``Session.resume`` allows it: a profile within readonly, your
        endpoint, no inherited auto-approval. Raises ``SessionNotFound``, ``SessionLocked``,
        or ``ConfigError`` when the saved config asks for more.
        """
        overrides = None
        if agent_config is not None:
            overrides = {a.name: getattr(agent_config, a.name) for a in attrs.fields(AgentConfig)}
        store: Any = self
        return await Session.resume(session_id, store=store, overrides=overrides, **ports)

    async def get_latest_id(self) -> str | None:
        """The id of the newest session, or None when there is none."""
        store: Any = self
        newest = await store.list(limit=1)
        return newest[0].id if newest else None


class SessionStore(_Conveniences, FileSessionStore):
    """Session directories under ``base_dir`` (default: the config home's ``sessions``); a
    ``postgresql://`` URL gives a ``PostgresSessionStore`` instead."""

    def __new__(cls, base_dir: Path | str | None = None) -> Any:  # noqa: D102 (the class's)
        if isinstance(base_dir, str) and base_dir.startswith(("postgresql://", "postgres://")):
            from rho_entry.stores import choose_store

            made = choose_store(base_dir, os.environ, origin="SessionStore(...)").store
            backend = getattr(made, "backend")  # noqa: B009 (a PgSessionStore's)
            return _postgres_class()(backend)
        return super().__new__(cls)

    def __init__(self, base_dir: Path | str | None = None) -> None:
        if isinstance(base_dir, str) and base_dir.startswith("file://"):
            from rho_entry.stores import choose_store

            base_dir = getattr(choose_store(base_dir, os.environ).store, "root")  # noqa: B009
        super().__init__(base_dir if base_dir is not None else sessions_dir(os.environ))


@functools.cache
def _postgres_class() -> type:
    """``PostgresSessionStore``: the PostgreSQL store with the conveniences (built on first
    use: the driver's adapters are imported only then)."""
    from rho_adapters.pgstore import PgSessionStore

    return type("PostgresSessionStore", (_Conveniences, PgSessionStore), {"__module__": __name__})
