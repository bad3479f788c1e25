"""The seeds' names for stored sessions: ``SessionStore`` and ``State.from_jsonl``.

``SessionStore`` is a store of session directories (it holds a ``FileSessionStore`` and
implements the ``SessionStore`` port through it, so it can be passed as ``store=`` anywhere)
with the seeds' conveniences: a default directory, ``resume``
returning a ready ``Session``, ``create_session`` and ``get_latest_id``. Given a
``postgresql://`` URL it is the PostgreSQL store instead, with the same conveniences::

    store = SessionStore()                     # $RHO_AGENT_HOME/sessions or ~/.config/...
    shared = SessionStore("postgresql://rho@db.internal/rho")  # every host with the URL
    session = store.create_session(agent)      # a Session persisted in store
    session = await store.resume("latest")     # a Session continuing a stored one
    await shared.aclose()                      # its connections closed (PostgreSQL)

``State`` is ``rho_domain.state.State`` plus ``from_jsonl`` (replaying a ``trace.jsonl``) and
the documents' mutators (``rho_entry.seed_api.state``).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs

from rho_domain import agent as domain_agent
from rho_domain import events as ev
from rho_domain.config import AgentConfig
from rho_domain.ports.signals import SignalSource
from rho_domain.ports.store import SessionInfo, SessionRecord, SignalingStore
from rho_domain.ports.store import SessionStore as SessionStorePort
from rho_entry.config.home import sessions_dir
from rho_entry.facade import Agent, Session, open_session
from rho_entry.seed_api.state import State

__all__ = ["SessionStore", "State"]


class SessionStore(SessionStorePort, SignalingStore):
    """Sessions under ``base_dir`` (default: the config home's ``sessions``), or where a URL
    says (``postgresql://...``, ``file://...``; read as ``rho_entry.config.stores`` reads it).

    It holds that store (``backend``: a ``FileSessionStore`` or the PostgreSQL store) and
    implements the ``SessionStore`` port through it, so it can be passed as ``store=``
    anywhere; ``root`` and ``session_dir`` are a file store's."""

    def __init__(self, base_dir: Path | str | None = None) -> None:
        self.backend: SessionStorePort
        if isinstance(base_dir, str) and "://" in base_dir:
            from rho_entry.config.stores import choose_store

            self.backend = choose_store(base_dir, os.environ, origin="SessionStore(...)").store
        else:
            from rho_entry.config.stores import file_store

            root = base_dir if base_dir is not None else sessions_dir(os.environ)
            self.backend = file_store(root)

    @staticmethod
    def _not_files() -> AttributeError:
        # AttributeError: a store without directories has no ``root`` (getattr's default)
        return AttributeError(
            "this SessionStore keeps its sessions in PostgreSQL, not in directories"
        )

    @property
    def root(self) -> Path:
        """The directory holding one directory per session."""
        from rho_entry.config.stores import files_root

        found = files_root(self.backend)
        if found is None:
            raise self._not_files()
        return found

    def session_dir(self, session_id: str) -> Path:
        """The directory of an open session, or where a session with this id lives."""
        from rho_entry.config.stores import session_dirs

        dirs = session_dirs(self.backend)
        if dirs is None:
            raise self._not_files()
        return dirs(session_id)

    def signals(self) -> SignalSource:
        """The backend's signals: sentinel files, or PostgreSQL notifications."""
        assert isinstance(self.backend, SignalingStore)  # both of our stores carry signals
        return self.backend.signals()

    async def create(self, record: SessionRecord) -> None:
        """The backend's ``create``: make the session and hold its lock."""
        await self.backend.create(record)

    async def open(self, session_id: str) -> tuple[SessionRecord, tuple[ev.Event, ...]]:
        """The backend's ``open``: lock a stored session and read its events."""
        return await self.backend.open(session_id)

    async def append(self, session_id: str, events: Sequence[ev.Event]) -> None:
        """The backend's ``append``: persist ``events`` in order."""
        await self.backend.append(session_id, events)

    async def list(self, *, limit: int = 50) -> tuple[SessionInfo, ...]:
        """The backend's ``list``: sessions, newest first."""
        return await self.backend.list(limit=limit)

    async def release(self, session_id: str) -> None:
        """The backend's ``release``: persist and drop the session's lock."""
        await self.backend.release(session_id)

    async def aclose(self) -> None:
        """Close what the store holds open: for PostgreSQL, its share of this process's
        connections and listener (the last store of a URL closed, none stay open); for files,
        nothing. Sessions still held stop beating (``release`` them first). Idempotent."""
        from rho_entry.config.stores import close_store

        await close_store(self.backend)

    def create_session(
        self, agent: Agent | domain_agent.Agent, *, session_id: str | None = None, **ports: Any
    ) -> Session:
        """A new ``Session`` of ``agent`` persisted here (its directory appears on first run)."""
        return Session(agent, store=self, session_id=session_id, **ports)

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
        return await open_session(None, resume=session_id, store=self, overrides=overrides, **ports)

    async def get_latest_id(self) -> str | None:
        """The id of the newest session, or None when there is none."""
        newest = await self.list(limit=1)
        return newest[0].id if newest else None
