"""Where a comment starts and ends, read as the engine reads it.

MariaDB starts a ``--`` comment only when the second dash is followed by an ASCII space or a
control character; the check took any Unicode space (U+00A0, U+2028, U+3000 ...) for one, so
``SELECT 1 --<U+00A0>, LOAD_FILE(...)`` was ``SELECT 1`` to the check and read a server file
on the server (U+00A0 being a column name there: ``1 - -<U+00A0>``).

PostgreSQL ends a ``--`` comment at a carriage return as well as a newline; the check read on
to the newline, so ``SELECT 1 -- x<CR>, pg_read_file(...)`` was ``SELECT 1`` to the check and
read a server file on the server.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from db_support import Server, adapter, checksum

from rho_domain.errors import StatementRefused
from rho_domain.ports.database import Database
from rho_domain.sql import classify

# Python's str.isspace() is true for each; MariaDB's lexer (my_isspace, my_iscntrl on the
# byte after "--") for none of them.
UNICODE_SPACES = ["\u00a0", "\u2028", "\u2029", "\u3000", "\u0085", "\u2003", "\u1680"]


def _mysql_attack(space: str) -> str:
    return (
        f"SELECT 1 --{space}, LOAD_FILE('/etc/hostname') AS f, GET_LOCK('rho', 0) AS g "
        f"FROM (SELECT 1 AS `{space}`) t"
    )


@pytest.fixture(scope="module")
def maria(request: pytest.FixtureRequest) -> Iterator[tuple[Server, Database]]:
    server: Server = request.getfixturevalue("mariadb_server")
    db = adapter(server)
    yield server, db
    asyncio.run(db.aclose())


@pytest.mark.parametrize("space", UNICODE_SPACES, ids=lambda s: f"U+{ord(s):04X}")
@pytest.mark.asyncio(loop_scope="module")
async def test_a_dash_dash_before_a_unicode_space_is_no_comment_on_mariadb(
    maria: tuple[Server, Database], space: str
) -> None:
    server, db = maria
    before = checksum(server)
    with pytest.raises(StatementRefused) as info:
        await db.query(_mysql_attack(space), max_rows=5, timeout=5)
    assert info.value.by == "check", info.value
    assert "LOAD_FILE" in str(info.value).upper() or "load_file" in str(info.value)
    assert checksum(server) == before


@pytest.mark.asyncio(loop_scope="module")
async def test_dash_dash_comments_the_server_reads_still_pass(
    maria: tuple[Server, Database],
) -> None:
    _, db = maria
    for sql in ("SELECT 1 AS a -- c", "SELECT 1 AS a --\tc", "SELECT 1 AS a --", "SELECT 1--1"):
        result = await db.query(sql, max_rows=1, timeout=5)
        assert result.rows in (((1,),), ((2,),)), sql
    # DEL and C0 controls start a comment for the server too: what follows is not run
    for control in ("\x7f", "\x1f"):
        sql = f"SELECT 1 AS a --{control}, LOAD_FILE('/etc/hostname') AS b"
        result = await db.query(sql, max_rows=1, timeout=5)
        assert result.columns == ("a",), sql


def test_every_mysql_reading_agrees() -> None:
    for space in UNICODE_SPACES:
        assert not classify(_mysql_attack(space), "mysql").read_only, repr(space)


PG_CR_ATTACKS = [
    "SELECT 1 AS a -- x\r, pg_read_file('/etc/hostname') AS b",
    "SELECT 1 AS a --\r, pg_sleep(0)::text AS b",
    "SELECT 1 AS a -- x\r\t, pg_ls_dir('.') AS b",
    "SELECT 1 AS a -- '\r, pg_read_file('/etc/hostname') -- '\n",
    "SELECT U&\"\\0061\" -- c\r UESCAPE '!' , pg_read_file('/etc/hostname') FROM (SELECT 1 AS a) t",
]


@pytest.fixture(scope="module")
def pg(request: pytest.FixtureRequest) -> Iterator[tuple[Server, Database]]:
    server: Server = request.getfixturevalue("postgres_server")
    db = adapter(server)
    yield server, db
    asyncio.run(db.aclose())


@pytest.mark.parametrize("sql", PG_CR_ATTACKS)
@pytest.mark.asyncio(loop_scope="module")
async def test_a_carriage_return_ends_a_postgres_comment_for_the_check_too(
    pg: tuple[Server, Database], sql: str
) -> None:
    server, db = pg
    before = checksum(server)
    with pytest.raises(StatementRefused) as info:
        await db.query(sql, max_rows=5, timeout=5)
    assert info.value.by == "check", info.value
    assert checksum(server) == before


@pytest.mark.asyncio(loop_scope="module")
async def test_comments_ended_by_cr_or_crlf_still_read_on_postgres(
    pg: tuple[Server, Database],
) -> None:
    _, db = pg
    for sql in ("SELECT 1 AS a -- c\r\n, 2 AS b", "SELECT 1 AS a -- c\r, 2 AS b"):
        result = await db.query(sql, max_rows=1, timeout=5)
        assert result.columns == ("a", "b"), sql


def test_a_lone_cr_in_a_comment_must_pass_both_readings_where_unknown() -> None:
    sql = "SELECT 1 AS a FROM dual -- x\r, dbms_lock.sleep(1) AS b"
    assert not classify(sql, "oracle").read_only
    assert not classify(sql.replace("dbms_lock.sleep", "sleep"), "vertica").read_only
    assert classify("SELECT 1 AS a FROM dual -- x\r\n", "oracle").read_only
