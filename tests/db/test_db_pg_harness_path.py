"""The adapter's own SQL runs no user operator or function, whatever the database holds.

The harness writes SQL of its own around and beside the model's: the catalog reads at
connect and before each statement, ``describe`` and ``list_tables``, the wrapper that cuts
huge values (``pg_cut``), the block that reads an ``EXPLAIN``. No check reads that text, and
PostgreSQL picks a user's operator or function over a built-in when its argument types
match better, whatever the search path: a user's ``||(text, integer)`` ran inside
``describe`` ('||' between a type name and a length), ``>=(oid, integer)`` inside the
catalog read at connect (``oid >= 16384``), ``public.num_nulls(json)`` inside the wrapper of
``SELECT '{}'::json`` (``num_nulls``, resolved by name). Now the harness's statements run
with ``search_path = pg_catalog`` only (``pg_catalog_only``) and the wrapper names its
functions and operator by ``pg_catalog``.
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal

import pytest
from db_support import Server, adapter, own_pg_database

DB = "rho_pg_harness_path"
RAN = "a user function ran in the harness"
SETUP = [
    "CREATE TABLE t (a varchar(10), n numeric(5, 2), j json)",
    "INSERT INTO t VALUES ('x', 1.5, '{}')",
    "CREATE FUNCTION ran() RETURNS boolean LANGUAGE plpgsql AS "
    f"$$ BEGIN RAISE EXCEPTION '{RAN}'; END $$",
    "CREATE FUNCTION cat(text, integer) RETURNS text LANGUAGE sql AS $$ SELECT ran()::text $$",
    "CREATE OPERATOR || (LEFTARG = text, RIGHTARG = integer, FUNCTION = cat)",
    "CREATE FUNCTION ge(oid, integer) RETURNS boolean LANGUAGE sql AS $$ SELECT ran() $$",
    "CREATE OPERATOR >= (LEFTARG = oid, RIGHTARG = integer, FUNCTION = ge)",
    "CREATE FUNCTION num_nulls(json) RETURNS integer LANGUAGE sql AS $$ SELECT ran()::int $$",
]


@pytest.fixture(scope="module")  # one database for the file
def planted(postgres_server: Server) -> Iterator[Server]:
    with own_pg_database(postgres_server, DB, SETUP) as server:
        yield server


async def test_the_harness_sql_runs_no_user_operator_or_function(planted: Server) -> None:
    db = adapter(planted)
    try:
        result = await db.query("SELECT a, n, j FROM t", max_rows=5, timeout=10)
        assert result.rows == (("x", Decimal("1.50"), "{}"),), result.rows
        described = await db.describe("t")
        assert "a character varying(10)" in described
        assert "n numeric(5,2)" in described
        assert [info.name for info in await db.list_tables()] == ["t"]
        (line,) = (await db.query("EXPLAIN SELECT 1", max_rows=5, timeout=10)).rows[0]
        assert line.startswith("Result")
    finally:
        await db.aclose()


async def test_a_statement_repeated_after_a_catalog_change_runs(postgres_server: Server) -> None:
    """The adapter prepares a statement that returns no cursor's rows (``SHOW``), and its
    reset's ``DISCARD ALL`` drops it on the server; psycopg forgets it only at a
    ``DISCARD ALL`` or ``ROLLBACK`` text it has not met since it last forgot, so after the
    catalog re-read (a function made on another connection) it kept the name, and the same
    ``SHOW work_mem`` twice more failed: prepared statement "_pg3_2" does not exist."""
    db = adapter(postgres_server)
    admin = postgres_server.admin()
    admin.autocommit = True
    try:
        for _ in range(2):
            assert (await db.query("SHOW work_mem", max_rows=1, timeout=10)).rows
        admin.execute("CREATE FUNCTION rho_catalog_moved() RETURNS int LANGUAGE sql AS 'SELECT 1'")
        for _ in range(3):
            assert (await db.query("SHOW work_mem", max_rows=1, timeout=10)).rows
    finally:
        admin.execute("DROP FUNCTION IF EXISTS rho_catalog_moved()")
        admin.close()
        await db.aclose()
