"""A database alias is held to one set of rules wherever it is written: databases.yaml, a
``--config`` file's ``databases:``, or an ``AgentConfig`` built in code. Only databases.yaml
was checked; a ``--config`` alias with ``engine: mysql`` and only a ``dsn`` ran (the adapter
connects to ``localhost`` without a word), ``engine: postgresql`` (databases.yaml's alias of
postgres) was an unknown engine, and an unknown engine or an unset ``${VAR}`` was printed
twice, as a warning and then as the error, neither naming the file."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))  # program_zygote
from program_zygote import run

from rho_adapters.db import open_databases
from rho_domain.config import AgentConfig, DatabaseConfig
from rho_domain.errors import ConfigError
from rho_domain.permissions import DatabaseMode
from rho_entry.config.config_files import load_agent_config

SRC = Path(__file__).resolve().parents[2] / "src"


def _cli(tmp_path: Path, config: Path) -> subprocess.CompletedProcess[str]:
    """The CLI's one-shot run with ``config``, forked from the CLI's zygote (``program_zygote``):
    what it prints for the file is the subject, not the interpreter's start."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return run(
        "rho",
        [sys.executable, "-m", "rho_entry", "-m", "demo", "-c", str(config), "what is here?"],
        cwd=tmp_path, text=True, timeout=60,
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path),
             "RHO_AGENT_HOME": str(home), "PYTHONPATH": str(SRC)},
    )  # fmt: skip


@pytest.mark.parametrize(
    ("alias", "words"),
    [
        (
            "{engine: mysql, dsn: 'mysql://agent@prod-db:3306/app'}",
            "databases.prod.dsn: mysql does not read dsn",
        ),
        ("{engine: mongodb, database: app}", "databases.prod.engine: 'mongodb' is not one of"),
        ("{engine: sqlite, path: app.db, host: prod-db}", "databases.prod.host: sqlite does not"),
    ],
)
def test_a_config_files_alias_is_refused_once_naming_the_file(
    tmp_path: Path, alias: str, words: str
) -> None:
    config = tmp_path / "agent.yaml"
    config.write_text(f"databases:\n  prod: {alias}\n")
    with pytest.raises(ConfigError) as refused:
        load_agent_config(config)
    assert str(refused.value).startswith(f"{config}: {words}")
    done = _cli(tmp_path, config)
    assert done.returncode == 1
    # said once, no warning before it; the CLI names the flag that gave the file
    assert done.stderr == f"rho-agent: --config {refused.value}\n"


def test_an_unset_variable_is_said_once(tmp_path: Path) -> None:
    config = tmp_path / "agent.yaml"
    config.write_text("databases:\n  prod: {engine: postgres, dsn: 'postgresql://db/${NO_VAR}'}\n")
    done = _cli(tmp_path, config)
    assert done.returncode == 1
    assert done.stderr.count("NO_VAR is not set") == 1, done.stderr
    assert "warning" not in done.stderr


def test_a_config_files_engine_alias_loads_as_databases_yaml_does(tmp_path: Path) -> None:
    config = tmp_path / "agent.yaml"
    config.write_text("databases:\n  prod: {engine: postgresql, database: app}\n")
    assert load_agent_config(config).databases["prod"].engine == "postgres"


def test_an_alias_built_in_code_is_held_to_the_same_rules() -> None:
    config = AgentConfig(
        databases={"prod": DatabaseConfig(engine="mysql", dsn="mysql://agent@prod-db/app")}
    )
    with pytest.raises(ConfigError, match=r"^databases.prod.dsn: mysql does not read dsn"):
        open_databases(config.databases, mode=DatabaseMode.READONLY, environ={})
    opened = open_databases(
        {"prod": DatabaseConfig(engine="MariaDB", host="prod-db", database="app")},
        mode=DatabaseMode.READONLY,
        environ={},
    )
    assert type(opened["prod"]).__name__ == "MysqlDatabase"
