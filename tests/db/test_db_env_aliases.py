"""Databases named by the environment: ``${VAR}`` in databases.yaml (checked when loaded,
replaced when opened, never stored) and the engines' own variables (``SQLITE_DB``,
``POSTGRES_HOST``...), down to a real SQLite query through the documents' ToolFactory."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from rho_adapters.db import open_databases
from rho_adapters.db.base import ThreadedDatabase
from rho_domain.config import DatabaseConfig
from rho_domain.errors import ConfigError
from rho_domain.permissions import DatabaseMode, readonly_profile
from rho_entry.config.databases_config import load_databases
from rho_entry.config.databases_env import databases_from_env
from rho_entry.seed_api.handlers import ToolFactory
from rho_entry.seed_api.tools import ToolInvocation


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_variables_are_checked_when_loaded_and_replaced_when_opened(tmp_path: Path) -> None:
    file = write(
        tmp_path / "dbs.yaml",
        "databases:\n  prod:\n    engine: postgres\n    host: ${PGHOST}\n    port: ${PGPORT}\n"
        "    database: app\n    dsn: postgresql://agent:${PGPASSWORD}@${PGHOST}/app\n",
    )
    env = {"RHO_AGENT_DB_CONFIG": str(file), "PGHOST": "db.internal", "PGPORT": "6432"}
    env["PGPASSWORD"] = "s3cret"
    config = load_databases(env)["prod"]
    # the stored value keeps the references: a config snapshot never holds the password
    assert (config.host, config.port) == ("${PGHOST}", 6432)
    assert "s3cret" not in repr(config)
    database = open_databases({"prod": config}, mode=DatabaseMode.READONLY, environ=env)["prod"]
    assert isinstance(database, ThreadedDatabase)
    assert database.config.host == "db.internal"
    assert database.config.dsn == "postgresql://agent:s3cret@db.internal/app"


@pytest.mark.parametrize("key", ["host", "user", "dsn"])
def test_an_unset_variable_names_the_file_the_key_and_the_variable(
    tmp_path: Path, key: str
) -> None:
    file = write(
        tmp_path / "dbs.yaml",
        f"databases:\n  prod:\n    engine: postgres\n    database: app\n    {key}: x${{NOPE_1}}\n",
    )
    with pytest.raises(ConfigError) as info:
        load_databases({"RHO_AGENT_DB_CONFIG": str(file)})
    message = str(info.value)
    # the file came from the variable: named first, so a shell profile's export is found too
    assert message.startswith(f"RHO_AGENT_DB_CONFIG: {file}: databases.prod.{key}: ")
    assert "NOPE_1 is not set" in message


def test_a_variable_unset_at_open_time_is_refused_by_name() -> None:
    config = DatabaseConfig(engine="postgres", host="${GONE}", database="app")
    with pytest.raises(ConfigError, match="database 'prod': host: the environment variable GONE"):
        open_databases({"prod": config}, mode=DatabaseMode.READONLY, environ={})


def test_the_engines_variables_name_one_alias_each() -> None:
    env = {
        "SQLITE_DB": "/data/app.db",
        "POSTGRES_HOST": "pg",
        "POSTGRES_PORT": "5433",
        "POSTGRES_DB": "app",
        "POSTGRES_USER": "ro",
        "POSTGRES_PASSWORD": "s3cret",
        "MYSQL_HOST": "my",
        "MYSQL_DATABASE": "shop",
        "ORACLE_DSN": "ora:1521/XE",
        "ORACLE_USER": "scott",
        "VERTICA_HOST": "vt",
        "VERTICA_DATABASE": "dw",
    }
    found = databases_from_env(env)
    assert list(found) == ["mysql", "oracle", "postgres", "sqlite", "vertica"]
    postgres = found["postgres"]
    assert (postgres.host, postgres.port, postgres.database, postgres.user) == (
        "pg",
        5433,
        "app",
        "ro",
    )
    assert postgres.password_env == "POSTGRES_PASSWORD"  # the name, never the value
    assert "s3cret" not in repr(found)
    assert found["mysql"].password_env is None  # MYSQL_PASSWORD is not set
    assert (found["oracle"].dsn, found["oracle"].user) == ("ora:1521/XE", "scott")
    assert found["sqlite"].path == "/data/app.db"
    assert databases_from_env({}) == {}


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"POSTGRES_HOST": "pg"}, "export POSTGRES_DATABASE"),
        ({"MYSQL_HOST": "my", "MYSQL_DB": "x", "MYSQL_PORT": "33o6"}, "MYSQL_PORT must be"),
    ],
)
def test_unusable_engine_variables_are_named(env: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        databases_from_env(env)


def test_the_file_wins_over_the_engines_variables(tmp_path: Path) -> None:
    file = write(tmp_path / "dbs.yaml", "databases:\n  sqlite:\n    engine: sqlite\n    path: a\n")
    env = {"RHO_AGENT_DB_CONFIG": str(file), "SQLITE_DB": "b", "MYSQL_HOST": "m", "MYSQL_DB": "d"}
    found = load_databases(env)
    assert found["sqlite"].path == "a"
    assert set(found) == {"sqlite", "mysql"}


async def test_sqlite_db_registers_a_readonly_sqlite_tool(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "app.db"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE orders (id INTEGER, total REAL)")
        connection.execute("INSERT INTO orders VALUES (1, 9.5), (2, 20.0)")
    connection.close()
    monkeypatch.setenv("RHO_AGENT_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("RHO_AGENT_DB_CONFIG", raising=False)
    monkeypatch.setenv("SQLITE_DB", str(path))
    registry = ToolFactory(readonly_profile()).create_registry(working_dir=str(tmp_path))
    assert "sqlite" in registry
    try:
        read = await registry.dispatch(
            ToolInvocation(
                "q1", "sqlite", {"operation": "query", "sql": "SELECT SUM(total) FROM orders"}
            )
        )
        delete = await registry.dispatch(
            ToolInvocation("q2", "sqlite", {"operation": "query", "sql": "DELETE FROM orders"})
        )
    finally:
        await registry.aclose()
    assert read.success
    assert "29.5" in read.content
    assert not delete.success
    with sqlite3.connect(path) as connection:
        assert connection.execute("SELECT COUNT(*) FROM orders").fetchone() == (2,)
    connection.close()
