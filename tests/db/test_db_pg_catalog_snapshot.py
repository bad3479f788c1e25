"""The check's scans are skipped while the server's snapshot is unchanged, and only then.

``pg_catalog_version.catalog_version`` keeps what the scans of the user objects' and the
built-ins' rows returned with the snapshot they read at; while no transaction commits
the snapshot stays the same and the scans are not run (one small statement a check on a
quiet server, instead of ~6,000 rows scanned and planned). Each test plants a kept answer
no scan returns (``KEPT``) with the server's current snapshot, so a skipped scan is seen
as that answer coming back and a scan that ran as the real one: a commit from another
connection, from the checked connection itself, or of rows the check does not read,
brings the scans back; the login's rights are read at every check, skipped scans or not.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from typing import Any

import attrs
import pytest
from db_support import Server, adapter, own_pg_database

from rho_adapters.db.pg_catalog_version import CatalogVersion, catalog_version
from rho_domain.errors import StatementRefused

_DATABASE = "rho_catalog_snapshot"
KEPT = ("kept by the last check",)
_RAISES = "LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'user code ran'; END $$"
# pg_current_snapshot() of a statement that changes nothing: the version's own snapshot
_SNAPSHOT = "SELECT pg_catalog.pg_current_snapshot()::text"
_MEMBER = (
    "SELECT NOT EXISTS (SELECT FROM pg_auth_members WHERE roleid = 'pg_read_all_stats'::regrole"
    " AND member = (SELECT oid FROM pg_roles WHERE rolname = current_user))"
)


@pytest.fixture(scope="module")
def database(postgres_server: Server) -> Iterator[Server]:
    with own_pg_database(postgres_server, _DATABASE, ["CREATE TABLE t (x integer)"]) as server:
        yield server
        _commit_elsewhere(server, "REVOKE pg_read_all_stats FROM CURRENT_USER")  # a toggle's


def _connect(server: Server) -> Any:
    import psycopg  # here, not at the top: tests/test_collection_costs.py

    c = server.config
    return psycopg.connect(
        host=c.host, port=c.port, user=c.user, dbname=c.database, autocommit=True
    )


def _quiet_pair(conn: Any, *, quiet: bool) -> tuple[CatalogVersion, CatalogVersion]:
    """A version whose scans are ``KEPT``, planted at the server's snapshot, and the check
    that followed it while that snapshot held (a background commit, autovacuum's, moves it:
    the pair is taken again)."""
    for _ in range(50):
        now = catalog_version(conn, None)
        planted = attrs.evolve(now, scans=KEPT, quiet=quiet)
        after = catalog_version(conn, planted)
        if after.snapshot == now.snapshot:
            return planted, after
    raise AssertionError("the server's snapshot moved at every check")


@pytest.mark.parametrize("quiet", [True, False], ids=["small statement", "whole statement"])
def test_the_scans_are_skipped_while_the_snapshot_holds(database: Server, quiet: bool) -> None:
    with _connect(database) as conn:
        planted, after = _quiet_pair(conn, quiet=quiet)
    assert after.scans == KEPT
    assert after.quiet
    # the rights are read again, whatever the snapshot: KEPT is not a login's rights
    assert after.rights == planted.rights
    assert after.same_catalog(planted)


def test_the_rights_are_read_at_every_check(database: Server) -> None:
    """A right answers through the backend's caches, which may lag its snapshot: never kept."""
    with _connect(database) as conn:
        for _ in range(50):
            now = catalog_version(conn, None)
            after = catalog_version(conn, attrs.evolve(now, rights=KEPT, quiet=True))
            if after.snapshot == now.snapshot:
                break
    assert after.quiet
    assert after.rights not in (KEPT, ())
    assert after.temp_limit  # the test's login is a superuser


def _commit_elsewhere(server: Server, sql: str) -> None:
    with _connect(server) as other:
        other.execute(sql)


# (a transaction committed after the planted check: the next check scans again)
_made = itertools.count()
COMMITS: dict[str, Callable[[Server, Any], object]] = {
    "a function made on another connection": lambda server, conn: _commit_elsewhere(
        server, f"CREATE FUNCTION public.elsewhere{next(_made)}() RETURNS integer {_RAISES}"
    ),
    "a function made on this connection": lambda server, conn: conn.execute(
        f"CREATE FUNCTION public.here{next(_made)}() RETURNS integer {_RAISES}"
    ),
    # the check cannot tell which rows a commit wrote without reading them
    "a row of a user table": lambda server, conn: _commit_elsewhere(
        server, "INSERT INTO t VALUES (1)"
    ),
    # granted, or revoked when granted already (a GRANT of a member writes nothing)
    "a role granted on another connection": lambda server, conn: _commit_elsewhere(
        server,
        "GRANT pg_read_all_stats TO CURRENT_USER"
        if conn.execute(_MEMBER).fetchone()[0]
        else "REVOKE pg_read_all_stats FROM CURRENT_USER",
    ),
}


@pytest.mark.parametrize("quiet", [True, False], ids=["small statement", "whole statement"])
@pytest.mark.parametrize("commit", COMMITS)
def test_a_commit_anywhere_brings_the_scans_back(
    database: Server, commit: str, quiet: bool
) -> None:
    with _connect(database) as conn:
        planted, _ = _quiet_pair(conn, quiet=quiet)
        COMMITS[commit](database, conn)
        after = catalog_version(conn, planted)
        moved = conn.execute(_SNAPSHOT).fetchone()[0]
    assert after.snapshot != planted.snapshot
    assert moved != planted.snapshot
    assert after.scans not in (KEPT, ())
    assert not after.quiet


@pytest.mark.asyncio
async def test_a_function_made_while_the_checks_were_quiet_refuses_the_next_statement(
    database: Server,
) -> None:
    """Through the adapter: after statements whose checks found the snapshot unchanged (the
    small statement asked first), a function made on another connection is judged at once."""
    db = adapter(database)
    try:
        read = [await db.query(f"SELECT lower('{c}')", max_rows=1, timeout=5) for c in "ABC"]
        _commit_elsewhere(database, f"CREATE FUNCTION public.lower(integer) RETURNS text {_RAISES}")
        with pytest.raises(StatementRefused) as info:
            await db.query("SELECT lower(1)", max_rows=1, timeout=5)
    finally:
        await db.aclose()
    assert [r.rows for r in read] == [(("a",),), (("b",),), (("c",),)]
    assert "calls public.lower()" in str(info.value), info.value
