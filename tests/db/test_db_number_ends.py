"""Where a number ends, read as the engine reads it: an exponent's sign needs a digit.

The lexer took ``1e-`` for one number whatever followed the sign, so in ``1e-- ...`` it saw a
lone ``-`` and no comment. MariaDB and MySQL read ``1e`` as an identifier (a name may start
with digits) and ``-- `` as a comment; PostgreSQL before 15 (and Vertica, its scanner's
heir) read the number ``1``, the name ``e`` and the comment. So in
``SELECT 1 1e-- '<newline>, LOAD_FILE('/etc/hostname') -- '`` the check saw a string where the
server ran ``LOAD_FILE``: a server file read through the read-only promise. The lexer now
takes an exponent's sign only before a digit, as every engine here does.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from db_support import Server, adapter, checksum

from rho_domain.errors import StatementRefused
from rho_domain.ports.database import Database
from rho_domain.sql import classify

# What hides the code from a lexer that missed the comment: a string, a block comment, a
# quoted name, each closed after the code on a line the server comments out again.
MARIADB_ATTACKS = [
    "SELECT 1 1e-- '\n, LOAD_FILE('/etc/hostname') AS f, GET_LOCK('rho', 0) AS g -- '",
    "SELECT 1E+-- '\n2 AS n, LOAD_FILE('/etc/hostname') AS f -- '\nFROM (SELECT 1 AS `1E`) t",
    "SELECT 1 12e-- /*\n, LOAD_FILE('/etc/hostname') AS f -- */",
    "SELECT 1 1e--\t`\n, LOAD_FILE('/etc/hostname') AS f -- `",
    "SELECT 1e-- \"\n, LOAD_FILE('/etc/hostname') AS f -- \"\nFROM (SELECT 1 AS `1e`) t",
]


@pytest.fixture(scope="module")
def maria(request: pytest.FixtureRequest) -> Iterator[tuple[Server, Database]]:
    server: Server = request.getfixturevalue("mariadb_server")
    db = adapter(server)
    yield server, db
    asyncio.run(db.aclose())


@pytest.mark.parametrize("sql", MARIADB_ATTACKS)
@pytest.mark.asyncio(loop_scope="module")
async def test_a_comment_after_an_exponent_without_digits_hides_nothing_on_mariadb(
    maria: tuple[Server, Database], sql: str
) -> None:
    server, db = maria
    before = checksum(server)
    with pytest.raises(StatementRefused) as info:
        await db.query(sql, max_rows=5, timeout=5)
    assert info.value.by == "check", info.value
    assert "load_file" in str(info.value).lower()
    assert checksum(server) == before


@pytest.mark.parametrize("sql", MARIADB_ATTACKS)
@pytest.mark.asyncio(loop_scope="module")
async def test_without_the_check_the_server_reads_the_file(
    maria: tuple[Server, Database], sql: str
) -> None:
    """The target is real: MariaDB runs LOAD_FILE in each (the read-only transaction lets a
    read of a server file through)."""
    server, _ = maria
    db = adapter(server, check=False)
    try:
        result = await db.query(sql, max_rows=5, timeout=5)
    finally:
        await db.aclose()
    assert any(isinstance(v, bytes) and v for v in result.rows[0]), result.rows


@pytest.mark.parametrize("engine", ["postgres", "vertica"])
def test_postgres_before_15_and_vertica_read_1e_dash_dash_as_a_comment(engine: str) -> None:
    sql = "SELECT 1e-- '\n, pg_read_file('/etc/hostname') -- '"
    verdict = classify(sql, engine)
    assert not verdict.read_only
    assert "pg_read_file" in verdict.reason


@pytest.mark.asyncio(loop_scope="module")
async def test_numbers_the_server_reads_still_pass(maria: tuple[Server, Database]) -> None:
    _, db = maria
    result = await db.query(
        "SELECT 1e3, 2E-2, 1.5e+1, .5e1, 3 -1, 1e1-1 -- a comment\n", max_rows=1, timeout=5
    )
    assert [float(v) for v in result.rows[0]] == [1000.0, 0.02, 15.0, 5.0, 2.0, 9.0]
