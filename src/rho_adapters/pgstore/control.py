"""PgSessions: SessionCatalog and SessionControl on PostgreSQL, from any host with the URL
(liveness as ``listing.info_of`` judges it, on the server's clock)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Mapping
from typing import Any

from rho_adapters.pgstore.backend import PgBackend
from rho_adapters.pgstore.listing import (
    ROW,
    info_of,
    list_sessions,
    record_columns,
    record_of,
    resolve_id,
)
from rho_adapters.pgstore.schema import (
    CHANNEL,
    bounded,
    bounded_lines,
    from_column,
    to_column,
    too_large,
)
from rho_adapters.pgstore.store import PgSessionStore
from rho_adapters.pgstore.trace_count import TraceCounts
from rho_adapters.pgstore.trace_tails import tail_read
from rho_adapters.store.signals import EXPORT_BYTES
from rho_adapters.store.trace import parse_trace
from rho_domain import events as ev
from rho_domain.errors import SessionLocked, StoreError
from rho_domain.ports.session_control import (
    PendingApproval,
    SessionCatalog,
    SessionControl,
    Signal,
    TraceLine,
    answer_through,
    check_directive_text,
    check_request_id,
    held_by_live_process,
    pending_approvals,
    run_in_progress,
)
from rho_domain.ports.store import SessionInfo, SessionRecord
from rho_domain.ports.trace_reads import TraceRead, TraceTail

FOLLOW_RECHECK_SECONDS = 1.0


ANSWER = bounded("answer", EXPORT_BYTES)  # an export's answer, NULL past the bound


class PgSessions(SessionCatalog, SessionControl):
    """Operator access to the sessions of one PostgreSQL store."""

    def __init__(self, backend: PgBackend, *, owner: bool = True) -> None:
        self.backend = backend
        self._counts = TraceCounts()
        self._closed = not owner
        if owner:  # a share of the backend until aclose (``of_backend``: the store's share)
            backend.acquire()

    async def aclose(self) -> None:
        """Give back this object's share of the backend (see ``PgSessionStore.aclose``); one
        built with ``owner=False`` (beside a store, by ``of_backend``) has none. Idempotent."""
        if not self._closed:
            self._closed = True
            await asyncio.to_thread(self.backend.release)

    async def sessions(self, *, limit: int = 50) -> tuple[SessionInfo, ...]:
        """See ``SessionCatalog.sessions``."""
        return await list_sessions(self.backend, limit=limit)

    def _one(self, conn: Any, ref: str) -> SessionInfo:
        session_id = resolve_id(conn, ref, self.backend.creator)
        row = conn.execute(ROW + " WHERE id = %s", (self.backend.stale_after, session_id))
        return info_of(tuple(row.fetchone()))

    async def info(self, session_id: str) -> SessionInfo:
        """See ``SessionCatalog.info``."""
        found: SessionInfo = await self.backend.call(self._one, session_id)
        return found

    async def record(self, session_id: str) -> SessionRecord:
        """See ``SessionCatalog.record``."""

        def read(conn: Any) -> tuple[Any, ...]:
            exact = resolve_id(conn, session_id, self.backend.creator)
            return tuple(
                conn.execute(
                    f"SELECT {record_columns()} FROM rho_sessions"  # noqa: S608
                    " WHERE id = %s",  # record_columns is a constant of ours
                    (exact,),
                ).fetchone()
            )

        return record_of(await self.backend.call(read))

    async def recording(self, session_id: str) -> tuple[SessionRecord, tuple[ev.Event, ...]]:
        """See ``SessionCatalog.recording``."""
        record = await self.record(session_id)
        return record, await self.events(record.id)

    async def trace(self, session_id: str, *, after: int = 0) -> tuple[TraceLine, ...]:
        """See ``SessionCatalog.trace``."""

        def read(conn: Any) -> list[Any]:
            exact = resolve_id(conn, session_id, self.backend.creator)
            return bounded_lines(conn, exact, after, self.backend.trace_bytes)

        rows = await self.backend.call(read)
        return tuple(TraceLine(seq=int(seq), data=line.encode()) for seq, line in rows)

    async def trace_reads(
        self, tails: Mapping[str, TraceTail | None]
    ) -> dict[str, TraceRead | None]:
        """See ``SessionCatalog.trace_reads``: each tail's row checked by its version
        (``trace_tails``), only the rows after it read."""

        def read(conn: Any, session_id: str, tail: TraceTail | None) -> TraceRead:
            exact = resolve_id(conn, session_id, self.backend.creator)
            return tail_read(conn, exact, tail, self.backend.trace_bytes)

        found: dict[str, TraceRead | None] = {}
        for session_id, tail in tails.items():
            try:
                found[session_id] = await self.backend.call(read, session_id, tail)
            except StoreError:  # SessionNotFound included
                found[session_id] = None
        return found

    async def last_seq(self, session_id: str) -> int:
        """See ``SessionCatalog.last_seq``: ``max(seq)``, no line read. A trace past the
        backend's bound is refused (``too_large``), as the file store's count refuses its
        trace.jsonl: a server asks before a stream's 200 (``SessionFeeds.readable``), and
        without it a PostgreSQL session's stream began, then ended on an error event, where a
        file-backed one was answered 409 ``unreadable_session``. The rows' sizes are summed
        once each (``TraceCounts``): a stream's idle poll asks too."""

        def read(conn: Any) -> int:
            exact = resolve_id(conn, session_id, self.backend.creator)
            return self._counts.last_seq(conn, exact, self.backend.trace_bytes)

        found: int = await self.backend.call(read)
        return found

    async def follow(self, session_id: str, *, after: int = 0) -> AsyncIterator[TraceLine]:
        """See ``SessionCatalog.follow``: woken by the ``trace <id>`` notification of each
        commit, and every ``FOLLOW_RECHECK_SECONDS`` in case one was missed."""
        exact = (await self.info(session_id)).id
        key = f"trace {exact}"
        await self.backend.start_off_loop()
        seq = after
        try:
            while True:
                event = self.backend.waiter(key)
                try:
                    lines = await self.trace(exact, after=seq)
                    for line in lines:
                        yield line
                    seq = lines[-1].seq if lines else seq
                    if not lines:
                        if not run_in_progress((await self.info(exact)).liveness):
                            for line in await self.trace(exact, after=seq):
                                yield line
                            return
                        with contextlib.suppress(TimeoutError):
                            await asyncio.wait_for(event.wait(), FOLLOW_RECHECK_SECONDS)
                finally:
                    self.backend.forget(key, event)
        finally:
            self.backend.stop()  # the listener's use taken above

    async def request(self, session_id: str, signal: Signal) -> bool:
        """See ``SessionControl.request``."""

        def send(conn: Any) -> bool:
            exact = resolve_id(conn, session_id, self.backend.creator)
            if signal == "cancel":
                conn.execute("UPDATE rho_sessions SET cancel = true WHERE id = %s", (exact,))
                conn.execute("SELECT pg_notify(%s, %s)", (CHANNEL, f"cancel {exact}"))
                return True
            paused = signal == "pause"
            changed = conn.execute(
                "UPDATE rho_sessions SET paused = %s WHERE id = %s AND paused <> %s",
                (paused, exact, paused),
            ).rowcount
            return paused or bool(changed)

        return bool(await self.backend.call(send))

    async def add_directive(self, session_id: str, text: str) -> int:
        """See ``SessionControl.add_directive``."""
        check_directive_text(text)

        def add(conn: Any) -> int:
            exact = resolve_id(conn, session_id, self.backend.creator)
            conn.execute("SELECT 1 FROM rho_sessions WHERE id = %s FOR UPDATE", (exact,))
            row = conn.execute(
                "INSERT INTO rho_directives (session_id, seq, text, at) SELECT %s,"
                " coalesce(max(seq) + 1, 0), %s, %s FROM rho_directives WHERE session_id = %s"
                " RETURNING seq",
                (exact, to_column(text), time.time(), exact),
            ).fetchone()
            return int(row[0])

        return int(await self.backend.call(add))

    async def request_export(self, session_id: str, request_id: str) -> None:
        """See ``SessionControl.request_export``."""
        check_request_id(request_id)

        def ask(conn: Any) -> None:
            exact = resolve_id(conn, session_id, self.backend.creator)
            conn.execute(
                "INSERT INTO rho_exports (session_id, request_id) VALUES (%s, %s)",
                (exact, request_id),
            )

        await self.backend.call(ask)

    async def export_answer(self, session_id: str, request_id: str) -> str | None:
        """See ``SessionControl.export_answer``."""

        def read(conn: Any) -> Any:
            exact = resolve_id(conn, session_id, self.backend.creator)
            return conn.execute(
                f"SELECT {ANSWER}, octet_length(answer) FROM rho_exports"  # noqa: S608
                " WHERE session_id = %s AND request_id = %s",  # ANSWER is a constant of ours
                (exact, request_id),
            ).fetchone()

        row = await self.backend.call(read)
        if row is not None and row[0] is None and row[1] is not None:
            raise too_large(f"the export {request_id} of session {session_id}", EXPORT_BYTES)
        return None if row is None or row[0] is None else from_column(row[0])

    async def withdraw_export(self, session_id: str, request_id: str) -> None:
        """See ``SessionControl.withdraw_export``."""

        def withdraw(conn: Any) -> None:
            exact = resolve_id(conn, session_id, self.backend.creator)
            conn.execute(
                "DELETE FROM rho_exports WHERE session_id = %s AND request_id = %s"
                " AND answer IS NULL",
                (exact, request_id),
            )

        await self.backend.call(withdraw)

    async def events(self, session_id: str) -> tuple[ev.Event, ...]:
        """The session's persisted events, decoded."""
        lines = await self.trace(session_id)
        data = b"".join(line.data + b"\n" for line in lines)
        return parse_trace(data, source=f"session {session_id} in the store").events

    async def approvals(self, session_id: str) -> tuple[PendingApproval, ...]:
        """See ``SessionControl.approvals``."""
        return pending_approvals(await self.events(session_id))

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
        info = await self.info(session_id)
        if held_by_live_process(info.liveness):
            raise SessionLocked(
                f"session {info.id} is held by {info.holder}; answer it there (its approval "
                "prompt or its server)"
            )
        store = PgSessionStore(self.backend)
        try:
            await answer_through(
                store,
                info.id,
                call_id,
                approved=approved,
                always=always,
                reason=reason,
                at=time.time(),
            )
        finally:
            await store.aclose()
