"""Identifier spellings per dialect (issue 10, items 11 and 12): every spelling of a
side-effect function is refused by the statement check, and the same spellings of an
allowlisted function run. PostgreSQL, MariaDB and SQLite cases go through the adapter to the
real engines; Oracle and Vertica through their adapters over the fake DB-API driver."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Mapping

import pytest
from db_spellings import ALLOWED, REFUSED
from db_support import Server, adapter, checksum
from test_db_fake_dbapi import ORACLE, VERTICA, FakeDriver

from rho_adapters.db.oracle import OracleDatabase
from rho_adapters.db.vertica import VerticaDatabase
from rho_domain.errors import StatementRefused
from rho_domain.ports.database import Database
from rho_domain.sql import classify

REAL = {"postgres": "postgres_server", "mysql": "mariadb_server", "sqlite": "sqlite_server"}
FAKE = {"oracle": (OracleDatabase, ORACLE), "vertica": (VerticaDatabase, VERTICA)}
# The server's sql_mode here: the default (backslash escapes, "..." is a string).
SERVER_SETTINGS = {"mysql": frozenset[str]()}
# The async tests share one event loop per module (`loop_scope="module"`): a loop per test,
# with the new thread its executor starts for the adapter's check and query, cost about 1 ms
# of CPU per case. No test leaves a task running on the loop when it returns.


def _params(engines: Mapping[str, object]) -> list[object]:
    return [
        pytest.param(engine, sql, id=f"{engine}-{case}")
        for engine in engines
        for case, sql in REFUSED[engine]
    ]


def test_corpus_counts() -> None:
    counts = {engine: len(cases) for engine, cases in REFUSED.items()}
    assert counts["postgres"] >= 900
    assert counts["mysql"] >= 350
    assert counts["sqlite"] >= 150
    assert counts["oracle"] >= 50
    assert counts["vertica"] >= 100
    for cases in REFUSED.values():
        assert len({sql for _, sql in cases}) == len(cases)


@pytest.fixture(scope="module")
def server_adapters() -> Iterator[dict[str, Database]]:
    """One adapter per server engine for the module's refusals: a spelling the check refuses
    never reaches the server and must leave the adapter usable (the test proves that as it
    goes), and a new connection for each of PostgreSQL's 900 spellings cost more than all
    the checks. SQLite's are per test (its file is the test's)."""
    made: dict[str, Database] = {}
    yield made
    for db in made.values():
        asyncio.run(db.aclose())


@pytest.mark.parametrize(("engine", "sql"), _params(REAL))
@pytest.mark.asyncio(loop_scope="module")
async def test_spelling_is_refused_by_the_check_on_the_real_engine(
    engine: str, sql: str, request: pytest.FixtureRequest, server_adapters: dict[str, Database]
) -> None:
    server: Server = request.getfixturevalue(REAL[engine])
    shared = engine != "sqlite"
    if shared and engine not in server_adapters:
        server_adapters[engine] = adapter(server)
    db = server_adapters[engine] if shared else adapter(server)
    try:
        with pytest.raises(StatementRefused) as info:
            await db.query(sql, max_rows=5, timeout=5)
        assert info.value.by == "check", str(info.value)
        if shared:  # still usable after the refusal
            ok = await db.query("SELECT count(*) FROM users", max_rows=1, timeout=5)
            assert ok.rows == ((20,),)
    finally:
        if not shared:
            await db.aclose()


@pytest.mark.parametrize(("engine", "sql"), _params(FAKE))
@pytest.mark.asyncio(loop_scope="module")
async def test_spelling_is_refused_before_reaching_oracle_or_vertica(engine: str, sql: str) -> None:
    cls, config = FAKE[engine]
    driver = FakeDriver()
    db = cls("x", config, driver=driver)
    with pytest.raises(StatementRefused) as info:
        await db.query(sql, max_rows=5, timeout=1)
    assert info.value.by == "check"
    assert driver.log == []


@pytest.mark.parametrize(
    ("engine", "sql"), [(e, s) for e in REAL for s in ALLOWED[e]], ids=lambda v: str(v)[:60]
)
@pytest.mark.asyncio(loop_scope="module")
async def test_the_same_spellings_of_an_allowed_function_run(
    engine: str, sql: str, request: pytest.FixtureRequest
) -> None:
    server: Server = request.getfixturevalue(REAL[engine])
    before = checksum(server)
    db = adapter(server)
    try:
        result = await db.query(sql, max_rows=5, timeout=5)
    finally:
        await db.aclose()
    assert result.columns
    assert checksum(server) == before


@pytest.mark.parametrize(("engine", "sql"), [(e, s) for e in FAKE for s in ALLOWED[e]])
def test_the_same_spellings_pass_the_check_for_oracle_and_vertica(engine: str, sql: str) -> None:
    assert classify(sql, engine, settings=SERVER_SETTINGS.get(engine)).read_only
