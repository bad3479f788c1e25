"""Find and load ``databases.yaml``.

Lookup: an explicit path, else ``$RHO_AGENT_DB_CONFIG``, else ``<config dir>/databases.yaml``
when it exists (the config dir is ``$RHO_AGENT_HOME``, ``$XDG_CONFIG_HOME/rho-agent`` or
``~/.config/rho-agent``). A file named explicitly or by the variable must exist. Errors name
the file, the key path and what was expected. The values carry password *variable names*
only, so a config snapshot never holds a secret.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from rho_domain.config import DatabaseConfig
from rho_domain.errors import ConfigError
from rho_entry.home import config_dir

ENV_VAR = "RHO_AGENT_DB_CONFIG"
FILE_NAME = "databases.yaml"


def databases_config_path(
    env: Mapping[str, str], *, explicit: str | Path | None = None
) -> tuple[Path | None, bool]:
    """The file to load and whether it was asked for by name (then it must exist)."""
    if explicit:
        return Path(explicit).expanduser(), True
    if env.get(ENV_VAR):
        return Path(env[ENV_VAR]).expanduser(), True
    return config_dir(env) / FILE_NAME, False


def load_databases(
    env: Mapping[str, str], *, explicit: str | Path | None = None
) -> dict[str, DatabaseConfig]:
    """The configured aliases, or ``{}`` when no file is configured and none exists."""
    path, required = databases_config_path(env, explicit=explicit)
    if path is None or (not required and not path.exists()):
        return {}
    return load_databases_file(path)


def load_databases_file(path: Path) -> dict[str, DatabaseConfig]:
    """Parse one databases.yaml; ``ConfigError`` names the file on every failure."""
    import yaml

    from rho_adapters.db.config import parse_databases

    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: database config file not found") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the database config ({exc.strerror})") from exc
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {exc}") from exc
    return parse_databases(data, source=str(path))
