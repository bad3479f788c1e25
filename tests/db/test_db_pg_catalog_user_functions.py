"""PostgreSQL's own schema is trusted only while it holds PostgreSQL's own objects.

The statement check trusts ``pg_catalog``'s names (``pg_catalog.lower`` is the built-in), and
the adapter's own catalog reads resolve operators there. A superuser may make functions and
operators in it, and both trusts reached them:

- ``CREATE FUNCTION pg_catalog.lower(integer)`` (PL/pgSQL, any body) ran for
  ``SELECT lower(1)``, an exact match the server prefers to the built-in ``lower(text)``; so
  did a user operator whose function was made there with a built-in's name (``length``),
  and a field read by field notation (``c.upper``, ``pg_catalog.upper(pg_class)``);
- ``CREATE OPERATOR pg_catalog.>= (oid, integer)`` answering false hid every user function
  from the catalog reads (their ``p.oid >= 16384``), so a ``public.lower(integer)`` ran for
  ``SELECT lower(1)``.

- ``CREATE OR REPLACE`` of a built-in keeps its oid, so neither list saw it: a SQL function
  ``to_timestamp(double precision)`` and the views ``pg_catalog.pg_tables`` and
  ``information_schema.information_schema_catalog_name`` made to call a user function ran it
  for a read.

While such an object is in ``pg_catalog`` (not an extension's), or a built-in function (not
internal or C) or view of ``pg_catalog`` or ``information_schema`` has a row newer than
``template0``'s, every statement on that database is refused, naming it, by a query whose
every comparison is exact. A built-in's row changed by a GRANT or an ALTER of an internal
function leaves the other statements reading (that function is refused by name: its row
alone does not say whether it was renamed).
"""

from __future__ import annotations

from collections.abc import Iterable

import pytest
from db_support import Server, adapter, own_pg_database

from rho_domain.errors import StatementRefused

_RAISES = "LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'user code ran'; END $$"
FUNCTIONS_MADE_THERE = (
    f"CREATE FUNCTION pg_catalog.lower(integer) RETURNS text {_RAISES}",
    f"CREATE FUNCTION pg_catalog.length(text, integer) RETURNS boolean {_RAISES}",
    "CREATE OPERATOR public.= (LEFTARG = text, RIGHTARG = integer, FUNCTION = pg_catalog.length)",
    f"CREATE FUNCTION pg_catalog.upper(pg_catalog.pg_class) RETURNS text {_RAISES}",
)
AN_OPERATOR_MADE_THERE = (
    "CREATE FUNCTION public.never(oid, integer) RETURNS boolean LANGUAGE sql IMMUTABLE "
    "AS 'SELECT false'",
    "CREATE OPERATOR pg_catalog.>= (LEFTARG = oid, RIGHTARG = integer, FUNCTION = public.never)",
    f"CREATE FUNCTION public.lower(integer) RETURNS text {_RAISES}",
)
_EVIL = f"CREATE FUNCTION public.evil() RETURNS name {_RAISES}"
_PG_TABLES = (
    "SELECT n.nspname AS schemaname, public.evil() AS tablename, "
    "pg_get_userbyid(c.relowner) AS tableowner, t.spcname AS tablespace, "
    "c.relhasindex AS hasindexes, c.relhasrules AS hasrules, "
    "c.relhastriggers AS hastriggers, c.relrowsecurity AS rowsecurity FROM pg_class c "
    "LEFT JOIN pg_namespace n ON n.oid = c.relnamespace "
    "LEFT JOIN pg_tablespace t ON t.oid = c.reltablespace WHERE c.relkind IN ('r', 'p')"
)
BUILT_INS_REPLACED = (
    _EVIL,
    "CREATE OR REPLACE FUNCTION pg_catalog.to_timestamp(double precision) "
    "RETURNS timestamp with time zone LANGUAGE sql AS 'SELECT public.evil()::text::timestamptz'",
    f"CREATE OR REPLACE VIEW pg_catalog.pg_tables AS {_PG_TABLES}",
    "CREATE OR REPLACE VIEW information_schema.information_schema_catalog_name AS "
    "SELECT public.evil()::information_schema.sql_identifier AS catalog_name",
)
CASES = (
    (
        FUNCTIONS_MADE_THERE,
        "pg_catalog.lower(integer)",
        (
            "SELECT lower(1)",
            "SELECT pg_catalog.lower(1)",
            "SELECT 'a'::text = 1",
            "SELECT c.upper FROM pg_class c LIMIT 1",
        ),
    ),
    (AN_OPERATOR_MADE_THERE, "pg_catalog.>=(oid, integer)", ("SELECT lower(1)", "SELECT 1")),
    (
        BUILT_INS_REPLACED,
        "pg_catalog.to_timestamp(double precision), the view information_schema."
        "information_schema_catalog_name, the view pg_catalog.pg_tables",
        (
            "SELECT to_timestamp(1.0::float8)",
            "SELECT * FROM pg_tables LIMIT 1",
            "SELECT * FROM information_schema.information_schema_catalog_name",
        ),
    ),
)
# A built-in's row changed, but not what it runs: statements still run.
BUILT_INS_GRANTED = (
    "ALTER FUNCTION pg_catalog.initcap(text) COST 2",
    "REVOKE EXECUTE ON FUNCTION pg_catalog.to_timestamp(double precision) FROM PUBLIC",
    "GRANT EXECUTE ON FUNCTION pg_catalog.to_timestamp(double precision) TO PUBLIC",
    "GRANT SELECT ON pg_catalog.pg_tables TO PUBLIC",
)


