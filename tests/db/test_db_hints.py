"""MySQL optimizer hints are refused: they replace the session's limits for one statement.

MySQL 8 reads ``/*+ ... */`` after SELECT as hints: ``MAX_EXECUTION_TIME(N)`` replaces the
``max_execution_time`` the adapter sets for the call, and ``SET_VAR(...)`` any hintable
session variable (``max_execution_time``, ``tmp_table_size``, ``sql_mode``...), so a read
could run past its limit on the server after the adapter gave up on it. MariaDB ignores
hints (a plain comment there). No read needs one, so the mysql dialect refuses ``/*+``
wherever it stands, by construction, rather than judge what a hint says. The rig runs
MariaDB; the refusal is the check's, so it holds on MySQL as well.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from db_support import Server, adapter

from rho_domain.errors import StatementRefused
from rho_domain.ports.database import Database
from rho_domain.sql import classify, dialect

HINTED = [
    "SELECT /*+ MAX_EXECUTION_TIME(100000000) */ COUNT(*) FROM users a, users b, users c",
    "SELECT /*+ SET_VAR(max_execution_time = 0) */ 1",
    "SELECT /*+ SET_VAR(sql_mode = 'NO_BACKSLASH_ESCAPES') */ 'a\\\\'",
    "SELECT * FROM (SELECT /*+ MAX_EXECUTION_TIME(0) */ 1) t",
    "WITH x AS (SELECT /*+ SET_VAR(tmp_table_size = 1099511627776) */ 1) SELECT * FROM x",
    "SELECT/*+RESOURCE_GROUP(rg) BKA(t)*/ 1 FROM users t",
    "EXPLAIN SELECT /*+ NO_ICP(t) */ * FROM users t",
]


@pytest.mark.parametrize("sql", HINTED)
def test_a_hint_is_refused_under_every_sql_mode(sql: str) -> None:
    for settings in dialect("mysql").reading_by_setting:
        verdict = classify(sql, "mysql", settings=settings)
        assert not verdict.read_only, (sql, settings)
        assert "optimizer hints" in verdict.reason


@pytest.fixture(scope="module")
def maria(request: pytest.FixtureRequest) -> Iterator[Database]:
    server: Server = request.getfixturevalue("mariadb_server")
    db = adapter(server)
    yield db
    asyncio.run(db.aclose())


@pytest.mark.parametrize("sql", HINTED)
@pytest.mark.asyncio(loop_scope="module")
async def test_a_hint_is_refused_by_the_check_on_a_server(maria: Database, sql: str) -> None:
    with pytest.raises(StatementRefused) as info:
        await maria.query(sql, max_rows=5, timeout=5)
    assert info.value.by == "check", info.value
    assert "MAX_EXECUTION_TIME" in str(info.value)


@pytest.mark.asyncio(loop_scope="module")
async def test_comments_that_are_no_hint_still_read(maria: Database) -> None:
    result = await maria.query(
        "SELECT /* + not a hint */ 1 /**/ + /*plain*/ 1, 2 -- /*+ in a line comment\n",
        max_rows=1,
        timeout=5,
    )
    assert result.rows == ((2, 2),)
