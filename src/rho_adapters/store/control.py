"""FileSessions: SessionCatalog and SessionControl over today's session directories.

Nothing on disk changes: listings read meta.json (``listing.list_sessions``), traces are read
as they are, signals are the sentinel files of ``signals.py``, an answer to an approval is an
``approval_resolved`` line appended under the session's lock (``FileSessionStore``). yaml and
cattrs are imported only by the members that need them (``record``, ``answer``), so the
monitor's listing stays light.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import AsyncIterator, Mapping
from pathlib import Path

from rho_adapters.store import sentinels
from rho_adapters.store.directive_lines import add_directive
from rho_adapters.store.layout import SessionPaths, liveness, read_meta, resolve
from rho_adapters.store.listing import info_of, list_sessions
from rho_adapters.store.signals import (
    read_export,
    request_cancel,
    request_export,
    request_pause,
    request_resume,
)
from rho_adapters.store.trace_marks import TraceMarks
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
    held_by_live_process,
    pending_approvals,
    run_in_progress,
)
from rho_domain.ports.store import SessionInfo, SessionRecord
from rho_domain.ports.trace_reads import TraceRead, TraceTail

FOLLOW_POLL_SECONDS = 0.2
"""How often ``follow`` looks at a trace another process writes (there is no event to wait on)."""


INLINE_BYTES = 64 << 10
"""A trace this small (or missing) is read on the event loop; a larger one in a thread."""


def _small(trace: Path) -> bool:
    try:
        return os.stat(trace, follow_symlinks=False).st_size <= INLINE_BYTES
    except OSError:
        return True  # missing: nothing to read (a link or worse is refused by the read)


class FileSessions(SessionCatalog, SessionControl):
    """The sessions under ``root`` (``<home>/sessions``), read and signalled through files."""

    def __init__(self, root: Path | str, *, poll: float = FOLLOW_POLL_SECONDS) -> None:
        self.root = Path(os.path.expanduser(root))
        self._poll = poll
        self._marks = TraceMarks()

    def _paths(self, session_id: str) -> SessionPaths:
        return resolve(self.root, session_id)

    async def sessions(self, *, limit: int = 50) -> tuple[SessionInfo, ...]:
        """See ``SessionCatalog.sessions``."""
        return await asyncio.to_thread(list_sessions, self.root, limit=limit)

    async def info(self, session_id: str) -> SessionInfo:
        """See ``SessionCatalog.info``."""
        paths = self._paths(session_id)
        return info_of(paths, now=time.time())

    async def record(self, session_id: str) -> SessionRecord:
        """See ``SessionCatalog.record``."""
        from rho_adapters.store.recording import read_record

        return await asyncio.to_thread(read_record, self._paths(session_id))

    async def recording(self, session_id: str) -> tuple[SessionRecord, tuple[ev.Event, ...]]:
        """See ``SessionCatalog.recording``."""
        from rho_adapters.store.recording import load_recording

        found = await asyncio.to_thread(load_recording, self._paths(session_id).dir)
        return found.record, found.events

    async def trace(self, session_id: str, *, after: int = 0) -> tuple[TraceLine, ...]:
        """See ``SessionCatalog.trace``. Read from where the last read of this trace ended
        when ``after`` is at or past it (``TraceMarks``): a poll reads only what is new."""
        paths = self._paths(session_id)
        if self._marks.resumes(paths, after, within=INLINE_BYTES) or _small(paths.trace):
            # a poll, a run's next line, a new session: a few bytes from the page cache, read
            # here (as the store appends here); a worker thread's hop would wait behind others
            return self._marks.lines_after(paths, after)
        return await asyncio.to_thread(self._marks.lines_after, paths, after)

    async def trace_reads(
        self, tails: Mapping[str, TraceTail | None]
    ) -> dict[str, TraceRead | None]:
        """See ``SessionCatalog.trace_reads``: every trace read in one worker thread, each
        from its tail when the file still holds it (``TraceMarks.tail_read``): a listing
        poll of a finished session is a stat, three small preads and an empty read, however
        long its last line."""
        return await asyncio.to_thread(self._tail_reads, dict(tails))

    def _tail_reads(self, tails: dict[str, TraceTail | None]) -> dict[str, TraceRead | None]:
        found: dict[str, TraceRead | None] = {}
        for session_id, tail in tails.items():
            try:
                found[session_id] = self._marks.tail_read(self._paths(session_id), tail)
            except StoreError:  # SessionNotFound included
                found[session_id] = None
        return found

    async def last_seq(self, session_id: str) -> int:
        """See ``SessionCatalog.last_seq``: counted from the last read's mark (here, as
        ``trace`` reads, when that is a stat: a stream's idle poll asks)."""
        paths = self._paths(session_id)
        if self._marks.resumes(paths, 1 << 62, within=INLINE_BYTES) or _small(paths.trace):
            return self._marks.last_seq(paths)
        return await asyncio.to_thread(self._marks.last_seq, paths)

    async def follow(self, session_id: str, *, after: int = 0) -> AsyncIterator[TraceLine]:
        """See ``SessionCatalog.follow``. Polled every ``poll`` seconds."""
        paths = self._paths(session_id)
        seq = after
        while True:
            lines = await self.trace(paths.id, after=seq)
            for line in lines:
                yield line
            seq = lines[-1].seq if lines else seq
            if not lines and not run_in_progress(self._liveness(paths)):
                final = await self.trace(paths.id, after=seq)  # written just before it ended
                for line in final:
                    yield line
                return
            if not lines:
                await asyncio.sleep(self._poll)

    @staticmethod
    def _liveness(paths: SessionPaths) -> str:
        return liveness(read_meta(paths), paused=sentinels.is_set(paths.pause), now=time.time())

    async def request(self, session_id: str, signal: Signal) -> bool:
        """See ``SessionControl.request``."""
        directory = self._paths(session_id).dir
        if signal == "cancel":
            request_cancel(directory)
        elif signal == "pause":
            request_pause(directory)
        else:
            return request_resume(directory)
        return True

    async def add_directive(self, session_id: str, text: str) -> int:
        """See ``SessionControl.add_directive``."""
        check_directive_text(text)
        return await asyncio.to_thread(add_directive, self._paths(session_id).dir, text)

    async def request_export(self, session_id: str, request_id: str) -> None:
        """See ``SessionControl.request_export``."""
        request_export(self._paths(session_id).dir, request_id)

    async def export_answer(self, session_id: str, request_id: str) -> str | None:
        """See ``SessionControl.export_answer``."""
        return read_export(self._paths(session_id).dir, request_id)

    async def withdraw_export(self, session_id: str, request_id: str) -> None:
        """See ``SessionControl.withdraw_export``."""
        exports = self._paths(session_id).dir / "exports"
        with contextlib.suppress(OSError):
            (exports / f"{request_id}.request").unlink(missing_ok=True)

    async def approvals(self, session_id: str) -> tuple[PendingApproval, ...]:
        """See ``SessionControl.approvals``."""
        from rho_adapters.store.trace import read_trace

        paths = self._paths(session_id)
        return pending_approvals((await asyncio.to_thread(read_trace, paths.trace)).events)

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
        from rho_adapters.store.files import FileSessionStore

        paths = self._paths(session_id)
        meta = read_meta(paths)
        if held_by_live_process(self._liveness(paths)):
            raise SessionLocked(
                f"session {paths.id} is held by pid {meta.get('pid')} on {meta.get('host')}; "
                "answer it there (its approval prompt or its server)"
            )
        await answer_through(
            FileSessionStore(self.root),
            paths.id,
            call_id,
            approved=approved,
            always=always,
            reason=reason,
            at=time.time(),
        )
