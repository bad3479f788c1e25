"""SQLite's temporary disk is bounded: a statement that spills past the limit is stopped.

SQLite has no setting for the temporary files a sort writes; a recursive CTE ordered by a
random blob wrote 523 MB in 10 s on this machine and went on to the statement's time limit
(note42 left it). Now the statement's progress handler measures SQLite's open temporary files
and stops the statement past ``options.temp_file_limit_mb`` (default 1024), with an error
saying so, and the next call works.
"""

from __future__ import annotations

import sys

import pytest
from db_support import Server

from rho_adapters.db import ADAPTERS
from rho_adapters.db.sqlite_temp import sqlite_temp_bytes
from rho_domain.config import DatabaseConfig
from rho_domain.errors import DatabaseError
from rho_domain.permissions import DatabaseMode
from rho_domain.ports.database import Database

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the measure reads /proc/self/fd"
)

SPILLS = (
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
    "SELECT x, randomblob(2000) AS b FROM c ORDER BY b"
)


def _db(server: Server, mode: DatabaseMode, limit_mb: int = 16) -> Database:
    config = DatabaseConfig(
        engine="sqlite", path=server.config.path, options={"temp_file_limit_mb": limit_mb}
    )
    return ADAPTERS["sqlite"]("t", config, mode=mode)


@pytest.mark.parametrize("mode", [DatabaseMode.READONLY, DatabaseMode.MUTATIONS])
@pytest.mark.asyncio
async def test_a_sort_that_spills_past_the_limit_is_stopped_with_a_clear_error(
    sqlite_server: Server, mode: DatabaseMode
) -> None:
    db = _db(sqlite_server, mode)
    try:
        with pytest.raises(DatabaseError) as info:
            await db.query(SPILLS, max_rows=5, timeout=20)
        said = str(info.value)
        assert "temporary disk" in said, said  # not the time limit: the disk's
        assert "16 MB" in said, said
        assert "options.temp_file_limit_mb" in said, said
        assert sqlite_temp_bytes() == 0  # the statement's files are gone with it
        again = await db.query("SELECT count(*) FROM users", max_rows=1, timeout=5)
        assert again.rows == ((20,),)
    finally:
        await db.aclose()


@pytest.mark.asyncio
async def test_a_sort_within_the_limit_still_runs(sqlite_server: Server) -> None:
    db = _db(sqlite_server, DatabaseMode.READONLY, limit_mb=64)
    try:
        result = await db.query(
            "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 20000) "
            "SELECT x, randomblob(400) AS b FROM c ORDER BY b LIMIT -1 OFFSET 19999",
            max_rows=5,
            timeout=20,
        )
    finally:
        await db.aclose()
    assert len(result.rows) == 1
