"""A function a superuser made in ``pg_catalog`` is judged as the user function it is.

The statement check trusts ``pg_catalog``'s functions by name (``pg_catalog.lower`` is the
built-in), and that trust reached a function made there after initdb:
``CREATE FUNCTION pg_catalog.lower(integer)`` (PL/pgSQL, any body) ran for ``SELECT lower(1)``,
an exact match the server prefers to the built-in ``lower(text)``, and so did an operator
whose function was made there with a built-in's name (``length``) and a field read by
field notation (``c.upper``, ``pg_catalog.upper(pg_class)``). The catalog now names such a
function with its schema quoted, which no trust by schema matches.
"""

from __future__ import annotations

import pytest
from db_support import Server, adapter, own_pg_database

from rho_domain.errors import StatementRefused

_RAISES = "LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'user code ran'; END $$"
SETUP = (
    f"CREATE FUNCTION pg_catalog.lower(integer) RETURNS text {_RAISES}",
    f"CREATE FUNCTION pg_catalog.length(text, integer) RETURNS boolean {_RAISES}",
    "CREATE OPERATOR public.= (LEFTARG = text, RIGHTARG = integer, FUNCTION = pg_catalog.length)",
    f"CREATE FUNCTION pg_catalog.upper(pg_catalog.pg_class) RETURNS text {_RAISES}",
)
CALLS = {
    "SELECT lower(1)": "lower",
    "SELECT pg_catalog.lower(1)": "lower",
    "SELECT 'a'::text = 1": "length",
    "SELECT c.upper FROM pg_class c LIMIT 1": "upper",
}


@pytest.mark.asyncio
async def test_a_function_made_in_pg_catalog_is_judged_as_a_user_function(
    postgres_server: Server,
) -> None:
    with own_pg_database(postgres_server, "rho_catalog_made", SETUP) as server:
        db = adapter(server)
        try:
            for sql, name in CALLS.items():
                with pytest.raises(StatementRefused) as info:
                    await db.query(sql, max_rows=1, timeout=5)
                said = str(info.value)
                assert info.value.by == "check", said
                assert f'"pg_catalog".{name}()' in said, said
            # judged by name, as a user function anywhere is (lower('A') is refused too,
            # while one named lower is there); other built-ins run
            fine = await db.query("SELECT initcap('a')", max_rows=1, timeout=5)
            assert fine.rows == (("A",),)
        finally:
            await db.aclose()
