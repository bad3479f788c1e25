"""Database problems found when a session starts, not at the model's first query (issue 30):
a missing driver, an unset ``password_env``, a missing SQLite file; and the SQLite error at
query time names the file it could not open."""

from __future__ import annotations

import gc
import os
import sqlite3
import subprocess
import sys
import uuid
import warnings
from pathlib import Path
from typing import Any

import pytest
from db_support import Server

from rho_adapters.db import open_databases
from rho_adapters.db.factory import database_problems
from rho_adapters.db.postgres import PostgresDatabase
from rho_adapters.db.sqlite import SqliteDatabase
from rho_adapters.extras import install_command
from rho_domain.config import AgentConfig, DatabaseConfig
from rho_domain.errors import DatabaseError, RhoError
from rho_domain.permissions import DatabaseMode
from rho_entry.wiring import database_warnings

SRC = Path(__file__).resolve().parents[2] / "src"


def _configs(tmp_path: Path) -> dict[str, DatabaseConfig]:
    good = tmp_path / "good.db"
    sqlite3.connect(good).close()
    return {
        "good": DatabaseConfig(engine="sqlite", path=str(good)),
        "shop": DatabaseConfig(engine="sqlite", path=str(tmp_path / "missing" / "shop.db")),
        "prod": DatabaseConfig(
            engine="postgres", host="localhost", database="app", password_env="PROD_DB_PW"
        ),
        "set": DatabaseConfig(
            engine="postgres", host="localhost", database="app", password_env="SET_PW"
        ),
    }


def test_problems_are_found_without_connecting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    databases = open_databases(
        _configs(tmp_path), mode=DatabaseMode.READONLY, environ={"SET_PW": "x"}
    )
    assert database_problems(databases) == [
        f"database 'shop': no SQLite file at {tmp_path / 'missing' / 'shop.db'}",
        "database 'prod': password_env names 'PROD_DB_PW', which is not set in the "
        "environment; export it and start again",
    ]
    monkeypatch.setitem(sys.modules, "psycopg", None)  # makes `import psycopg` fail
    again = open_databases(_configs(tmp_path), mode=DatabaseMode.READONLY, environ={})
    problems = database_problems(again)
    assert sum(install_command("postgres") in p for p in problems) == 2  # prod, set
    assert database_warnings(AgentConfig(), {}) == []


async def test_a_missing_sqlite_file_is_named_when_queried(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / "shop.db"
    db = SqliteDatabase("shop", DatabaseConfig(engine="sqlite", path=str(missing)))
    with pytest.raises(DatabaseError) as info:
        await db.query("SELECT 1", max_rows=1, timeout=5)
    assert f"unable to open database file: {missing}" in str(info.value)
    assert not missing.exists()  # read-only: never created


async def test_a_home_relative_path_is_the_file_problems_judged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``~/app.db`` passed ``problems`` (which expanded it) and then failed to open ("unable
    to open database file: <cwd>/~/app.db"), or opened a ``~`` directory's file the user never
    named; a ``file:`` URI passed ``problems`` unlooked at and was opened as a relative path."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    with sqlite3.connect(tmp_path / "app.db") as conn:
        conn.execute("CREATE TABLE t (x)")
    db = SqliteDatabase("local", DatabaseConfig(engine="sqlite", path="~/app.db"))
    assert db.problems() == []
    try:
        assert (await db.query("SELECT count(*) FROM t", max_rows=1, timeout=5)).rows == ((0,),)
    finally:
        await db.aclose()
    uri = SqliteDatabase("uri", DatabaseConfig(engine="sqlite", path=f"file:{tmp_path}/app.db"))
    assert any("a URI; give the file's path" in p for p in uri.problems()), uri.problems()
    with pytest.raises(RhoError, match="a URI; give the file's path"):
        await uri.query("SELECT 1", max_rows=1, timeout=5)


def test_the_cli_warns_before_the_run(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "databases.yaml").write_text(
        f"databases:\n  shop: {{engine: sqlite, path: {tmp_path / 'no.db'}}}\n"
        "  prod: {engine: postgres, host: localhost, database: app, password_env: PW}\n"
    )
    shadow = tmp_path / "shadow" / "psycopg"  # psycopg "not installed" in that process
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('No module named psycopg')\n")
    done = subprocess.run(
        [sys.executable, "-m", "rho_entry", "-m", "demo", "what is here?"],
        cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False,
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path),
             "RHO_AGENT_HOME": str(home), "PYTHONPATH": f"{shadow.parent}:{SRC}"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert lines[:3] == [
        f"rho-agent: warning: database 'shop': no SQLite file at {tmp_path / 'no.db'}",
        "rho-agent: warning: database 'prod': psycopg is not installed for PostgreSQL "
        f"databases: install it with `{install_command('postgres')}`",
        "rho-agent: warning: database 'prod': password_env names 'PW', which is not set in "
        "the environment; export it and start again",
    ]
    assert lines[3].startswith("rho-agent · demo")  # the warnings come before the run


async def test_a_postgresql_connection_whose_preparation_fails_is_closed(
    postgres_server: Server,
) -> None:
    """A new connection is asked what the adapter needs (its catalog's functions, its
    search path, a right); one whose questions fail (here: a database that hides
    ``pg_proc`` from the role) was dropped open, and psycopg said so when it was collected."""
    import psycopg

    c = postgres_server.config
    name = f"prep_{uuid.uuid4().hex[:8]}"
    admin: dict[str, Any] = {"host": c.host, "port": c.port, "user": c.user, "autocommit": True}
    with psycopg.connect(dbname="postgres", **admin) as conn:
        conn.execute(f"CREATE ROLE {name} LOGIN")
        conn.execute(f"CREATE DATABASE {name}")
    try:
        with psycopg.connect(dbname=name, **admin) as conn:
            conn.execute("REVOKE SELECT ON pg_catalog.pg_proc FROM PUBLIC")
        config = DatabaseConfig(
            engine="postgres", host=c.host, port=c.port, user=name, database=name
        )
        db = PostgresDatabase(name, config)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            with pytest.raises(RhoError, match="pg_proc"):
                await db.query("SELECT 1", max_rows=1, timeout=5)
            await db.aclose()  # it held the failed call, and with it the connection
            gc.collect()
        assert [str(w.message) for w in seen if issubclass(w.category, ResourceWarning)] == []
    finally:
        with psycopg.connect(dbname="postgres", **admin) as conn:
            conn.execute(f"DROP DATABASE {name} WITH (FORCE)")
            conn.execute(f"DROP ROLE {name}")
