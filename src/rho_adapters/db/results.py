"""What a database adapter hands back: rows fetched within a budget, and a table described.

``fetch(cursor, max_rows)`` reads at most ``max_rows`` rows (one more, to know if there are
more) in batches sized by the largest row so far, cuts each cell over ``MAX_CELL`` to a
``CutValue`` (``cut``) and stops once the rows kept reach ``MAX_RESULT_BYTES`` (or the rows
received ``RECEIVED_FACTOR`` times that), so one result never grows the agent by much more
than its budget. ``format_description`` is the text a table's description gives the model.
Every engine's ``_run`` and ``describe`` call them (``ThreadedDatabase`` in ``base.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from rho_domain.ports.database import CutValue, QueryResult

# The bytes one result may hold (cells as kept, after cutting), and the longest cell kept
# whole (characters, or bytes for binary values): a query of two 50 MB values grew the agent
# by 1.1 GiB when only rows were counted. Rows are fetched FETCH_BATCH at a time.
MAX_RESULT_BYTES = 8 << 20
MAX_CELL = 8192
FETCH_BATCH = 100
RECEIVED_FACTOR = 8  # rows received, before cutting, may be this many times the budget


def cut(value: Any, max_cell: int = MAX_CELL) -> Any:
    """``value``, or a ``CutValue`` of its first ``max_cell`` characters (bytes) when longer."""
    if isinstance(value, str) and len(value) > max_cell:
        # isascii() is a flag test in CPython: no copy of a 50 MB string just to measure it.
        size = len(value) if value.isascii() else len(value.encode("utf-8", "surrogatepass"))
        return CutValue(value[:max_cell], size)
    if isinstance(value, bytes | bytearray | memoryview) and len(value) > max_cell:
        return CutValue(bytes(value[:max_cell]), len(value))
    return value


def _cost(value: Any) -> int:
    """What a kept cell costs, roughly, in bytes (characters for text)."""
    if isinstance(value, str | bytes):
        return len(value) + 16
    if isinstance(value, CutValue):
        return len(value.head) + 16
    return 16 + len(str(value)) if isinstance(value, Decimal) else 16


def fetch(
    cursor: Any, max_rows: int, *, max_bytes: int = MAX_RESULT_BYTES, max_cell: int = MAX_CELL
) -> QueryResult:
    """Read at most ``max_rows`` rows (one more, to know if there are more) with
    ``fetchmany``; cells over ``max_cell`` are cut, and fetching stops once the rows kept
    reach ``max_bytes``, or the rows received (before cutting) ``RECEIVED_FACTOR`` times that
    (``QueryResult.byte_limit``). A batch is one row at first, then as many rows (up to
    ``FETCH_BATCH``) as the largest row received so far fits in the budget left: a driver
    that streams (server-side or unbuffered cursors) never holds much more than one row
    beyond the budget, whatever the rows' sizes."""
    if cursor.description is None:
        count = cursor.rowcount
        return QueryResult(columns=(), rows=(), rowcount=count if count >= 0 else None)
    columns = tuple(str(col[0]) for col in cursor.description)
    rows: list[tuple[Any, ...]] = []
    kept = received = largest = 0
    most_received = max_bytes * RECEIVED_FACTOR
    while len(rows) <= max_rows and kept <= max_bytes and received <= most_received:
        room = max_bytes - kept
        size = 1 if not largest else max(1, min(FETCH_BATCH, room // largest))
        batch = cursor.fetchmany(min(size, max_rows + 1 - len(rows)))
        if not batch:
            break
        for raw in batch:
            cost = sum(_cost(value) for value in raw)
            received += cost
            largest = max(largest, cost)
            row = tuple(cut(value, max_cell) for value in raw)
            rows.append(row)
            kept += sum(_cost(value) for value in row)
    limited = kept > max_bytes or received > most_received
    return QueryResult(
        columns=columns,
        rows=tuple(rows[:max_rows]),
        more_rows=len(rows) > max_rows or limited,
        byte_limit=max_bytes if limited else None,
    )


def format_description(
    table: str,
    columns: Sequence[Sequence[Any]],
    primary_key: Sequence[str],
    indexes: Sequence[tuple[str, bool, str]],
) -> str:
    """Text for the model: one line per column (name, type, NULL/NOT NULL, default), then
    the primary key and the indexes. ``columns`` rows are (name, type, nullable, default)."""
    if not columns:
        return f"Table not found: {table}"
    lines = [f"Table {table}", "Columns:"]
    for name, type_, nullable, default in columns:
        null = "NULL" if _truthy(nullable) else "NOT NULL"
        extra = f" DEFAULT {default}" if default not in (None, "") else ""
        lines.append(f"  {name} {type_} {null}{extra}")
    if primary_key:
        lines.append(f"Primary key: ({', '.join(primary_key)})")
    if indexes:
        lines.append("Indexes:")
        lines.extend(f"  {n} {'UNIQUE' if u else 'NONUNIQUE'} ({cols})" for n, u, cols in indexes)
    return "\n".join(lines)


def _truthy(value: Any) -> bool:
    if isinstance(value, str):
        return value.upper() in ("YES", "Y", "TRUE", "1", "T")
    return bool(value)
