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

While such an object is in ``pg_catalog`` (not an extension's), every statement on that
database is refused, naming it, by a query whose every comparison is exact.
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
