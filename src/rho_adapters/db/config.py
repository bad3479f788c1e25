"""Turn an already-loaded ``databases.yaml`` mapping into ``DatabaseConfig`` values.

Format::

    databases:
      prod:
        engine: postgres          # sqlite | postgres | mysql | oracle | vertica ("type" too)
        host: db.internal
        port: 5432
        user: agent_ro
        database: app
        password_env: PROD_DB_PASSWORD   # the *name* of an environment variable
        options: {connect_timeout: 5}
      local:
        engine: sqlite
        path: ./app.db

A literal ``password`` is refused: secrets live in the environment, never in config files,
traces or session snapshots. Every error names the source, the key path and what was
expected.

``${VAR}`` in a string value names an environment variable. The value keeps the reference
(so a session's config snapshot never holds what the variable holds, a password in a ``dsn``
included); ``open_databases`` replaces it when it builds the adapter (``expanded``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from rho_domain.config import DatabaseConfig
from rho_domain.errors import ConfigError

ENGINES = ("sqlite", "postgres", "mysql", "oracle", "vertica")
_ENGINE_ALIASES = {"postgresql": "postgres", "mariadb": "mysql", "sqlite3": "sqlite"}
_STRING_KEYS = ("dsn", "path", "host", "user", "database", "password_env")


def parse_databases(data: Any, *, source: str) -> dict[str, DatabaseConfig]:
    """Validate ``data`` (the whole file: a mapping with a ``databases`` key, or None)."""
    if data is None:
        return {}
    if not isinstance(data, Mapping):
        raise ConfigError(f"{source}: expected a mapping with a `databases` key")
    extra = sorted((str(key) for key in data if key != "databases"), key=str)
    if extra:
        raise ConfigError(
            f"{source}: unknown top-level key {extra[0]!r} (expected `databases`"
            f"{_meant(extra[0], ('databases',), ')')}"
        )
    entries = data.get("databases") or {}
    if not isinstance(entries, Mapping):
        raise ConfigError(f"{source}: `databases` must be a mapping of alias to settings")
    return {
        str(alias): parse_entry(entry, source=source, alias=str(alias))
        for alias, entry in entries.items()
    }


def _meant(given: str, known: Sequence[str], close: str) -> str:
    """``close`` preceded by ``; did you mean 'x'?`` when ``given`` is near one of ``known``
    (a misspelt ``engnie:``, ``pasword:``, ``postgress``): the list alone left the reader to
    find the slip."""
    import difflib

    near = difflib.get_close_matches(given.lower(), known, n=1, cutoff=0.6)
    return f"; did you mean {near[0]!r}?{close}" if near else close


def parse_entry(entry: Any, *, source: str, alias: str) -> DatabaseConfig:
    """One alias's settings."""
    where = f"{source}: databases.{alias}"
    if not isinstance(entry, Mapping):
        raise ConfigError(f"{where}: expected a mapping of settings")
    known = {"engine", "type", "port", "options", "password", *_STRING_KEYS}
    for key in entry:
        if key not in known:
            allowed = sorted(known - {"password", "type"})
            raise ConfigError(
                f"{where}.{key}: unknown key (expected one of {', '.join(allowed)}"
                f"{_meant(str(key), allowed, ')')}"
            )
    if "password" in entry:
        raise ConfigError(
            f"{where}.password: passwords are not stored in config; put the password in an "
            "environment variable and name it with `password_env`"
        )
    raw_engine = entry.get("engine", entry.get("type"))
    if not isinstance(raw_engine, str):
        raise ConfigError(f"{where}.engine: expected one of {', '.join(ENGINES)}")
    engine = _ENGINE_ALIASES.get(raw_engine.lower(), raw_engine.lower())
    if engine not in ENGINES:
        named = (*ENGINES, *_ENGINE_ALIASES)
        raise ConfigError(
            f"{where}.engine: {raw_engine!r} is not one of {', '.join(ENGINES)}"
            f"{_meant(raw_engine.lower(), named, '')}"
        )
    values: dict[str, Any] = {}
    for key in _STRING_KEYS:
        value = entry.get(key)
        if value is not None and not isinstance(value, str):
            raise ConfigError(f"{where}.{key}: expected a string, got {type(value).__name__}")
        values[key] = value
    port = entry.get("port")
    if port is not None and (isinstance(port, bool) or not isinstance(port, int)):
        raise ConfigError(f"{where}.port: expected an integer, got {type(port).__name__}")
    options = entry.get("options") or {}
    if not isinstance(options, Mapping):
        raise ConfigError(f"{where}.options: expected a mapping")
    from rho_domain.sql.classify import allowed_functions  # the SQL checks: with a database

    try:  # checked with the file, not when the adapter opens the database
        allowed_functions(options, alias=alias)
    except ConfigError as exc:
        raise ConfigError(f"{source}: {exc}") from None
    _require(engine, {**values, "port": port}, where)
    return DatabaseConfig(engine=engine, port=port, options=dict(options), **values)


