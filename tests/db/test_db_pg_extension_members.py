"""An extension's objects are trusted only as its script made them.

The catalog reads trust an extension's members as its installer's. Membership alone could be
given (``ALTER EXTENSION plpgsql ADD FUNCTION public.lower(integer)``, a superuser's; the
owner of a trusted extension, ``CREATE EXTENSION pg_trgm`` by a role with ``CREATE`` on the
database, adding a function of its own in the transaction that made it) and a member's body
replaced after its script ran (``fetchval``, hstore's ``->``), and each ran for a read,
unjudged. Now a member is trusted only where its rows were written by its script and a
superuser owns it (``rho_adapters/db/pg_extension_members.py``), and where its membership
is newer than the extension's row only in ``pg_upgrade``'s shape (a superuser's function
made and added in one transaction ran for ``SELECT initcap(1)``); what the scripts made
still runs.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from db_support import Server, adapter, own_pg_database

from rho_domain.errors import StatementRefused

_RAISES = "LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'user code ran'; END $$"
_OWNER = "rho_ext_owner"
_DATABASE, _ALONE, _MADE_HERE = "rho_ext_members", "rho_ext_alone", "rho_ext_made"
_MAKER = "rho_ext_maker"
# (what was done, the statement it must refuse, a name the refusal says): these refuse only
# their own statements, so they share one database.
SHARED = {
    "added": (
        (
            f"CREATE FUNCTION public.lower(integer) RETURNS text {_RAISES}",
            "ALTER EXTENSION plpgsql ADD FUNCTION public.lower(integer)",
        ),
        "SELECT lower(1)",
        "public.lower",
    ),
    "owner-added": (
        (
            f"CREATE ROLE {_OWNER}",
            f"GRANT CREATE ON DATABASE {_DATABASE} TO {_OWNER}",
            f"GRANT CREATE ON SCHEMA public TO {_OWNER}",
            f"SET ROLE {_OWNER}",
            "CREATE EXTENSION pg_trgm",
            # one transaction: the function's row and its membership's are written together
            f"CREATE FUNCTION public.upper(integer) RETURNS text {_RAISES}; "
            "ALTER EXTENSION pg_trgm ADD FUNCTION public.upper(integer)",
            "RESET ROLE",
        ),
        "SELECT upper(1)",
        "public.upper",
    ),
    "replaced": (
        (
            "CREATE EXTENSION hstore",
            "CREATE OR REPLACE FUNCTION public.fetchval(public.hstore, text) RETURNS text "
            + _RAISES,
        ),
        "SELECT 'a=>1'::hstore -> 'a'",
        "public.fetchval",
    ),
    # a superuser's function made and added in one transaction, after hstore's script: the
    # rows' transaction is the membership's, as in pg_upgrade's restore; told apart by
    # hstore's other memberships, as old as its row (the restore adds every one later)
    "superuser-added": (
        (
            f"CREATE FUNCTION public.initcap(integer) RETURNS text {_RAISES}; "
            "ALTER EXTENSION hstore ADD FUNCTION public.initcap(integer)",
        ),
        "SELECT initcap(1)",
        "public.initcap",
    ),
    "superuser-added-operator": (
        (
            f"CREATE FUNCTION public.evil_both(integer, integer) RETURNS boolean {_RAISES}; "
            "CREATE OPERATOR public.#~# (LEFTARG = integer, RIGHTARG = integer, "
            "FUNCTION = public.evil_both); "
            "ALTER EXTENSION hstore ADD FUNCTION public.evil_both(integer, integer); "
            "ALTER EXTENSION hstore ADD OPERATOR public.#~# (integer, integer)",
        ),
        "SELECT 1 #~# 2",
        "public.evil_both",
    ),
    # a write of the catalog itself: the row's transaction is none of the scripts'
    "written": (
        (
            f"CREATE FUNCTION public.evil_arrow(public.hstore, text) RETURNS text {_RAISES}",
            "UPDATE pg_catalog.pg_operator SET oprcode = 'public.evil_arrow'::regproc"
            " WHERE oid = 'public.->(public.hstore, text[])'::regoperator",
        ),
        "SELECT 'a=>1'::hstore -> ARRAY['a']",
        "public.evil_arrow",
    ),
    "operator": (
        (
            f"CREATE FUNCTION public.evil_op(integer, integer) RETURNS boolean {_RAISES}",
            "CREATE OPERATOR public.### (LEFTARG = integer, RIGHTARG = integer, "
            "FUNCTION = public.evil_op)",
            "ALTER EXTENSION hstore ADD OPERATOR public.### (integer, integer)",
        ),
        "SELECT 1 ### 2",
        "public.evil_op",
    ),
    "cast": (
        (
            f"CREATE FUNCTION public.evil_cast(public.hstore) RETURNS integer {_RAISES}",
            "CREATE CAST (public.hstore AS integer) WITH FUNCTION public.evil_cast(public.hstore)",
            "ALTER EXTENSION hstore ADD CAST (public.hstore AS integer)",
        ),
        "SELECT 'a=>1'::hstore::integer",
        "public.evil_cast",
    ),
    "view": (
        (
            f"CREATE FUNCTION public.evil_view() RETURNS text {_RAISES}",
            "CREATE VIEW public.v AS SELECT 'a'::text AS a; "
            "ALTER EXTENSION hstore ADD VIEW public.v",
            "CREATE OR REPLACE VIEW public.v AS SELECT public.evil_view() AS a",
        ),
        "SELECT * FROM v",
        "public.evil_view",
    ),
}
# These refuse every statement: each has a database of its own.
ALONE = {
    "added-in-pg_catalog": (
        (
            f"CREATE FUNCTION pg_catalog.lower(integer) RETURNS text {_RAISES}",
            "ALTER EXTENSION plpgsql ADD FUNCTION pg_catalog.lower(integer)",
        ),
        "SELECT 1",
        "pg_catalog.lower(integer)",
    ),
    "family": (
        (
            "CREATE EXTENSION citext",
            f"CREATE FUNCTION public.evil(public.citext, text) RETURNS integer {_RAISES}",
            "ALTER OPERATOR FAMILY public.citext_ops USING btree "
            "ADD FUNCTION 1 (public.citext, text) public.evil(public.citext, text)",
        ),
        "SELECT 1",
        "public.evil",
    ),
}


@pytest.fixture(scope="module")
def shared(postgres_server: Server) -> Iterator[Server]:
    setup = [sql for done, _, _ in SHARED.values() for sql in done]
    with own_pg_database(postgres_server, _DATABASE, setup, roles=[_OWNER]) as server:
        yield server


async def _refused(server: Server, statement: str, named: str) -> None:
    db = adapter(server)
    try:
        with pytest.raises(StatementRefused) as info:
            await db.query(statement, max_rows=1, timeout=5)
    finally:
        await db.aclose()
    assert info.value.by == "check", info.value
    assert named in str(info.value), info.value


@pytest.mark.asyncio
@pytest.mark.parametrize("case", SHARED)
async def test_a_member_its_script_did_not_make_is_judged(shared: Server, case: str) -> None:
    _, statement, named = SHARED[case]
    await _refused(shared, statement, named)


@pytest.mark.asyncio
@pytest.mark.parametrize("case", ALONE)
async def test_one_in_pg_catalog_or_a_family_refuses_every_statement(
    postgres_server: Server, case: str
) -> None:
    setup, statement, named = ALONE[case]
    with own_pg_database(postgres_server, _ALONE, setup) as server:
        await _refused(server, statement, named)


_MADE = (
    "CREATE EXTENSION hstore VERSION '1.4'",
    "ALTER EXTENSION hstore UPDATE",
    # two steps: the first rewrites the operator <= (ALTER OPERATOR ... SET), the second
    # the extension's row, which the operator's was compared with (it was refused)
    "CREATE EXTENSION citext VERSION '1.4'",
    "ALTER EXTENSION citext UPDATE TO '1.5'",
    "ALTER EXTENSION citext UPDATE TO '1.6'",
    f"CREATE ROLE {_MAKER}",
    f"GRANT CREATE ON DATABASE {_MADE_HERE} TO {_MAKER}",
    f"SET ROLE {_MAKER}",
    "CREATE EXTENSION pg_trgm",
    "RESET ROLE",
    # what an administrator grants rewrites a member's row, not what it runs
    "REVOKE EXECUTE ON FUNCTION public.fetchval(public.hstore, text) FROM PUBLIC",
    "GRANT EXECUTE ON FUNCTION public.fetchval(public.hstore, text) TO PUBLIC",
    "CREATE EXTENSION pg_buffercache",
    f"GRANT SELECT ON public.pg_buffercache TO {_MAKER}",
    "CREATE TABLE public.t (c public.citext, h public.hstore)",
    "INSERT INTO public.t VALUES ('B', 'a=>1'), ('a', 'a=>2')",
)


@pytest.mark.asyncio
async def test_what_the_scripts_made_runs(postgres_server: Server) -> None:
    """Made by ``CREATE EXTENSION`` (pg_trgm by a non-superuser, whose script runs as the
    bootstrap superuser) or by ``ALTER EXTENSION UPDATE``, in one step or two: operators,
    casts and operator classes run, sorting by citext's comparison too; and after a
    ``GRANT`` or ``REVOKE`` on one of its C functions or views, which rewrites that row (not
    what it runs)."""
    with own_pg_database(postgres_server, _MADE_HERE, _MADE, roles=[_MAKER]) as server:
        db = adapter(server)
        try:
            ordered = await db.query("SELECT c FROM t ORDER BY c", max_rows=5, timeout=5)
            fetched = await db.query("SELECT h -> 'a' FROM t ORDER BY 1", max_rows=5, timeout=5)
            similar = await db.query("SELECT 'word'::text % 'words'", max_rows=1, timeout=5)
            at_most = await db.query("SELECT count(*) FROM t WHERE c <= 'b'", max_rows=1, timeout=5)
            buffers = await db.query(
                "SELECT count(*) > 0 FROM pg_buffercache", max_rows=1, timeout=5
            )
        finally:
            await db.aclose()
    assert ordered.rows == (("a",), ("B",))
    assert fetched.rows == (("1",), ("2",))
    assert similar.rows == ((True,),)
    assert at_most.rows == ((2,),)
    assert buffers.rows == ((True,),)
