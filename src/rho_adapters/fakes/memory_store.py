"""MemorySessionStore: sessions kept in a dict, with the same contract as the file store."""

from __future__ import annotations

import time
from collections.abc import Sequence

import attrs

from rho_adapters.store.meta_fields import order_time
from rho_domain import events as ev
from rho_domain.errors import SessionLocked, SessionNotFound, StoreError
from rho_domain.messages import Usage
from rho_domain.permissions import PermissionProfile
from rho_domain.placement import Placement, kept
from rho_domain.ports.session_control import judge_liveness
from rho_domain.ports.store import SessionInfo, SessionRecord, SessionStore, first_prompt_summary
from rho_domain.run import ambiguous, takes_exact, whole_id_of
from rho_domain.value_methods import value_eq, value_repr


@attrs.define
class _Stored:
    __repr__ = value_repr
    __eq__ = value_eq

    record: SessionRecord
    events: list[ev.Event] = attrs.field(factory=list)


def _created(stored: _Stored) -> tuple[float, str]:
    """The session's place for ``latest`` and the listing's order: its time, none (0) for
    NaN, an infinity or a time no clock has reached (``order_time``), then its id, as the
    stores order them (ties in the order of creation made another session ``latest``)."""
    return order_time(stored.record.created_at, time.time()), stored.record.id


def summarize(
    record: SessionRecord, events: Sequence[ev.Event], *, live: bool, paused: bool = False
) -> SessionInfo:
    """A SessionInfo computed from a record and its events (shared by store adapters)."""
    status, first_prompt, usage, updated = "created", "", Usage(), record.created_at
    placement: Placement | None = None
    for event in events:
        updated = max(updated, event.at)
        match event:
            case ev.RunStarted(prompt=prompt):
                status = "running"
                first_prompt = first_prompt or first_prompt_summary(prompt or "")
                placement = kept(placement, event.placement)
            case ev.RunEnded(status=final):
                status = final
                placement = kept(placement, event.placement)
            case ev.UsageRecorded(usage=used):
                usage = usage + used
    profile = record.config.profile
    profile_name = profile.name if isinstance(profile, PermissionProfile) else profile
    liveness = judge_liveness(status=status, held=live, paused=paused)
    return SessionInfo(
        id=record.id,
        status=status,
        liveness=liveness,
        created_at=record.created_at,
        updated_at=updated,
        model=record.config.model,
        profile=profile_name,
        first_prompt=first_prompt,
        usage=usage,
        working_dir=record.config.working_dir,
        parent_id=record.parent_id,
        labels=dict(record.labels),
        holder="this process" if live else None,
        placement=placement,
    )


class MemorySessionStore(SessionStore):
    """In-memory SessionStore. ``events(id)`` returns what was persisted, for assertions."""

    def __init__(self) -> None:
        self._sessions: dict[str, _Stored] = {}
        self._locked: set[str] = set()

    def held(self, session_id: str) -> bool:
        """True while ``create`` or ``open`` holds the session (until ``release``)."""
        return session_id in self._locked

    def record_of(self, session_id: str) -> SessionRecord:
        """The record of a session (id, unique prefix or ``latest``)."""
        return self._sessions[self._resolve(session_id)].record

    def resolve(self, session_id: str) -> str:
        """The exact id for an id, a unique prefix or ``latest``; raises SessionNotFound."""
        return self._resolve(session_id)

    def events(self, session_id: str) -> tuple[ev.Event, ...]:
        """Every event stored for ``session_id`` (an id or a unique prefix), in order."""
        return tuple(self._sessions[self._resolve(session_id)].events)

    def _resolve(self, session_id: str) -> str:
        whole = whole_id_of(session_id)
        if whole is not None:  # ``=ID``: that whole id and nothing else
            if whole not in self._sessions:
                raise SessionNotFound(f"no session has the whole id {whole!r}")
            return whole
        if session_id in self._sessions and takes_exact(session_id):
            return session_id
        if session_id == "latest" and self._sessions:
            return max(self._sessions.values(), key=_created).record.id
        matches = [i for i in self._sessions if i.startswith(session_id)]
        if len(matches) == 1:
            return matches[0]
        if not matches:
            raise SessionNotFound(f"no session matches {session_id!r}")
        raise SessionNotFound(ambiguous(session_id, sorted(matches)))

    async def create(self, record: SessionRecord) -> None:
        """See ``SessionStore.create``."""
        if record.id in self._sessions:
            raise StoreError(f"session {record.id} already exists")
        self._sessions[record.id] = _Stored(record)
        self._locked.add(record.id)

    async def open(self, session_id: str) -> tuple[SessionRecord, tuple[ev.Event, ...]]:
        """See ``SessionStore.open``."""
        key = self._resolve(session_id)
        if key in self._locked:
            raise SessionLocked(f"session {key} is already open in this process")
        self._locked.add(key)
        stored = self._sessions[key]
        return stored.record, tuple(stored.events)

    async def append(self, session_id: str, events: Sequence[ev.Event]) -> None:
        """See ``SessionStore.append``."""
        if session_id not in self._sessions:
            raise SessionNotFound(f"no session {session_id!r}; create it first")
        self._sessions[session_id].events.extend(e for e in events if ev.is_persistent(e))

    async def list(self, *, limit: int = 50) -> tuple[SessionInfo, ...]:
        """See ``SessionStore.list``."""
        stored = sorted(self._sessions.values(), key=_created, reverse=True)
        return tuple(
            summarize(s.record, s.events, live=s.record.id in self._locked) for s in stored[:limit]
        )

    async def release(self, session_id: str) -> None:
        """See ``SessionStore.release``."""
        self._locked.discard(session_id)
