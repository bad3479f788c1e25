"""Reading a PostgreSQL session's trace again from a ``TraceTail``: the tail's row is checked
by its version, not read.

A listing (``Tallies``) keeps counts over each trace and asks at each poll for the rows
after the last one folded. It asked for that last row again and compared its bytes: a row of
100 MB went from the server to the reader at every poll. The tail's check is now the row's
``xmin`` (the transaction that wrote this version of it): an ``UPDATE`` of the row, or the
session's rows deleted and written again, give it another, and the trace is read again from
its start (``restarted``). The check and the rows after it are read in one statement (one
snapshot), the rows' sizes judged there as ``schema.bounded_lines`` judges them.
"""

from __future__ import annotations

from typing import Any

from rho_adapters.pgstore.schema import trace_too_large
from rho_domain.ports.trace_reads import TraceLine, TraceRead, TraceTail

_READ = (
    "WITH known AS (SELECT xmin::text AS version FROM rho_events"
    " WHERE session_id = %s AND seq = %s),"
    " total AS (SELECT coalesce(sum(octet_length(line)), 0) AS bytes"
    " FROM rho_events WHERE session_id = %s AND seq > %s)"
    " SELECT (SELECT version FROM known), total.bytes, e.seq, e.line, e.version"
    " FROM total LEFT JOIN LATERAL (SELECT seq, line, xmin::text AS version FROM rho_events"
    " WHERE total.bytes <= %s AND session_id = %s AND seq > %s OFFSET 0) e ON true"
    " ORDER BY e.seq"
)  # OFFSET 0: the bound stays a one-time filter (see schema.bounded_lines)


def tail_read(conn: Any, session_id: str, tail: TraceTail | None, limit: int) -> TraceRead:
    """The rows after ``tail`` when its row is the version it was, else every row
    (``restarted``); the ``too_large`` StoreError when the rows read hold more than
    ``limit`` bytes."""
    if tail is not None and tail.seq:
        version, rows = _rows(conn, session_id, tail.seq, limit)
        if version == tail.check:
            return _read(rows, restarted=False, tail=tail)
    _, rows = _rows(conn, session_id, 0, limit)
    return _read(rows, restarted=True, tail=TraceTail(seq=0, check=""))


def _rows(conn: Any, session_id: str, after: int, limit: int) -> tuple[str | None, list[Any]]:
    params = (session_id, after, session_id, after, limit, session_id, after)
    rows = conn.execute(_READ, params).fetchall()
    if int(rows[0][1]) > limit:
        raise trace_too_large(session_id, limit)
    found = [(seq, line, version) for _, _, seq, line, version in rows if seq is not None]
    return rows[0][0], found


def _read(rows: list[Any], *, restarted: bool, tail: TraceTail) -> TraceRead:
    lines = tuple(TraceLine(seq=int(seq), data=line.encode()) for seq, line, _ in rows)
    if rows:
        tail = TraceTail(seq=int(rows[-1][0]), check=str(rows[-1][2]))
    return TraceRead(lines=lines, restarted=restarted, tail=tail)