async def _refused(server: Server, named: str, statements: Iterable[str]) -> None:
    db = adapter(server)
    try:
        for sql in statements:
            with pytest.raises(StatementRefused) as info:
                await db.query(sql, max_rows=1, timeout=5)
            said = str(info.value)
            assert info.value.by == "check", said
            assert named in said, said
    finally:
        await db.aclose()


@pytest.mark.asyncio
async def test_a_function_or_operator_made_in_pg_catalog_refuses_every_statement(
    postgres_server: Server,
) -> None:
    for setup, named, statements in CASES:
        with own_pg_database(postgres_server, "rho_catalog_made", setup) as server:
            await _refused(server, named, statements)
    with own_pg_database(postgres_server, "rho_catalog_made", BUILT_INS_GRANTED) as server:
        db = adapter(server)
        try:
            result = await db.query("SELECT upper('a')", max_rows=1, timeout=5)
            assert result.rows == (("A",),)
        finally:
            await db.aclose()
        # the rewritten rows' own functions are refused by name (test_db_pg_catalog_writes)
        await _refused(server, "pg_catalog.initcap(text) was rewritten", ["SELECT initcap('a')"])


@pytest.mark.asyncio
async def test_a_built_in_replaced_while_a_connection_is_open_refuses_the_next_statement(
    postgres_server: Server,
) -> None:
    """``CREATE OR REPLACE`` keeps a built-in's oid, and the check before each statement read
    the user oids' rows only: an open connection ran the replaced built-in until the
    connection was replaced. A function and a view, each alone (an internal function
    replaced runs its C still: the server calls a built-in by its oid)."""
    replaced = (
        (BUILT_INS_REPLACED[1], "SELECT to_timestamp(1.0::float8)", "to_timestamp"),
        (BUILT_INS_REPLACED[2], "SELECT * FROM pg_tables LIMIT 1", "pg_catalog.pg_tables"),
    )
    for replace, statement, named in replaced:
        with own_pg_database(postgres_server, "rho_catalog_made", (_EVIL,)) as server:
            db = adapter(server)
            try:
                before = await db.query(statement, max_rows=1, timeout=5)
                import psycopg  # here, not at the top: tests/test_collection_costs.py

                c = server.config
                with psycopg.connect(
                    host=c.host, port=c.port, user=c.user, dbname=c.database, autocommit=True
                ) as admin:
                    admin.execute(replace)
                with pytest.raises(StatementRefused) as info:
                    await db.query(statement, max_rows=1, timeout=5)
            finally:
                await db.aclose()
            assert before.columns, statement
            assert info.value.by == "check", info.value
            assert named in str(info.value), info.value