def checked(config: DatabaseConfig, *, where: str) -> DatabaseConfig:
    """``config`` held to databases.yaml's rules, whatever wrote it (a ``--config`` file's
    ``databases:``, an ``AgentConfig`` built in code, a stored session): a known engine (its
    aliases, ``postgresql`` or ``mariadb``, given the engine's name), only the keys that
    engine's adapter reads, the ones it needs. ``where`` names the alias (``FILE:
    databases.ALIAS``); a ``ConfigError`` names ``where``, the key and what was expected."""
    engine = _ENGINE_ALIASES.get(config.engine.lower(), config.engine.lower())
    if engine not in ENGINES:
        raise ConfigError(f"{where}.engine: {config.engine!r} is not one of {', '.join(ENGINES)}")
    values = {key: getattr(config, key) for key in (*_STRING_KEYS, "port")}
    _require(engine, values, where)
    return config if engine == config.engine else attrs.evolve(config, engine=engine)


_READS = {
    "sqlite": ("path", "dsn"),
    "postgres": ("dsn", "host", "user", "database", "password_env", "port"),
    "mysql": ("host", "user", "database", "password_env", "port"),
    "vertica": ("host", "user", "database", "password_env", "port"),
    "oracle": ("dsn", "host", "user", "database", "password_env", "port"),
}
"""The keys each engine's adapter connects with: any other is refused, since a value the
adapter never reads would be silently replaced by its default (a MySQL ``dsn`` naming the
production host connected to ``localhost``)."""


def _require(engine: str, values: Mapping[str, Any], where: str) -> None:
    reads = _READS[engine]
    port = values["port"]
    if port is not None and not 1 <= port <= 65535:
        # said now: the driver said it at the first query, to the model, as a DatabaseError
        raise ConfigError(f"{where}.port: {port} is not a port (a number from 1 to 65535)")
    for key, value in values.items():
        if value is not None and key not in reads:
            hint = " (give host, port, user and database instead)" if key == "dsn" else ""
            raise ConfigError(
                f"{where}.{key}: {engine} does not read {key}{hint}; it reads {', '.join(reads)}"
            )
    if engine == "oracle" and values["dsn"] and (values["host"] or values["database"]):
        raise ConfigError(
            f"{where}.dsn: oracle connects with the dsn or with host/port/database, not both "
            "(the dsn would win and the others be ignored)"
        )
    if engine == "sqlite" and not (values["path"] or values["dsn"]):
        raise ConfigError(f"{where}.path: sqlite needs the path of the database file")
    if engine == "postgres" and not (values["database"] or values["dsn"]):
        raise ConfigError(f"{where}.database: postgres needs a database name (or a dsn)")
    if engine in ("mysql", "vertica") and not values["database"]:
        raise ConfigError(f"{where}.database: {engine} needs a database name")
    if engine == "oracle" and not (values["dsn"] or values["host"]):
        raise ConfigError(f"{where}.dsn: oracle needs a dsn (or host/port/database)")


VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def expand_text(text: str, environ: Mapping[str, str], *, where: str) -> str:
    """``text`` with every ``${VAR}`` replaced by ``environ[VAR]``. Raises ``ConfigError``
    naming ``where`` (the file and key) and the variable when it is not set."""

    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in environ:
            raise ConfigError(
                f"{where}: the environment variable {name} is not set (export it, or write "
                "the value)"
            )
        return environ[name]

    return VARIABLE.sub(value, text)


def expanded(config: DatabaseConfig, environ: Mapping[str, str], *, alias: str) -> DatabaseConfig:
    """``config`` with the ``${VAR}`` references of its string settings replaced."""
    changes: dict[str, Any] = {
        key: expand_text(value, environ, where=f"database {alias!r}: {key}")
        for key in _STRING_KEYS
        if isinstance(value := getattr(config, key), str) and "${" in value
    }
    return attrs.evolve(config, **changes) if changes else config
