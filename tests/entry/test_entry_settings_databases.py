"""The CLI's settings pick up databases.yaml (RHO_AGENT_DB_CONFIG or the config dir)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rho_domain.config import AgentConfig, DatabaseConfig
from rho_domain.errors import ConfigError
from rho_entry.config.settings import resolve_settings


def test_databases_yaml_in_the_config_dir_is_loaded(tmp_path: Path) -> None:
    (tmp_path / "databases.yaml").write_text(
        "databases:\n  shop:\n    type: sqlite\n    path: " + str(tmp_path / "x.db") + "\n"
    )
    settings = resolve_settings({}, {"RHO_AGENT_HOME": str(tmp_path)})
    assert settings.config.databases["shop"].engine == "sqlite"


def test_an_explicit_config_keeps_its_own_databases(tmp_path: Path) -> None:
    (tmp_path / "databases.yaml").write_text("databases: {}\n")
    own = {"main": DatabaseConfig(engine="sqlite", path="/data/main.db")}
    settings = resolve_settings(
        {}, {"RHO_AGENT_HOME": str(tmp_path)}, base=AgentConfig(databases=own)
    )
    assert dict(settings.config.databases) == own


def test_a_named_database_file_that_is_missing_is_a_config_error(tmp_path: Path) -> None:
    env = {"RHO_AGENT_HOME": str(tmp_path), "RHO_AGENT_DB_CONFIG": str(tmp_path / "no.yaml")}
    with pytest.raises(ConfigError, match=r"no\.yaml"):
        resolve_settings({}, env)
