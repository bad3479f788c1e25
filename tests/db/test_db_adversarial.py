"""The adversarial suite, run against real SQLite, PostgreSQL and MariaDB servers.

Each wall is tested on its own, so that removing a rule from either makes a test fail:

- with the statement check on, every attack must be refused *by the check*
  (``StatementRefused.by == "check"``: nothing reached the server);
- with the check off, every attack the engine can stop (all but ``ENGINE_RUNS``) must be
  refused or fail inside the engine's read-only transaction.

Either way every table, the catalog and the sequence stay unchanged and no file is written.
Every allowed statement must run. The servers run as superuser/root on purpose: this is the
worst case, where only the statement check and the engine's read-only transaction stand
between the model and the data (test_db_roles.py adds the SELECT-only role).
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from db_attacks import ALLOWED, ATTACKS, ENGINE_RUNS, NOTHING_TO_RUN
from db_support import Server, adapter, checksum

from rho_domain.errors import DatabaseError, StatementRefused
from rho_domain.ports.database import Database, QueryResult

ENGINE_FIXTURE = {
    "sqlite": "sqlite_server",
    "postgres": "postgres_server",
    "mysql": "mariadb_server",
}
# The async tests share one event loop per module (`loop_scope="module"`): a loop per test,
# with the new thread its executor starts for the adapter's check and query, cost about 1 ms
# of CPU per case. No test leaves a task running on the loop when it returns.


def _cases(table: dict[str, list[str]]) -> list[object]:
    return [
        pytest.param(engine, sql, id=f"{engine}-{i:03d}")
        for engine, statements in table.items()
        for i, sql in enumerate(statements)
    ]


@pytest.fixture
def attack_dir() -> Iterator[Path]:
    """A world-writable directory, so a file-writing attack would really succeed."""
    path = Path(tempfile.mkdtemp(prefix="rho-attack-"))
    path.chmod(0o777)
    yield path
    leftovers = sorted(p.name for p in path.iterdir())
    for item in path.iterdir():
        item.unlink()
    path.rmdir()
    assert not leftovers, f"an attack wrote files: {leftovers}"


def test_corpus_holds_no_duplicates_and_no_query_is_both_attack_and_allowed() -> None:
    for engine in ("sqlite", "postgres", "mysql"):
        assert len(set(ATTACKS[engine])) == len(ATTACKS[engine])
        assert not set(ATTACKS[engine]) & set(ALLOWED[engine])


@pytest.fixture(scope="module")
def checked_adapters() -> Iterator[dict[str, Database]]:
    """One adapter per server engine for ``test_attack_is_stopped``: an attack the statement
    check refuses never reaches the server and must leave the adapter usable (each test
    proves that after its refusal), and a new connection per attack (a PostgreSQL backend
    started, a MariaDB handshake) cost more than the check and the query. SQLite's are per
    test (its file is the test's); the engine-alone attacks, which reach the engine, keep
    an adapter each."""
    made: dict[str, Database] = {}
    yield made
    for db in made.values():
        asyncio.run(db.aclose())


@pytest.mark.parametrize(("engine", "sql"), _cases(ATTACKS))
@pytest.mark.asyncio(loop_scope="module")
async def test_attack_is_stopped(
    engine: str,
    sql: str,
    attack_dir: Path,
    request: pytest.FixtureRequest,
    checked_adapters: dict[str, Database],
) -> None:
    server: Server = request.getfixturevalue(ENGINE_FIXTURE[engine])
    before = checksum(server)
    shared = engine != "sqlite"
    if shared and engine not in checked_adapters:
        checked_adapters[engine] = adapter(server)
    db = checked_adapters[engine] if shared else adapter(server)
    try:
        with pytest.raises(StatementRefused) as info:
            await db.query(sql.format(dir=attack_dir), max_rows=10, timeout=5)
        assert info.value.by == "check", f"not refused by the statement check: {info.value}"
        # The adapter still works after the refusal (no half-open transaction left behind).
        ok = await db.query("SELECT count(*) FROM users", max_rows=1, timeout=5)
        assert ok.rows == ((20,),)
    finally:
        if not shared:
            await db.aclose()
    assert checksum(server) == before


@pytest.fixture(scope="module")
def read_adapters() -> Iterator[dict[str, Database]]:
    """One adapter per server engine for ``test_read_statement_runs``, as a session queries
    through one: a new connection per read cost the server more than the read (a PostgreSQL
    backend started, about 25 ms of its CPU, 89 times). A read that broke the connection
    or left it in a transaction would fail the reads after it. SQLite's are per test."""
    made: dict[str, Database] = {}
    yield made
    for db in made.values():
        asyncio.run(db.aclose())


@pytest.mark.parametrize(("engine", "sql"), _cases(ALLOWED))
@pytest.mark.asyncio(loop_scope="module")
async def test_read_statement_runs(
    engine: str, sql: str, request: pytest.FixtureRequest, read_adapters: dict[str, Database]
) -> None:
    server: Server = request.getfixturevalue(ENGINE_FIXTURE[engine])
    shared = engine != "sqlite"
    if shared and engine not in read_adapters:
        read_adapters[engine] = adapter(server)
    db = read_adapters[engine] if shared else adapter(server)
    try:
        result = await db.query(sql, max_rows=10, timeout=5)
    finally:
        if not shared:
            await db.aclose()
    assert isinstance(result, QueryResult)
    assert result.columns


def _engine_cases() -> list[object]:
    return [
        pytest.param(engine, sql, id=f"{engine}-{i:03d}")
        for engine, statements in ATTACKS.items()
        for i, sql in enumerate(statements)
        if sql not in NOTHING_TO_RUN and sql not in ENGINE_RUNS[engine]
    ]


@pytest.mark.parametrize(("engine", "sql"), _engine_cases())
@pytest.mark.asyncio(loop_scope="module")
async def test_engine_alone_stops_the_attack(
    engine: str, sql: str, attack_dir: Path, request: pytest.FixtureRequest
) -> None:
    """Layer 2 on its own (statement check off): SQLite mode=ro plus the authorizer,
    PostgreSQL's read-only transaction, MariaDB's read-only session and transaction."""
    server: Server = request.getfixturevalue(ENGINE_FIXTURE[engine])
    before = checksum(server)
    db = adapter(server, check=False)
    try:
        with pytest.raises((StatementRefused, DatabaseError)) as info:
            await db.query(sql.format(dir=attack_dir), max_rows=10, timeout=5)
        assert getattr(info.value, "by", "engine") == "engine"
        ok = await db.query("SELECT count(*) FROM users", max_rows=1, timeout=5)
        assert ok.rows == ((20,),)
    finally:
        await db.aclose()
    assert checksum(server) == before
    if engine == "sqlite":
        assert os.listdir(server.workdir) == ["app.db"]


def test_engine_runs_lists_only_corpus_attacks() -> None:
    for engine, statements in ENGINE_RUNS.items():
        assert statements <= set(ATTACKS[engine]) | {
            "SELECT dblink_exec('dbname=rho', 'DELETE FROM users')",
            "SELECT pg_terminate_backend(pg_backend_pid())",
        }
