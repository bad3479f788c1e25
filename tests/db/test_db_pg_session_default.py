"""A session whose default is read-write still runs each statement read-only.

A PostgreSQL 17+ login event trigger runs as the agent's login before the adapter's first
statement; its own ``SET default_transaction_read_only = off`` lasts for that session
(``SET`` at login outranks the startup option the adapter sends). The suite's server is
PostgreSQL 15, which has no login triggers; the closest states it can reach are tried here:

- a role's stored ``ALTER ROLE ... SET default_transaction_read_only = off``, which the
  server gives a session at login: the adapter's startup option outranks it (the session
  shows ``on``);
- a session whose default is read-write when the adapter's first statement comes (what the
  trigger leaves; made here by a startup option of ``off``): the adapter's own ``BEGIN
  TRANSACTION READ ONLY`` is the wall, and with the statement check off every write below
  fails in the engine, on one connection, the tables, catalog and sequence unchanged.
"""

from __future__ import annotations

import attrs
import pytest
from db_support import Server, checksum

from rho_adapters.db import ADAPTERS
from rho_adapters.db.postgres import PostgresDatabase
from rho_domain.errors import StatementRefused

ROLE = "rho_rw_default24"
WRITES = [
    "INSERT INTO users (id, name) VALUES (999, 'x')",
    "UPDATE users SET score = 0",
    "DELETE FROM orders",
    "CREATE TABLE rho_rw_evil (x int)",
    "CREATE TEMP TABLE rho_rw_temp (x int)",
    "SELECT nextval('order_seq')",
    "SELECT setval('order_seq', 100)",
    "SELECT * FROM users FOR UPDATE",
    "WITH d AS (DELETE FROM users RETURNING 1) SELECT count(*) FROM d",
]


class _ReadWriteSession(PostgresDatabase):
    """The adapter, its session's default read-write as a login trigger's SET leaves it."""

    def _read_only_options(self, dsn: str) -> str:
        return "-c default_transaction_read_only=off"


@pytest.mark.asyncio
async def test_a_read_write_session_default_still_runs_statements_read_only(
    postgres_server: Server,
) -> None:
    before = checksum(postgres_server)
    admin = postgres_server.admin()
    admin.autocommit = True
    admin.execute(f"DROP ROLE IF EXISTS {ROLE}")
    admin.execute(f"CREATE ROLE {ROLE} LOGIN SUPERUSER")
    admin.execute(f"ALTER ROLE {ROLE} SET default_transaction_read_only = off")
    as_role = attrs.evolve(postgres_server.config, user=ROLE)
    stored = ADAPTERS["postgres"]("t", as_role)
    loose = _ReadWriteSession("t", postgres_server.config, check_statements=False)
    try:
        shown = await stored.query("SHOW default_transaction_read_only", max_rows=1, timeout=10)
        assert shown.rows == (("on",),)  # the startup option outranks the role's setting
        shown = await loose.query("SHOW default_transaction_read_only", max_rows=1, timeout=10)
        assert shown.rows == (("off",),)  # the session's default is read-write
        for sql in WRITES:
            with pytest.raises(StatementRefused, match=r"in a read-only transaction") as info:
                await loose.query(sql, max_rows=1, timeout=10)
            assert info.value.by == "engine", sql
    finally:
        await stored.aclose()
        await loose.aclose()
        admin.execute(f"DROP ROLE IF EXISTS {ROLE}")
        admin.close()
    assert checksum(postgres_server) == before


@pytest.mark.asyncio
async def test_a_role_preloads_no_library_into_the_agents_session(
    postgres_server: Server,
) -> None:
    """``ALTER ROLE ... SET local_preload_libraries`` (any role may be given one; the server
    loads each from ``$libdir/plugins`` at the session's start, before the first statement)
    loaded C code into the readonly agent's session: a missing one failed its login ("could
    not access file"). The adapter's startup option now empties it."""
    admin = postgres_server.admin()
    admin.autocommit = True
    admin.execute(f"DROP ROLE IF EXISTS {ROLE}")
    admin.execute(f"CREATE ROLE {ROLE} LOGIN")
    admin.execute(f"GRANT SELECT ON users TO {ROLE}")
    admin.execute(f"ALTER ROLE {ROLE} SET local_preload_libraries = 'rho_absent_plugin'")
    db = ADAPTERS["postgres"]("t", attrs.evolve(postgres_server.config, user=ROLE))
    try:
        shown = await db.query("SHOW local_preload_libraries", max_rows=1, timeout=10)
        assert shown.rows == (("",),)
    finally:
        await db.aclose()
        admin.execute(f"REVOKE ALL ON users FROM {ROLE}")
        admin.execute(f"DROP ROLE IF EXISTS {ROLE}")
        admin.close()
