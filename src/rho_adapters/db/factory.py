"""open_databases: build one Database adapter per configured alias.

Nothing connects here: adapters connect lazily on first use, so a wrong password surfaces as
a tool result the model sees, not as a crash at start-up. Passwords are read from the
environment variable each alias names (``password_env``) when that database first connects,
and live only in the adapter, never in the config value, traces or snapshots.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from rho_adapters.db.base import ThreadedDatabase
from rho_adapters.db.config import VARIABLE, checked, expanded
from rho_adapters.db.mysql import MysqlDatabase
from rho_adapters.db.oracle import OracleDatabase
from rho_adapters.db.postgres import PostgresDatabase
from rho_adapters.db.sqlite import SqliteDatabase
from rho_adapters.db.vertica import VerticaDatabase
from rho_domain.config import DatabaseConfig
from rho_domain.errors import ConfigError
from rho_domain.permissions import DatabaseMode
from rho_domain.ports.database import Database
from rho_domain.secrets import DEFAULT_POLICY, SecretPolicy

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
    file_policy: SecretPolicy | None = None,
) -> dict[str, Database]:
    """One adapter per alias, with the ``${VAR}`` references of its settings replaced from
    ``environ``. Raises ``ConfigError`` for an alias databases.yaml would refuse (an unknown
    engine, a key its adapter never reads: ``db.config.checked``) or a referenced variable
    that is not set. A ``password_env`` naming a variable missing from ``environ`` fails that
    alias's first connection with a ``ConfigError`` naming the variable. ``file_policy``
    judges the files opened here (SQLite's): the local executor's; when omitted, the rules
    with this machine's homes (every hidden entry of one is secret)."""
    databases: dict[str, Database] = {}
    if file_policy is None and any(c.engine == "sqlite" for c in configs.values()):
        from rho_adapters.local.homes import agent_homes

        file_policy = SecretPolicy(homes=agent_homes(environ))
    for alias, config in configs.items():
        config = checked(config, where=f"databases.{alias}")  # held to databases.yaml's rules
        cls = ADAPTERS[config.engine]
        # A dsn's ${VAR}s are how a secret is kept out of the file: no error shows their values.
        hidden = [environ.get(name, "") for name in VARIABLE.findall(config.dsn or "")]
        config = expanded(config, environ, alias=alias)  # ${VAR} references, see db.config
        password = _password_reader(alias, config.password_env, environ)
        databases[alias] = cls(
            alias,
            config,
            mode=mode,
            password=password,
            hidden=hidden,
            environ=environ,
            file_policy=file_policy or DEFAULT_POLICY,
        )
    return databases


def _password_reader(
    alias: str, variable: str | None, environ: Mapping[str, str]
) -> Callable[[], str | None]:
    """Read ``variable`` when the database first connects: one alias whose variable is unset
    fails its own calls (naming the variable), not every run."""

    def read() -> str | None:
        if variable is None:
            return None
        if variable not in environ:
            raise ConfigError(
                f"database {alias!r}: password_env names {variable!r}, which is not set in "
                "the environment; export it and start again"
            )
        return environ[variable]

    return read


def database_problems(databases: Mapping[str, Database]) -> list[str]:
    """What would make each database's first call fail, found without connecting
    (``ThreadedDatabase.problems``: a missing driver, an unset ``password_env``, a missing
    SQLite file), for a warning when a session starts rather than at the model's first query."""
    found: list[str] = []
    for database in databases.values():
        if isinstance(database, ThreadedDatabase):
            found.extend(database.problems())
    return found
