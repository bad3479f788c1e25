"""A server-wide counter advanced by a read: MariaDB's ``UUID_SHORT()``.

``UUID_SHORT()`` is ``(server_id & 255) << 56 | startup_seconds << 24`` plus a counter the
whole server shares, advanced by each call, as ``NEXTVAL`` advances a sequence: a read of
``seq_1_to_N`` advanced it N for every other session (the next application's id jumped),
and past 2**24 calls the counter runs into the startup time's bits, so a server restarted
that many seconds later issues ids issued already. It was on the allowlist; now it is not.
A column computes it too, with no call written: a VIRTUAL column ``AS (UUID_SHORT())`` at
every read, a column ``DEFAULT (UUID_SHORT())`` at each ``DEFAULT(col)`` (MariaDB accepts
no other function with a side effect there; ``NEXT VALUE FOR`` in a default the read-only
transaction stops).
"""

from __future__ import annotations

from collections.abc import Iterator

import attrs
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


DB = "rho_counters20"


@pytest.fixture
def computed_ids(mariadb_server: Server) -> Iterator[Server]:
    """A database of this file's own: a table whose columns compute UUID_SHORT()."""
    conn = mariadb_server.admin()
    cursor = conn.cursor()
    try:
        for sql in (
            f"DROP DATABASE IF EXISTS {DB}",
            f"CREATE DATABASE {DB}",
            f"CREATE TABLE {DB}.tickets (n INT, id BIGINT AS (UUID_SHORT()) VIRTUAL)",
            f"CREATE TABLE {DB}.notes (n INT, id BIGINT DEFAULT (UUID_SHORT()))",
            f"INSERT INTO {DB}.tickets (n) SELECT seq FROM seq_1_to_100",
            f"INSERT INTO {DB}.notes (n) SELECT seq FROM seq_1_to_100",
            # literals information_schema writes with backslash escapes ('x\'y', 'a\\')
            f"CREATE TABLE {DB}.labels (n INT, tag VARCHAR(40) AS (CONCAT(n, 'x''y', 'a\\\\')))",
            f"CREATE VIEW {DB}.quoted AS SELECT 'it''s' AS s, 'a\\\\' AS b",
            # names holding a quote, around the call: written "a'b" under ANSI_QUOTES
            f"CREATE TABLE {DB}.quoted_names (`a'b` INT, `c'd` INT, "
            "id VARCHAR(80) AS (CONCAT(`a'b`, UUID_SHORT(), `c'd`)) VIRTUAL)",
            f"INSERT INTO {DB}.quoted_names (`a'b`, `c'd`) SELECT seq, seq FROM seq_1_to_100",
        ):
            cursor.execute(sql)
        conn.commit()
        config = attrs.evolve(mariadb_server.config, database=DB)
        yield attrs.evolve(mariadb_server, config=config)
    finally:
        cursor.execute(f"DROP DATABASE IF EXISTS {DB}")
        conn.close()


async def test_a_column_that_computes_uuid_short_is_refused(computed_ids: Server) -> None:
    reads = [
        ("SELECT MAX(id) FROM tickets", "a virtual column of tickets runs SELECT uuid_short()"),
        ("SELECT MAX(DEFAULT(id)) FROM notes", "default() is not on the mysql list"),
    ]
    checked, unchecked = adapter(computed_ids), adapter(computed_ids, check=False)
    try:
        for sql, said in reads:
            before = _next_id(computed_ids)
            await unchecked.query(sql, max_rows=1, timeout=10)  # what the check stands before
            assert _next_id(computed_ids) - before > 100, sql
            with pytest.raises(StatementRefused) as info:
                await checked.query(sql, max_rows=1, timeout=10)
            assert info.value.by == "check"
            assert said in str(info.value), (sql, info.value)
        # a stored value is read, not computed; a column or view with quoted literals reads
        # (it was refused as unreadable: 'x\'y' ends elsewhere under NO_BACKSLASH_ESCAPES)
        for sql in ("SELECT MAX(n) FROM notes", "SELECT * FROM labels", "SELECT * FROM quoted"):
            assert (await checked.query(sql, max_rows=1, timeout=10)).columns, sql
    finally:
        for db in (checked, unchecked):
            await db.aclose()


async def test_a_column_written_with_double_quoted_names_is_judged(computed_ids: Server) -> None:
    """MariaDB writes a column's expression as the reading session's sql_mode quotes names:
    on a server whose mode has ANSI_QUOTES, ``concat("a'b",uuid_short(),"c'd")``. The
    literals' emptying took ``'b",uuid_short(),"c'`` for one literal: the call was never
    judged and a read advanced the counter past the check. Now the catalog is read in the
    default mode, where names are written in backticks."""
    sql = "SELECT MAX(id) FROM quoted_names"
    conn = computed_ids.admin()
    cursor = conn.cursor()
    cursor.execute("SELECT @@GLOBAL.sql_mode")
    (saved,) = cursor.fetchone()
    cursor.execute("SET GLOBAL sql_mode = CONCAT(@@GLOBAL.sql_mode, ',ANSI_QUOTES')")
    checked, unchecked = adapter(computed_ids), adapter(computed_ids, check=False)
    try:
        before = _next_id(computed_ids)
        await unchecked.query(sql, max_rows=1, timeout=10)  # what the check stands before
        assert _next_id(computed_ids) - before > 100
        with pytest.raises(StatementRefused, match="a virtual column of quoted_names runs"):
            await checked.query(sql, max_rows=1, timeout=10)
    finally:
        for db in (checked, unchecked):
            await db.aclose()
        cursor.execute("SET GLOBAL sql_mode = %s", (saved,))
        conn.close()
