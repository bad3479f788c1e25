"""MemorySessions: SessionCatalog and SessionControl over a MemorySessionStore and ManualSignals.

The same contract as the file and PostgreSQL adapters (``tests/store/test_control_contract.py``):
trace lines are the events in the trace codec, liveness is the store's hold (``held``), signals
go to the ``ManualSignals`` the sessions listen to.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

from rho_adapters.codec import encode_event_line
from rho_adapters.fakes.memory_store import MemorySessionStore, summarize
from rho_adapters.fakes.signals import ManualSignals
from rho_domain import events as ev
from rho_domain.errors import SessionLocked
from rho_domain.ports.session_control import (
    PendingApproval,
    SessionCatalog,
    SessionControl,
    Signal,
    TraceLine,
    approval_answer,
    check_directive_text,
    check_request_id,
    pending_approvals,
    run_in_progress,
)
from rho_domain.ports.store import SessionInfo, SessionRecord


class MemorySessions(SessionCatalog, SessionControl):
    """Operator access to the sessions of ``store``; signals are given to ``signals``."""

    def __init__(self, store: MemorySessionStore, signals: ManualSignals | None = None) -> None:
        self.store = store
        self.signals = signals if signals is not None else ManualSignals()
        self._directives: dict[str, int] = {}

    def _info(self, session_id: str) -> SessionInfo:
        key = self.store.resolve(session_id)
        paused = key in self.signals.paused_ids
        whole = f"={key}"  # a resolved short id re-read bare would be a prefix again
        return summarize(
            self.store.record_of(whole),
            self.store.events(whole),
            live=self.store.held(key),
            paused=paused,
        )

    async def sessions(self, *, limit: int = 50) -> tuple[SessionInfo, ...]:
        """See ``SessionCatalog.sessions``."""
        listed = await self.store.list(limit=limit)
        return tuple(self._info(i.id) for i in listed)

    async def info(self, session_id: str) -> SessionInfo:
        """See ``SessionCatalog.info``."""
        return self._info(session_id)

    async def record(self, session_id: str) -> SessionRecord:
        """See ``SessionCatalog.record``."""
        return self.store.record_of(session_id)

    async def recording(self, session_id: str) -> tuple[SessionRecord, tuple[ev.Event, ...]]:
        """See ``SessionCatalog.recording``."""
        return self.store.record_of(session_id), self.store.events(session_id)

    async def trace(self, session_id: str, *, after: int = 0) -> tuple[TraceLine, ...]:
        """See ``SessionCatalog.trace``."""
        events = self.store.events(session_id)
        return tuple(
            TraceLine(seq=i, data=encode_event_line(e).rstrip(b"\n"))
            for i, e in enumerate(events, 1)
            if i > after
        )

    async def follow(self, session_id: str, *, after: int = 0) -> AsyncIterator[TraceLine]:
        """See ``SessionCatalog.follow`` (checked every 10 ms: the fake has no notifications)."""
        seq = after
        while True:
            lines = await self.trace(session_id, after=seq)
            for line in lines:
                yield line
            seq = lines[-1].seq if lines else seq
            if not lines:
                if not run_in_progress(self._info(session_id).liveness):
                    return
                await asyncio.sleep(0.01)

    async def request(self, session_id: str, signal: Signal) -> bool:
        """See ``SessionControl.request``."""
        key = self.store.resolve(session_id)
        if signal == "cancel":
            self.signals.cancel(key)
        elif signal == "pause":
            self.signals.pause(key)
        else:
            if key not in self.signals.paused_ids:
                return False
            self.signals.resume(key)
        return True

    async def add_directive(self, session_id: str, text: str) -> int:
        """See ``SessionControl.add_directive``."""
        check_directive_text(text)
        key = self.store.resolve(session_id)
        offset = self._directives.get(key, 0)
        self._directives[key] = offset + 1
        self.signals.add_directive(text, key)
        return offset

    async def request_export(self, session_id: str, request_id: str) -> None:
        """See ``SessionControl.request_export``."""
        check_request_id(request_id)  # as the real stores: an id names a file or a row
        self.signals.request_export(self.store.resolve(session_id), request_id)

    async def export_answer(self, session_id: str, request_id: str) -> str | None:
        """See ``SessionControl.export_answer``."""
        return self.signals.exports.get(request_id)

    async def withdraw_export(self, session_id: str, request_id: str) -> None:
        """See ``SessionControl.withdraw_export``."""
        self.signals.withdraw_export(self.store.resolve(session_id), request_id)

    async def approvals(self, session_id: str) -> tuple[PendingApproval, ...]:
        """See ``SessionControl.approvals``."""
        return pending_approvals(self.store.events(session_id))

    async def answer(
        self,
        session_id: str,
        call_id: str,
        *,
        approved: bool,
        always: bool = False,
        reason: str = "",
    ) -> None:
        """See ``SessionControl.answer``."""
        key = self.store.resolve(session_id)
        if self.store.held(key):
            raise SessionLocked(f"session {key} is held by this process; answer it there")
        answer = approval_answer(
            await self.approvals(key),
            call_id,
            approved=approved,
            always=always,
            reason=reason,
            at=time.time(),
        )
        await self.store.append(key, [answer])
