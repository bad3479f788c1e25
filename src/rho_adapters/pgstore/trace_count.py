"""TraceCounts: a PostgreSQL session's last line number, its rows' sizes summed once each.

A server's stream asks for the last line number before its 200 and at each idle poll
(``TraceFeed.refresh``), and the count refuses a trace past the backend's bound, as the
file store's count refuses its trace.jsonl. Summing every row's size at each poll scanned
all of the session's rows: 158 ms of the database's time a poll for a session of 100,000
rows (51 MB; ``max(seq)`` alone: 0.02 ms), for each stream, every second. The sum is kept
per session, and a count adds only the rows after the last one counted (the primary key's
range); a trace with fewer lines than counted (rows deleted) is summed again from its start.
A row rewritten under the count is not seen here: every read of rows judges their sizes
itself (``schema.bounded_lines``), so none is read whole.

The sums are small (a number and a size a session) and capped at ``limit`` sessions.
"""

from __future__ import annotations

import threading
from typing import Any

from rho_adapters.pgstore.schema import trace_too_large

COUNTS_LIMIT = 10_000

_COUNT = (
    "SELECT (SELECT coalesce(max(seq), 0) FROM rho_events WHERE session_id = %s),"
    " (SELECT coalesce(sum(octet_length(line)), 0) FROM rho_events"
    " WHERE session_id = %s AND seq > %s)"
)  # one statement, one snapshot: the last line and the sizes up to it agree


class TraceCounts:
    """Each session's last line number and the size of its rows up to it (thread-safe)."""

    def __init__(self, *, limit: int = COUNTS_LIMIT) -> None:
        self._counts: dict[str, tuple[int, int]] = {}
        self._lock = threading.Lock()
        self._limit = limit

    def last_seq(self, conn: Any, session_id: str, bound: int) -> int:
        """The number of session ``session_id``'s last row (0: none). Raises the
        ``too_large`` StoreError when its rows hold more than ``bound`` bytes."""
        with self._lock:
            seq, size = self._counts.get(session_id, (0, 0))
        last, added = conn.execute(_COUNT, (session_id, session_id, seq)).fetchone()
        if int(last) < seq:  # rows deleted: counted again from the start
            last, added = conn.execute(_COUNT, (session_id, session_id, 0)).fetchone()
            size = 0
        size += int(added)
        if size > bound:
            raise trace_too_large(session_id, bound)
        with self._lock:
            if len(self._counts) >= self._limit:
                self._counts.clear()  # a fresh start costs one whole sum per session
            self._counts[session_id] = (int(last), size)
        return int(last)
