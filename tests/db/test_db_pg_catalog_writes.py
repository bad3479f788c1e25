"""A built-in re-pointed by a write of the catalog itself is refused like a replaced one.

A superuser may ``UPDATE`` the catalog: each of these ran a user's PL/pgSQL for a read the
check passed (PostgreSQL 15, before ``rho_adapters/db/pg_rewritten.py``): ``+(integer,
integer)``'s ``oprcode``, the cast from integer to bigint's ``castfunc``, ``count(any)``'s
transition function, ``int4pl``'s planner support function (for ``a + 1``); and
renaming ``abs(integer)`` away and ``pg_cancel_backend(integer)`` to ``abs`` made ``SELECT
abs(123)`` signal a backend. Now a built-in row written after
initdb refuses every statement (operators, casts, types, aggregates, operator classes...)
or, for an internal function's ``pg_proc`` row, which a ``GRANT`` rewrites too, its name;
a write made while a connection is open is seen before its next statement; and an
``ALTER DATABASE`` of template0 no longer hides a replaced built-in.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import pytest
from db_support import Server, adapter, own_pg_database

from rho_domain.errors import DatabaseError, StatementRefused

_DATABASE = "rho_catalog_writes"
_RAISES = "LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'user code ran'; END $$"
_PLUS = "'pg_catalog.+(integer,integer)'::pg_catalog.regoperator"
_OPERATOR = (
    f"CREATE FUNCTION public.evil_plus(integer, integer) RETURNS integer {_RAISES}",
    f"UPDATE pg_catalog.pg_operator SET oprcode = 'public.evil_plus'::regproc WHERE oid = {_PLUS}",
)
# (what the superuser wrote, a statement it made run user code, what the refusal names):
# each refuses every statement, naming its row: they share one database, whose refusal
# names them all.
EVERY_STATEMENT = {
    "operator": (_OPERATOR, "SELECT 1 + 2", "the operator +(integer,integer)"),
    "cast": (
        (
            f"CREATE FUNCTION public.evil_cast(integer) RETURNS bigint {_RAISES}",
            "UPDATE pg_catalog.pg_cast SET castfunc = 'public.evil_cast'::regproc "
            "WHERE castsource = 'integer'::regtype AND casttarget = 'bigint'::regtype",
        ),
        "SELECT 1::bigint",
        "the cast from integer to bigint",
    ),
    "aggregate": (
        (
            f"CREATE FUNCTION public.evil_step(bigint, anyelement) RETURNS bigint {_RAISES}",
            "UPDATE pg_catalog.pg_aggregate SET aggtransfn = 'public.evil_step'::regproc "
            "WHERE aggfnoid = 'pg_catalog.count(\"any\")'::regprocedure",
        ),
        "SELECT count(x) FROM (VALUES (1), (2)) v (x)",
        'the aggregate count("any")',
    ),
    # a built-in comparison's function: ORDER BY calls it with no name in the text
    "comparison": (
        (
            "UPDATE pg_catalog.pg_amproc SET amproc = 'pg_catalog.btint8cmp'::regproc "
            "WHERE amproc = 'pg_catalog.btint4cmp'::regproc",
        ),
        "SELECT 1",
        "the pg_amproc row",
    ),
    # a built-in's planner support function runs for its operator's call too
    "support": (
        (
            f"CREATE FUNCTION public.evil_support(integer) RETURNS integer {_RAISES}",
            "UPDATE pg_catalog.pg_proc SET prosupport = 'public.evil_support'::regproc"
            " WHERE oid = 'pg_catalog.int4pl(integer, integer)'::regprocedure",
        ),
        "SELECT a + 1 FROM (VALUES (1), (2)) v (a)",
        "the support function of int4pl(integer,integer)",
    ),
    "type": (
        (
            "UPDATE pg_catalog.pg_type SET typoutput = 'pg_catalog.int8out'::regproc "
            "WHERE oid = 'pg_catalog.int4'::regtype",
        ),
        "SELECT 1",
        "the type integer",
    ),
    # a no-op write of template0's row (shared by the cluster: it changes nothing else) made
    # every built-in row look older than initdb's end, a replaced one too
    "template0": (
        (
            f"CREATE FUNCTION public.evil() RETURNS text {_RAISES}",
            "CREATE OR REPLACE FUNCTION pg_catalog.to_timestamp(double precision) RETURNS "
            "timestamp with time zone LANGUAGE sql AS 'SELECT public.evil()::timestamptz'",
            "UPDATE pg_catalog.pg_database SET datallowconn = false WHERE datname = 'template0'",
        ),
        "SELECT to_timestamp(1.0::float8)",
        "pg_catalog.to_timestamp(double precision)",
    ),
}


@pytest.fixture(scope="module")
def written(postgres_server: Server) -> Iterator[Server]:
    setup = [sql for done, _, _ in EVERY_STATEMENT.values() for sql in done]
    with own_pg_database(postgres_server, _DATABASE, setup) as server:
        yield server


async def _refused(server: Server, statements: Iterable[str], named: str) -> None:
    db = adapter(server)
    try:
        for sql in statements:
            with pytest.raises(StatementRefused) as info:
                await db.query(sql, max_rows=1, timeout=5)
            assert info.value.by == "check", info.value
            assert named in str(info.value), info.value
    finally:
        await db.aclose()


@pytest.mark.asyncio
@pytest.mark.parametrize("case", EVERY_STATEMENT)
async def test_a_built_in_row_written_refuses_every_statement(written: Server, case: str) -> None:
    _, statement, named = EVERY_STATEMENT[case]
    await _refused(written, (statement,), named)


@pytest.mark.asyncio
async def test_the_writes_run_user_code_without_the_check(written: Server) -> None:
    """The targets are real: with the statement check off, ``1 + 2``, ``1::bigint``,
    ``count(x)`` and ``a + 1`` ran the user functions (the read-only transaction does not
    stop a read's call)."""
    db = adapter(written, check=False)
    try:
        for case in ("operator", "cast", "aggregate", "support"):
            with pytest.raises(DatabaseError, match="user code ran"):
                await db.query(EVERY_STATEMENT[case][1], max_rows=1, timeout=5)
    finally:
        await db.aclose()


_ABS = "'pg_catalog.abs(integer)'::regprocedure"
_CANCEL = "'pg_catalog.pg_cancel_backend(integer)'::regprocedure"
_RENAMED = (
    f"UPDATE pg_catalog.pg_proc SET proname = 'abs_before' WHERE oid = {_ABS}",
    f"UPDATE pg_catalog.pg_proc SET proname = 'abs' WHERE oid = {_CANCEL}",
    # what administrators do: rewrites the row, not what it runs
    "REVOKE EXECUTE ON FUNCTION pg_catalog.initcap(text) FROM PUBLIC",
    "GRANT EXECUTE ON FUNCTION pg_catalog.initcap(text) TO PUBLIC",
    "REVOKE ALL ON SCHEMA public FROM PUBLIC",
    "GRANT SELECT ON pg_catalog.pg_proc TO PUBLIC",
)


@pytest.mark.asyncio
async def test_a_renamed_built_in_function_is_refused_by_name(postgres_server: Server) -> None:
    """``abs`` now names ``pg_cancel_backend``'s oid: refused, as is the function an
    administrator granted; the rest still reads."""
    with own_pg_database(postgres_server, _DATABASE, _RENAMED) as server:
        await _refused(server, ("SELECT abs(123)",), "pg_catalog.abs(integer) was rewritten")
        await _refused(server, ("SELECT initcap('a')",), "initcap(text) was rewritten")
        db = adapter(server)
        try:
            result = await db.query("SELECT 1 + 2, upper('a') ORDER BY 1", max_rows=1, timeout=5)
        finally:
            await db.aclose()
    assert result.rows == ((3, "A"),)


@pytest.mark.asyncio
async def test_a_write_while_a_connection_is_open_refuses_its_next_statement(
    postgres_server: Server,
) -> None:
    import psycopg  # here, not at the top: tests/test_collection_costs.py

    with own_pg_database(postgres_server, _DATABASE, _OPERATOR[:1]) as server:
        db = adapter(server)
        try:
            before = await db.query("SELECT 1 + 2", max_rows=1, timeout=5)
            c = server.config
            with psycopg.connect(
                host=c.host, port=c.port, user=c.user, dbname=c.database, autocommit=True
            ) as admin:
                admin.execute(_OPERATOR[1])
            with pytest.raises(StatementRefused) as info:
                await db.query("SELECT 1 + 2", max_rows=1, timeout=5)
        finally:
            await db.aclose()
    assert before.rows == ((3,),)
    assert "the operator +(integer,integer)" in str(info.value), info.value
