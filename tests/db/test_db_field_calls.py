"""PostgreSQL field notation calls functions: ``x.name`` is ``name(x)``.

``('SELECT ...'::text).ts_stat`` ran the query text it was given (``pg_read_file`` of a server
file, ``lo_import``) past the statement check, which held calls to its allowlist but field
notation only to a list of side-effect prefixes. Now, with the server's catalog known, field
notation of any built-in function outside the allowlist is refused, as a call would be; the
prefixes (``ts_stat`` among them) remain for a check made before connecting.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from db_support import Server, adapter, checksum

from rho_domain.errors import StatementRefused
from rho_domain.ports.database import Database
from rho_domain.sql import classify

# ts_stat(sqlquery) runs its argument through SPI: any function, no check of its own.
TS_STAT_ATTACKS = [
    "SELECT (('SELECT to_tsvector(pg_read_file(''{secret}''))'::text).ts_stat).*",
    "SELECT ('SELECT to_tsvector(pg_read_file(''{secret}''))'::text).ts_stat",
    "SELECT (q).ts_stat FROM (SELECT 'SELECT to_tsvector(pg_read_file(''{secret}''))'::text "
    "AS q) s",
    "SELECT (('SELECT to_tsvector(pg_read_file(''{secret}''))'::text).\"ts_stat\").*",
    "SELECT (('SELECT to_tsvector(pg_read_file(''{secret}''))'::text).U&\"ts_st\\0061t\").*",
    "SELECT (('SELECT to_tsvector(lo_import(''{secret}'')::text)'::text).TS_STAT).*",
]
# Built-ins off the allowlist and off the side-effect prefixes: only the catalog rule
# refuses them in field notation (a call of each is refused as every unlisted one is).
UNLISTED_BUILTINS = [
    "SELECT ('order_seq'::regclass).pg_sequence_last_value",
    "SELECT (1::bigint).txid_status",
    "SELECT ('users'::regclass::oid).plpgsql_validator",
]


@pytest.fixture(scope="module")
def pg(request: pytest.FixtureRequest) -> Iterator[tuple[Server, Database]]:
    server: Server = request.getfixturevalue("postgres_server")
    db = adapter(server)
    yield server, db
    asyncio.run(db.aclose())


@pytest.fixture
def secret(postgres_server: Server) -> Iterator[Path]:
    """A file the server process can read: what a read-only agent must not get."""
    path = postgres_server.workdir / "secret.txt"
    path.write_text("hunter2 swordfish\n")
    path.chmod(0o644)
    yield path
    path.unlink()


@pytest.mark.parametrize("sql", TS_STAT_ATTACKS)
@pytest.mark.asyncio(loop_scope="module")
async def test_a_query_run_by_ts_stat_in_field_notation_is_refused_by_the_check(
    pg: tuple[Server, Database], secret: Path, sql: str
) -> None:
    server, db = pg
    before = checksum(server)
    with pytest.raises(StatementRefused) as info:
        await db.query(sql.format(secret=secret), max_rows=10, timeout=5)
    assert info.value.by == "check", info.value
    assert "ts_st" in str(info.value).lower()
    assert checksum(server) == before


@pytest.mark.parametrize("sql", UNLISTED_BUILTINS)
@pytest.mark.asyncio(loop_scope="module")
async def test_field_notation_of_a_builtin_off_the_allowlist_is_refused_on_a_server(
    pg: tuple[Server, Database], sql: str
) -> None:
    _, db = pg
    name = sql.rsplit(".", 1)[1]
    assert classify(sql, "postgres").read_only  # no prefix names it: the catalog must
    with pytest.raises(StatementRefused) as info:
        await db.query(sql, max_rows=10, timeout=5)
    assert info.value.by == "check", info.value
    assert f".{name} calls the built-in function {name}()" in str(info.value)


def test_ts_stat_is_refused_in_field_notation_before_the_catalog_is_known() -> None:
    verdict = classify("SELECT ('SELECT 1'::text).ts_stat", "postgres")
    assert not verdict.read_only
    assert "ts_stat names a function with side effects" in verdict.reason


def test_an_allowed_function_and_columns_still_read_in_field_notation() -> None:
    catalog = frozenset({"upper", "ts_stat", "system", "lower"})
    ok = [
        "SELECT (name).upper FROM users",
        "SELECT u.name, u.score FROM users u",
        "SELECT system FROM hosts",  # a column named like a built-in, unqualified
    ]
    for sql in ok:
        assert classify(sql, "postgres", available_functions=catalog).read_only, sql
    refused = classify("SELECT h.system FROM hosts h", "postgres", available_functions=catalog)
    assert "without the table qualifier" in refused.reason
    vetted = classify(
        "SELECT h.system FROM hosts h",
        "postgres",
        available_functions=catalog,
        allowed_functions=frozenset({"system"}),
    )
    assert vetted.read_only


@pytest.mark.asyncio(loop_scope="module")
async def test_allowlisted_field_notation_still_runs_on_a_server(
    pg: tuple[Server, Database],
) -> None:
    _, db = pg
    result = await db.query(
        "SELECT (u.name).upper, u.score FROM users u ORDER BY u.id LIMIT 1", max_rows=1, timeout=5
    )
    assert result.rows == (("USER1", 10),)
