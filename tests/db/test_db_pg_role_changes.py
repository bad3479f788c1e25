"""What the adapter decided from the login's rights follows a change made while it is open.

Whether a login may set ``temp_file_limit`` was read once, at the connection (from the
``is_superuser`` the server reported at login). A superuser login made ``NOSUPERUSER`` on
another connection then failed every statement ("permission denied to set parameter
temp_file_limit") until its connection was replaced; a login made a superuser read
without the statement's temp-file limit. It is now read with the catalog's version before
each statement (``pg_catalog_calls.temp_limit_of``). The refusals the login's privileges
decide followed already (``test_db_statement_texts``).
"""

from __future__ import annotations

from collections.abc import Iterator

import attrs
import pytest
from db_support import Server

from rho_adapters.db import ADAPTERS

_LOGIN = "rho_flipped27"


@pytest.fixture
def flipped(postgres_server: Server) -> Iterator[tuple[Server, object]]:
    admin = postgres_server.admin()
    admin.autocommit = True
    admin.execute(f"DROP ROLE IF EXISTS {_LOGIN}")
    admin.execute(f"CREATE ROLE {_LOGIN} LOGIN SUPERUSER")
    try:
        yield (
            attrs.evolve(postgres_server, config=attrs.evolve(postgres_server.config, user=_LOGIN)),
            admin,
        )
    finally:
        admin.execute(f"DROP ROLE IF EXISTS {_LOGIN}")
        admin.close()


@pytest.mark.asyncio
async def test_a_login_demoted_or_promoted_while_connected_reads_with_the_right_limit(
    flipped: tuple[Server, object],
) -> None:
    server, admin = flipped
    db = ADAPTERS["postgres"]("t", server.config)
    limit = f"{db.temp_mb() // 1024}GB" if db.temp_mb() % 1024 == 0 else f"{db.temp_mb()}MB"
    try:
        first = await db.query("SHOW temp_file_limit", max_rows=1, timeout=5)
        admin.execute(f"ALTER ROLE {_LOGIN} NOSUPERUSER")  # type: ignore[attr-defined]
        demoted = await db.query("SHOW temp_file_limit", max_rows=1, timeout=5)
        admin.execute(f"ALTER ROLE {_LOGIN} SUPERUSER")  # type: ignore[attr-defined]
        promoted = await db.query("SHOW temp_file_limit", max_rows=1, timeout=5)
    finally:
        await db.aclose()
    assert first.rows == ((limit,),)
    assert demoted.rows == (("-1",),)  # the role's own setting: it may not set one
    assert promoted.rows == ((limit,),)
