"""The adapter's own reads before a statement convert no value through a cast a user may add.

Before each statement the PostgreSQL adapter reads a version of the catalog (the newest
``xmin`` of the user's objects), written ``xmin::text::int8``. Neither ``xid -> text`` nor
``text -> int8`` is in ``pg_cast`` (they are I/O conversions), so a superuser's
``CREATE CAST (xid AS text) WITH FUNCTION public.f(xid)`` ran ``f`` before every statement,
the harmless ``SELECT 1`` too (a function that raised failed them all; one that answered a
constant froze the version, so objects made later in the session went unseen). The version
now calls the I/O functions themselves; a statement that converts an ``xid`` to text still
meets the cast, and the check refuses it there.
"""

from __future__ import annotations

import pytest
from db_support import Server, adapter, own_pg_database

from rho_domain.errors import StatementRefused

SETUP = (
    "CREATE FUNCTION public.xid_text(xid) RETURNS text LANGUAGE plpgsql AS "
    "$$ BEGIN RAISE EXCEPTION 'user cast ran'; END $$",
    "CREATE CAST (xid AS text) WITH FUNCTION public.xid_text(xid)",
)


@pytest.mark.asyncio
async def test_a_users_cast_from_xid_to_text_runs_only_where_a_statement_converts(
    postgres_server: Server,
) -> None:
    with own_pg_database(postgres_server, "rho_harness_casts", SETUP) as server:
        db = adapter(server)
        try:
            ran = await db.query("SELECT 1", max_rows=1, timeout=5)
            assert ran.rows == ((1,),)
            with pytest.raises(StatementRefused) as info:
                await db.query("SELECT xmin::text FROM pg_class", max_rows=1, timeout=5)
            assert "public.xid_text()" in str(info.value)
        finally:
            await db.aclose()
