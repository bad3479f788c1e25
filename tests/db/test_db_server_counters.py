"""A server-wide counter advanced by an allowlisted function: MariaDB's ``UUID_SHORT()``.

``UUID_SHORT()`` is ``(server_id & 255) << 56 | startup_seconds << 24`` plus a counter the
whole server shares, advanced by each call, as ``NEXTVAL`` advances a sequence: a read of
``seq_1_to_N`` advanced it N for every other session (the next application's id jumped),
and past 2**24 calls the counter runs into the startup time's bits, so a server restarted
that many seconds later issues ids issued already. It was on the allowlist; now it is not.
"""

from __future__ import annotations

import pytest
from db_support import Server, adapter

from rho_domain.errors import StatementRefused

ADVANCE = "SELECT MAX(UUID_SHORT()) FROM seq_1_to_1000"  # one row: every call made


def _next_id(server: Server) -> int:
    conn = server.admin()
    try:
        with conn.cursor() as cursor:
            cursor.execute("SELECT UUID_SHORT()")
            return int(cursor.fetchone()[0])
    finally:
        conn.close()


async def test_uuid_short_advances_no_server_counter(mariadb_server: Server) -> None:
    checked, unchecked = adapter(mariadb_server), adapter(mariadb_server, check=False)
    try:
        before = _next_id(mariadb_server)
        await unchecked.query(ADVANCE, max_rows=1, timeout=10)  # what the check stands before
        assert _next_id(mariadb_server) - before > 1000
        with pytest.raises(StatementRefused) as info:
            await checked.query(ADVANCE, max_rows=1, timeout=10)
        assert info.value.by == "check"
        assert "uuid_short() is not on the mysql list" in str(info.value)
    finally:
        for db in (checked, unchecked):
            await db.aclose()
