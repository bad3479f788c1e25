"""A SQLite row is built whole before any cell of it is cut: its memory was unbounded.

``SELECT x, x, ... FROM (SELECT zeroblob(10000000) AS x)`` asks for a 10 MB blob per column
(each under the 10 MB value limit), and SQLite and the ``sqlite3`` module hold every column of
the row at once before ``fetch`` cuts a cell: 60 columns, a 223-character statement, grew
the agent to 1.2 GB, and a statement may have 2,000 columns. Now SQLite's heap in the process
is capped (``PRAGMA hard_heap_limit``, 256 MB) and the statement is stopped with what to
change; the cells a result keeps are still cut as before.
"""

from __future__ import annotations

import pytest
from db_support import Server, adapter

from rho_domain.errors import DatabaseError

WIDE = "SELECT " + ", ".join(["x"] * 30) + " FROM (SELECT zeroblob(10000000) AS x)"


async def test_a_row_past_the_heap_limit_is_stopped(sqlite_server: Server) -> None:
    db = adapter(sqlite_server)
    try:
        with pytest.raises(DatabaseError) as info:
            await db.query(WIDE, max_rows=5, timeout=30)
        assert "more memory than SQLite may use here (256 MB)" in str(info.value)
        result = await db.query(
            "SELECT count(*), length(zeroblob(10000000)) FROM users", max_rows=5, timeout=5
        )
        assert result.rows == ((20, 10_000_000),)
    finally:
        await db.aclose()
