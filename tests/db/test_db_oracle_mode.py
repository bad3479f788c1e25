"""MariaDB's ``sql_mode=ORACLE`` (a server set up for an Oracle migration) reads
``seq.nextval`` as a call that advances a sequence, written without parentheses. The
statement check must refuse it by itself: before, only the engine's read-only transaction did
("Cannot execute statement in a READ ONLY transaction"), and a wall that holds only because
the other is there is not a wall.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from db_support import Server, adapter, checksum

from rho_domain.errors import StatementRefused
from rho_domain.sql import classify

NEXTVAL = [
    "SELECT s.nextval",
    "SELECT s.NEXTVAL FROM dual",
    "SELECT rho.s.nextval",
    "SELECT `s`.`nextval`",
    "SELECT 1 FROM users WHERE id = s.nextval",
    "SELECT s/**/./**/nextval",
]


@pytest.fixture
def oracle_mode(mariadb_server: Server) -> Iterator[Server]:
    """The server in ``sql_mode=ORACLE`` with a sequence ``s``; both undone afterwards."""
    conn = mariadb_server.admin()
    cursor = conn.cursor()
    cursor.execute("SELECT @@GLOBAL.sql_mode")
    (saved,) = cursor.fetchone()
    cursor.execute("CREATE SEQUENCE s")
    cursor.execute("SET GLOBAL sql_mode = 'ORACLE'")
    try:
        yield mariadb_server
    finally:
        cursor.execute("SET GLOBAL sql_mode = %s", (saved,))
        cursor.execute("DROP SEQUENCE s")
        conn.close()


@pytest.mark.asyncio
async def test_nextval_in_oracle_mode_is_refused_by_the_check(oracle_mode: Server) -> None:
    admin = oracle_mode.admin()
    cursor = admin.cursor()

    def sequence() -> object:
        cursor.execute("SELECT next_not_cached_value FROM s")
        return cursor.fetchone()

    before, seq_before = checksum(oracle_mode), sequence()
    db = adapter(oracle_mode)
    try:
        mode = await db.query("SELECT @@SESSION.sql_mode", max_rows=1, timeout=5)
        assert "ORACLE" in str(mode.rows[0][0])  # the adapter reads this server in this mode
        for sql in NEXTVAL:
            with pytest.raises(StatementRefused) as info:
                await db.query(sql, max_rows=1, timeout=5)
            assert info.value.by == "check", (sql, str(info.value))
            assert "nextval" in str(info.value).lower()
        ok = await db.query("SELECT s.currval", max_rows=1, timeout=5)  # reads, advances none
        assert ok.columns
        assert checksum(oracle_mode) == before
        assert sequence() == seq_before
    finally:
        await db.aclose()
        admin.close()


def test_nextval_in_field_notation_is_refused_in_every_reading() -> None:
    for sql in NEXTVAL:
        assert not classify(sql, "mysql").read_only, sql
    assert classify("SELECT s.currval, u.next_id FROM users u", "mysql").read_only
