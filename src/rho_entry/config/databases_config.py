"""Find and load ``databases.yaml``.

Lookup: an explicit path, else ``$RHO_AGENT_DB_CONFIG``, else ``<config dir>/databases.yaml``
when it exists (the config dir is ``$RHO_AGENT_HOME``, ``$XDG_CONFIG_HOME/rho-agent`` or
``~/.config/rho-agent``). A file named explicitly or by the variable must exist. Errors name
the file, the key path and what was expected. The values carry password *variable names*
only, so a config snapshot never holds a secret.

``${VAR}`` in a string value is the variable's value (``host: ${PGHOST}``), read when the
database is opened; a variable that is not set is a ``ConfigError`` naming the file, the key
and the variable, when the file is loaded.
The engines' own variables (``SQLITE_DB``, ``POSTGRES_HOST``..., ``rho_entry.config.databases_env``)
add one alias per engine; the file's aliases win over them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import attrs

from rho_domain.config import AgentConfig
from rho_domain.errors import ConfigError
from rho_entry.config.databases_env import databases_from_env
from rho_entry.config.home import config_dir, expanded
from rho_entry.config.yaml_text import load_yaml, read_config_text

if TYPE_CHECKING:  # built with the first database configured
    from rho_domain.database_config import DatabaseConfig

ENV_VAR = "RHO_AGENT_DB_CONFIG"
FILE_NAME = "databases.yaml"

C = TypeVar("C", bound=AgentConfig)


def databases_config_path(
    env: Mapping[str, str], *, explicit: str | Path | None = None
) -> tuple[Path | None, bool]:
    """The file to load and whether it was asked for by name (then it must exist)."""
    if explicit:
        return expanded(explicit), True
    if env.get(ENV_VAR):
        return expanded(env[ENV_VAR], by=ENV_VAR), True
    return config_dir(env) / FILE_NAME, False


def with_configured_databases(config: C, env: Mapping[str, str]) -> C:
    """``config`` with the databases ``env`` configures (``load_databases``) when it names
    none; unchanged when it names some (they win over every file and variable).

    The one rule for "registers database tools if environment variables are set": the CLI's
    settings and the library's ``Agent(config)`` both call it."""
    if config.databases:
        return config
    found = load_databases(env)
    return attrs.evolve(config, databases=found) if found else config


def load_databases(
    env: Mapping[str, str], *, explicit: str | Path | None = None
) -> dict[str, DatabaseConfig]:
    """The configured aliases: the engines' variables, then the file's (``{}`` when neither
    names one)."""
    from_env = databases_from_env(env)
    path, required = databases_config_path(env, explicit=explicit)
    if path is None or (not required and not path.exists()):
        return from_env
    try:
        return {**from_env, **load_databases_file(path, env)}
    except ConfigError as exc:
        if explicit or not env.get(ENV_VAR):
            raise
        # the file named the variable's value only: 'x.yaml: database config file not
        # found' from a shell profile's export, the variable that set it unsaid
        raise ConfigError(f"{ENV_VAR}: {exc}") from None


def check_variables(data: Any, env: Mapping[str, str], *, source: str, at: str = "") -> Any:
    """``data`` with each ``${VAR}`` checked against ``env``: a variable that is not set is a
    ``ConfigError`` naming ``source``, the key path and the variable. References are kept
    (``open_databases`` replaces them, so a config snapshot never holds their values), except
    in a ``port``, which must be a number: ``port: ${PGPORT}`` becomes the number."""
    from rho_adapters.db.config import expand_text

    if isinstance(data, Mapping):
        return {
            k: check_variables(v, env, source=source, at=f"{at}.{k}" if at else str(k))
            for k, v in data.items()
        }
    if not isinstance(data, str) or "${" not in data:
        return data
    text = expand_text(data, env, where=f"{source}: {at}")
    if at.endswith(".port") and text.strip().isdigit():
        return int(text)
    return data


def load_databases_file(
    path: Path, env: Mapping[str, str] | None = None
) -> dict[str, DatabaseConfig]:
    """Parse one databases.yaml, checking its ``${VAR}`` references against ``env`` (the
    process environment when None); ``ConfigError`` names the file on every failure."""
    import yaml

    from rho_adapters.db.config import parse_databases

    if not path.exists():
        raise ConfigError(f"{path}: database config file not found")
    text = read_config_text(path, where=str(path), what="the database config")
    try:
        data = load_yaml(text)
    except yaml.YAMLError as exc:
        from rho_adapters.yaml_aliases import yaml_problem

        raise ConfigError(f"{path}: not valid YAML: {yaml_problem(exc, text)}") from exc
    environ = os.environ if env is None else env
    return parse_databases(check_variables(data, environ, source=str(path)), source=str(path))
