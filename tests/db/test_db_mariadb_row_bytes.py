"""A MariaDB row of many large values arrived whole before any cell of it was cut.

``max_allowed_packet`` (16 MB) bounds each value, not a row: ``SELECT x, x, ... FROM (SELECT
REPEAT('x', 10000000) AS x) t`` sent a 120 MB row with 12 columns (the agent grew to 290 MB),
and a statement may have 4,096 columns. Now the client reads no row longer than
``MAX_ROW_BYTES`` (64 MiB): past it the connection is dropped, the rest never read, and the
error says what to change; the next call works on a new connection.
"""

from __future__ import annotations

import pytest
from db_support import Server, adapter

from rho_adapters.db.mysql_rows import MAX_ROW_BYTES
from rho_domain.errors import DatabaseError

COLUMNS = MAX_ROW_BYTES // 10_000_000 + 1  # 7 values of 10 MB: 70 MB
WIDE = "SELECT " + ", ".join(["x"] * COLUMNS) + " FROM (SELECT REPEAT('x', 10000000) AS x) t"


async def test_a_row_longer_than_the_limit_is_never_read_whole(mariadb_server: Server) -> None:
    db = adapter(mariadb_server)
    try:
        with pytest.raises(DatabaseError) as info:
            await db.query(WIDE, max_rows=5, timeout=30)
        assert "a row of the result is longer than 64 MiB" in str(info.value)
        result = await db.query(
            "SELECT COUNT(*), LENGTH(REPEAT('x', 10000000))", max_rows=5, timeout=30
        )
        assert result.rows == ((1, 10_000_000),)
    finally:
        await db.aclose()
