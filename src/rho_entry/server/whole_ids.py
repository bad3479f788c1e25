"""The server's face of the store: every session id a client sent, taken whole.

A client names a session by its exact id (``views.valid_id``: never a prefix, ``latest`` or
a path), but a store reads an id shorter than ``run.ID_LENGTH`` as a person's prefix
(``run.takes_exact``): a session ``nightly`` (a peer's row, a directory a hand made) beside
``nightly-2`` was ambiguous on every route, a 404, and could be neither read, run, answered
nor cancelled over HTTP. So every id goes to the store spelled whole (``run.spelled_whole``:
``=nightly``; an id of full length as it is), here, for every catalog and control call the
server makes, rather than at each call site. ``=ID`` from a client is not an id
(``valid_id``): the person's spelling names no session over HTTP.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING

from rho_domain.ports.session_control import SessionOperator, Signal
from rho_domain.run import spelled_whole

if TYPE_CHECKING:
    from rho_domain import events as ev
    from rho_domain.ports.store import SessionInfo, SessionRecord
    from rho_domain.ports.stored_approvals import PendingApproval
    from rho_domain.ports.trace_reads import TraceLine, TraceRead, TraceTail


class WholeIds(SessionOperator):
    """``inner`` with each session id spelled whole; the answers name the sessions as the
    store does (their ids, never the spelling)."""

    def __init__(self, inner: SessionOperator) -> None:
        self.inner = inner

    async def sessions(self, *, limit: int = 50) -> tuple[SessionInfo, ...]:
        """See ``SessionCatalog.sessions``."""
        return await self.inner.sessions(limit=limit)

    async def info(self, session_id: str) -> SessionInfo:
        """See ``SessionCatalog.info``."""
        return await self.inner.info(spelled_whole(session_id))

    async def record(self, session_id: str) -> SessionRecord:
        """See ``SessionCatalog.record``."""
        return await self.inner.record(spelled_whole(session_id))

    async def recording(self, session_id: str) -> tuple[SessionRecord, tuple[ev.Event, ...]]:
        """See ``SessionCatalog.recording``."""
        return await self.inner.recording(spelled_whole(session_id))

    async def trace(self, session_id: str, *, after: int = 0) -> tuple[TraceLine, ...]:
        """See ``SessionCatalog.trace``."""
        return await self.inner.trace(spelled_whole(session_id), after=after)

    async def trace_reads(
        self, tails: Mapping[str, TraceTail | None]
    ) -> dict[str, TraceRead | None]:
        """See ``SessionCatalog.trace_reads``: the ids are the listing's own, read as they
        are (every store reads each by its exact id)."""
        return await self.inner.trace_reads(tails)

    async def last_seq(self, session_id: str) -> int:
        """See ``SessionCatalog.last_seq``."""
        return await self.inner.last_seq(spelled_whole(session_id))

    def follow(self, session_id: str, *, after: int = 0) -> AsyncIterator[TraceLine]:
        """See ``SessionCatalog.follow``."""
        return self.inner.follow(spelled_whole(session_id), after=after)

    async def request(self, session_id: str, signal: Signal) -> bool:
        """See ``SessionControl.request``."""
        return await self.inner.request(spelled_whole(session_id), signal)

    async def add_directive(self, session_id: str, text: str) -> int:
        """See ``SessionControl.add_directive``."""
        return await self.inner.add_directive(spelled_whole(session_id), text)

    async def request_export(self, session_id: str, request_id: str) -> None:
        """See ``SessionControl.request_export``."""
        await self.inner.request_export(spelled_whole(session_id), request_id)

    async def export_answer(self, session_id: str, request_id: str) -> str | None:
        """See ``SessionControl.export_answer``."""
        return await self.inner.export_answer(spelled_whole(session_id), request_id)

    async def withdraw_export(self, session_id: str, request_id: str) -> None:
        """See ``SessionControl.withdraw_export``."""
        await self.inner.withdraw_export(spelled_whole(session_id), request_id)

    async def approvals(self, session_id: str) -> tuple[PendingApproval, ...]:
        """See ``SessionControl.approvals``."""
        return await self.inner.approvals(spelled_whole(session_id))

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
        await self.inner.answer(
            spelled_whole(session_id), call_id, approved=approved, always=always, reason=reason
        )
