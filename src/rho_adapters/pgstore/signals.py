"""PgSignals: the SignalSource port on PostgreSQL, for the session driven in this process.

A cancel is a flag on the session's row plus a ``cancel <id>`` notification: the waiting run
wakes as soon as the notification arrives (no polling). ``wait_for_cancel`` registers its waiter
BEFORE reading the flag, so a cancel between the two still wakes it; a missed notification (the
listener reconnected) wakes every waiter to read the flag again, and a slow check every
``RECHECK_SECONDS`` covers a listener that is down.

A session another process took over (this one's claim went stale: a frozen VM, a network
cut, a loop blocked past the bound, while this process still runs it) is cancelled here:
``cancel_requested`` is true once another holder is named, and the one that takes a session
over notifies ``cancel <id>`` (``PgSessionStore.open``), so the run stops at once instead of
running tools beside the new holder until its next append is refused. Nor does this process
then clear the new holder's cancel or pause, or answer its export requests: each write here
is made only while no other process holds the session.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from rho_adapters.pgstore.backend import PgBackend
from rho_adapters.pgstore.schema import from_column, to_column
from rho_adapters.store.signals import DIRECTIVES_BYTES
from rho_domain.errors import SessionNotFound, StoredPastBound
from rho_domain.ports.signals import Directive, SignalSource

RECHECK_SECONDS = 5.0
EXPORTS_PAGE = 64
"""Export requests read at a time; the session answers a few at each checkpoint."""
ROW_COST = 64
"""Bytes a directive's row is counted for besides its text: what holding it costs a reader."""

# The directives after an offset, with what they cost all together, judged in the statement
# that reads them (as ``schema.bounded_lines`` judges a trace): each row was bounded alone,
# so a peer's thousand rows of 15 MiB (or millions of empty ones) were all read, by every
# checkpoint of the run that holds the session, where the file store bounds the whole log.
_DIRECTIVES = (
    "WITH total AS (SELECT coalesce(sum(octet_length(text) + %s), 0) AS bytes"
    " FROM rho_directives WHERE session_id = %s AND seq >= %s)"
    " SELECT total.bytes, d.seq, d.text FROM total LEFT JOIN LATERAL (SELECT seq, text"
    " FROM rho_directives WHERE total.bytes <= %s AND session_id = %s AND seq >= %s OFFSET 0)"
    " d ON true ORDER BY d.seq"
)


def _flag(conn: Any, session_id: str, column: str, backend: PgBackend) -> bool:
    """The session's ``column`` flag, or for ``cancel``, whether another process holds it."""
    row = conn.execute(
        f"SELECT {column}, holder FROM rho_sessions WHERE id = %s",  # noqa: S608 (a fixed column)
        (session_id,),
    ).fetchone()
    if row is None:
        raise SessionNotFound(f"no session {session_id!r} in the store")
    taken = column == "cancel" and row[1] is not None and row[1] != backend.holder
    return bool(row[0]) or taken


class PgSignals(SignalSource):
    """Signals of sessions kept in PostgreSQL (see the module docstring)."""

    def __init__(self, backend: PgBackend) -> None:
        self.backend = backend

    async def cancel_requested(self, session_id: str) -> bool:
        """True while a cancel is requested for the session, or another process holds it."""
        return bool(await self.backend.call(_flag, session_id, "cancel", self.backend))

    async def clear_cancel(self, session_id: str) -> None:
        """See ``SignalSource.clear_cancel``."""
        await self.backend.call(
            lambda conn: conn.execute(
                "UPDATE rho_sessions SET cancel = false WHERE id = %s AND cancel"
                " AND (holder IS NULL OR holder = %s)",  # no other process holds it
                (session_id, self.backend.holder),
            )
        )

    async def clear_pause(self, session_id: str) -> None:
        """See ``SignalSource.clear_pause``."""
        await self.backend.call(
            lambda conn: conn.execute(
                "UPDATE rho_sessions SET paused = false WHERE id = %s AND paused"
                " AND (holder IS NULL OR holder = %s)",
                (session_id, self.backend.holder),
            )
        )

    async def wait_for_cancel(self, session_id: str) -> None:
        """See ``SignalSource.wait_for_cancel``."""
        key = f"cancel {session_id}"
        await self.backend.start_off_loop()
        try:
            while True:
                event = self.backend.waiter(key)
                try:
                    if await self.cancel_requested(session_id):
                        return
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(event.wait(), RECHECK_SECONDS)
                finally:
                    self.backend.forget(key, event)
        finally:
            self.backend.stop()  # the listener's use taken above

    async def is_paused(self, session_id: str) -> bool:
        """See ``SignalSource.is_paused``."""
        return bool(await self.backend.call(_flag, session_id, "paused", self.backend))

    async def directives(self, session_id: str, *, after: int) -> tuple[Directive, ...]:
        """See ``SignalSource.directives``."""
        limit = DIRECTIVES_BYTES
        rows = await self.backend.call(
            lambda conn: conn.execute(
                _DIRECTIVES, (ROW_COST, session_id, after, limit, session_id, after)
            ).fetchall()
        )
        if int(rows[0][0]) > limit:
            raise StoredPastBound(
                f"session {session_id}'s directives from {after} on (rows of rho_directives) "
                f"hold more than {limit} bytes, counting {ROW_COST} a row, far more than "
                "rho-agent writes there; not read (delete the rows that do not belong)"
            )
        return tuple(
            Directive(offset=int(seq), text=from_column(text))
            for _, seq, text in rows
            if seq is not None
        )

    async def export_requests(self, session_id: str) -> tuple[str, ...]:
        """See ``SignalSource.export_requests``."""
        # Only what request_export makes (a plain id: ``check_request_id``), as the file
        # store reads only such names, and a page of them: a peer's rows were read whole
        # (a million ids, of a megabyte each) at every checkpoint of the run.
        rows = await self.backend.call(
            lambda conn: conn.execute(
                "SELECT request_id FROM rho_exports WHERE session_id = %s AND answer IS NULL"
                " AND request_id ~ '^[A-Za-z0-9_-]{1,255}$' AND request_id <> 'latest'"
                " ORDER BY request_id LIMIT %s",
                (session_id, EXPORTS_PAGE),
            ).fetchall()
        )
        return tuple(str(r[0]) for r in rows)

    async def answer_export(self, session_id: str, request_id: str, text: str) -> None:
        """See ``SignalSource.answer_export``."""
        await self.backend.call(
            lambda conn: conn.execute(
                "UPDATE rho_exports SET answer = %s WHERE session_id = %s AND request_id = %s"
                " AND EXISTS (SELECT 1 FROM rho_sessions WHERE id = %s"
                " AND (holder IS NULL OR holder = %s))",
                (to_column(text), session_id, request_id, session_id, self.backend.holder),
            )
        )
