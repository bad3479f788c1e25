"""Databases named by environment variables, the way the public implementation's prompts and
the design documents describe them ("registers database tools if environment variables are
set"): one alias per engine, named after it.

=========  =====================  =========================================================
alias      set by                 also read
=========  =====================  =========================================================
sqlite     ``SQLITE_DB`` (path)
postgres   ``POSTGRES_HOST``      ``POSTGRES_PORT``, ``POSTGRES_DATABASE`` (or ``_DB``),
                                  ``POSTGRES_USER``, ``POSTGRES_PASSWORD``
mysql      ``MYSQL_HOST``         the same suffixes
vertica    ``VERTICA_HOST``       the same suffixes
oracle     ``ORACLE_DSN``         ``ORACLE_USER``, ``ORACLE_PASSWORD``
=========  =====================  =========================================================

The password stays in its variable: the alias records the variable's *name*
(``password_env``), so no config snapshot or trace holds it. An alias of the same name in
``databases.yaml`` wins over the variables. A variable that cannot be used (a port that is not
a number, a server without a database name) is a ``ConfigError`` naming it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from rho_domain.errors import ConfigError

if TYPE_CHECKING:  # built with the first engine variable found
    from rho_domain.database_config import DatabaseConfig

_SERVERS = ("postgres", "mysql", "vertica")


def databases_from_env(env: Mapping[str, str]) -> dict[str, DatabaseConfig]:
    """The aliases the environment names (see the module docstring), sorted by engine."""
    found: dict[str, DatabaseConfig] = {}
    if env.get("ORACLE_DSN"):
        from rho_domain.database_config import DatabaseConfig

        found["oracle"] = DatabaseConfig(
            engine="oracle",
            dsn=env["ORACLE_DSN"],
            user=env.get("ORACLE_USER") or None,
            password_env=_password("ORACLE", env),
        )
    for engine in _SERVERS:
        prefix = engine.upper()
        if env.get(f"{prefix}_HOST"):
            found[engine] = _server(engine, prefix, env)
    if env.get("SQLITE_DB"):
        from rho_domain.database_config import DatabaseConfig

        found["sqlite"] = DatabaseConfig(engine="sqlite", path=env["SQLITE_DB"])
    return dict(sorted(found.items()))


def _server(engine: str, prefix: str, env: Mapping[str, str]) -> DatabaseConfig:
    database = env.get(f"{prefix}_DATABASE") or env.get(f"{prefix}_DB")
    if not database:
        raise ConfigError(
            f"{prefix}_HOST is set, but {engine} needs a database name: export "
            f"{prefix}_DATABASE (or {prefix}_DB), or unset {prefix}_HOST"
        )
    port = env.get(f"{prefix}_PORT") or None
    if port is not None and not port.isdigit():
        raise ConfigError(f"{prefix}_PORT must be a port number, not {port!r}")
    from rho_domain.database_config import DatabaseConfig

    return DatabaseConfig(
        engine=engine,
        host=env[f"{prefix}_HOST"],
        port=int(port) if port is not None else None,
        user=env.get(f"{prefix}_USER") or None,
        database=database,
        password_env=_password(prefix, env),
    )


def _password(prefix: str, env: Mapping[str, str]) -> str | None:
    name = f"{prefix}_PASSWORD"
    return name if env.get(name) else None
