"""open_databases: build one Database adapter per configured alias.

Nothing connects here: adapters connect lazily on first use, so a wrong password surfaces as
a tool result the model sees, not as a crash at start-up. Passwords are read from the
environment variable each alias names (``password_env``) at this point and live only in the
adapter, never in the config value, traces or snapshots.
"""

from __future__ import annotations

from collections.abc import Mapping

from rho_adapters.db.base import ThreadedDatabase
from rho_adapters.db.mysql import MysqlDatabase
from rho_adapters.db.oracle import OracleDatabase
from rho_adapters.db.postgres import PostgresDatabase
from rho_adapters.db.sqlite import SqliteDatabase
from rho_adapters.db.vertica import VerticaDatabase
from rho_domain.config import DatabaseConfig
from rho_domain.errors import ConfigError
from rho_domain.permissions import DatabaseMode
from rho_domain.ports.database import Database

ADAPTERS: Mapping[str, type[ThreadedDatabase]] = {
    "sqlite": SqliteDatabase,
    "postgres": PostgresDatabase,
    "mysql": MysqlDatabase,
    "oracle": OracleDatabase,
    "vertica": VerticaDatabase,
}


def open_databases(
    configs: Mapping[str, DatabaseConfig],
    *,
    mode: DatabaseMode,
    environ: Mapping[str, str],
) -> dict[str, Database]:
    """One adapter per alias. Raises ``ConfigError`` for an unknown engine or a
    ``password_env`` that names a variable missing from ``environ``."""
    databases: dict[str, Database] = {}
    for alias, config in configs.items():
        cls = ADAPTERS.get(config.engine.lower())
        if cls is None:
            choices = ", ".join(ADAPTERS)
            raise ConfigError(
                f"database {alias!r}: unknown engine {config.engine!r} (use one of {choices})"
            )
        password = None
        if config.password_env:
            if config.password_env not in environ:
                raise ConfigError(
                    f"database {alias!r}: password_env names {config.password_env!r}, "
                    "which is not set in the environment"
                )
            password = environ[config.password_env]
        databases[alias] = cls(alias, config, mode=mode, password=password)
    return databases
