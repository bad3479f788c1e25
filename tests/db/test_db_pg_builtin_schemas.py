"""The harness's own reads (``list_tables``, ``describe``) name built-in schemas: they are
refused where one was replaced, as the model's statements are.

``list_tables`` reads ``information_schema.tables`` and ``describe`` its ``columns`` and
``table_constraints``, in a read-only transaction but with no statement check: on
PostgreSQL 15, before this, a superuser's ``CREATE OR REPLACE VIEW
information_schema.tables`` made ``list_tables`` run a user function (the model's
statements were refused, the built-in view being newer than initdb), and so did a new
``information_schema`` schema made after the built-in one was renamed away (``ALTER SCHEMA
information_schema RENAME``), which nothing refused: its views are user views, judged only
where a statement names them (a view renamed away and made again in the built-in schema
was refused already: the rename rewrites its row type's built-in row, for the model's
statements only). Now a schema of a built-in's name made after initdb is
listed with what was made in ``pg_catalog`` (``pg_system_made``), and the harness's reads
are refused, naming it, wherever every statement is.
"""

from __future__ import annotations

import pytest
from db_support import Server, adapter, own_pg_database

from rho_domain.errors import DatabaseError, StatementRefused

_DATABASE = "rho_builtin_schemas"
_SETUP = (
    "CREATE TABLE t (x integer PRIMARY KEY)",
    "CREATE FUNCTION public.evil() RETURNS name LANGUAGE plpgsql"
    " AS $$ BEGIN RAISE EXCEPTION 'user code ran'; END $$",
)
# (what the superuser ran, what the refusal names): the views list_tables and describe read
# (tables, columns) made to call a user function
REPLACED = {
    # a built-in view replaced, and one renamed away and made again in the built-in schema
    # (the rename rewrites its row type's built-in row: pg_rewritten)
    "built-in views replaced": (
        (
            "CREATE TABLE public.copied AS SELECT * FROM information_schema.tables",
            "CREATE OR REPLACE VIEW information_schema.tables AS"
            " SELECT * FROM public.copied WHERE public.evil() IS NOT NULL",
            "ALTER VIEW information_schema.columns RENAME TO columns_before",
            "CREATE VIEW information_schema.columns AS"
            " SELECT * FROM information_schema.columns_before WHERE public.evil() IS NOT NULL",
        ),
        ("the view information_schema.tables", "the type information_schema.columns_before"),
    ),
    "the schema renamed away and made again": (
        (
            "ALTER SCHEMA information_schema RENAME TO moved",
            "CREATE SCHEMA information_schema",
            "CREATE VIEW information_schema.tables AS"
            " SELECT * FROM moved.tables WHERE public.evil() IS NOT NULL",
            "CREATE VIEW information_schema.columns AS"
            " SELECT * FROM moved.columns WHERE public.evil() IS NOT NULL",
        ),
        ("the schema information_schema",),
    ),
}


@pytest.mark.asyncio
@pytest.mark.parametrize("case", REPLACED)
async def test_the_harness_reads_are_refused_where_a_built_in_schema_was_replaced(
    postgres_server: Server, case: str
) -> None:
    made, named = REPLACED[case]
    with own_pg_database(postgres_server, _DATABASE, (*_SETUP, *made)) as server:
        unchecked = adapter(server, check=False)
        db = adapter(server)
        try:
            # the target is real: with the check off, listing the tables ran the function
            with pytest.raises(DatabaseError, match="user code ran"):
                await unchecked.list_tables()
            with pytest.raises(DatabaseError, match="user code ran"):
                await unchecked.describe("t")
            with pytest.raises(StatementRefused) as listed:
                await db.list_tables()
            with pytest.raises(StatementRefused) as described:
                await db.describe("t")
            with pytest.raises(StatementRefused) as selected:
                await db.query("SELECT 1", max_rows=1, timeout=5)
        finally:
            await unchecked.aclose()
            await db.aclose()
    for info in (listed, described, selected):
        assert info.value.by == "check"
        assert all(name in str(info.value) for name in named), info.value
