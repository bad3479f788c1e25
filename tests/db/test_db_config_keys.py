"""A databases.yaml key the engine's adapter never reads is refused, naming it: the adapter
would connect with its default instead. The MySQL and Vertica adapters read no ``dsn``, so a
MySQL alias given only ``dsn: mysql://agent@prod-db:3306/app`` connected to ``localhost``
(its database None) without a word; an Oracle ``dsn`` beside ``host`` dropped the host."""

from __future__ import annotations

from typing import Any

import pytest

from rho_adapters.db.config import parse_databases
from rho_domain.errors import ConfigError


def _parse(entry: dict[str, Any]) -> None:
    parse_databases({"databases": {"prod": entry}}, source="databases.yaml")


@pytest.mark.parametrize(
    ("entry", "words"),
    [
        (
            {"engine": "mysql", "dsn": "mysql://agent@prod-db:3306/app"},
            "databases.yaml: databases.prod.dsn: mysql does not read dsn (give host, port, user",
        ),
        (
            {"engine": "mariadb", "host": "prod-db", "database": "app", "dsn": "x"},
            "databases.prod.dsn: mysql does not read dsn",
        ),
        (
            {"engine": "vertica", "dsn": "vertica://prod-db/app", "database": "app"},
            "databases.prod.dsn: vertica does not read dsn",
        ),
        (
            {"engine": "sqlite", "path": "app.db", "host": "prod-db"},
            "databases.prod.host: sqlite does not read host; it reads path, dsn",
        ),
        (
            {"engine": "sqlite", "path": "app.db", "port": 5432},
            "databases.prod.port: sqlite does not read port",
        ),
        (
            {"engine": "postgres", "database": "app", "path": "app.db"},
            "databases.prod.path: postgres does not read path",
        ),
        (
            {"engine": "oracle", "dsn": "prod-db:1521/APP", "host": "other-db"},
            "databases.prod.dsn: oracle connects with the dsn or with host/port/database",
        ),
    ],
)
def test_a_key_the_engine_does_not_read_is_refused(entry: dict[str, Any], words: str) -> None:
    with pytest.raises(ConfigError) as refused:
        _parse(entry)
    assert words in str(refused.value)


@pytest.mark.parametrize(
    "entry",
    [
        {"engine": "mysql", "host": "prod-db", "port": 3306, "user": "agent", "database": "app"},
        {"engine": "vertica", "host": "prod-db", "user": "agent", "database": "app"},
        {"engine": "postgres", "dsn": "postgresql://agent@prod-db/app", "user": "agent"},
        {"engine": "oracle", "dsn": "prod-db:1521/APP", "user": "agent"},
        {"engine": "oracle", "host": "prod-db", "port": 1521, "database": "APP"},
        {"engine": "sqlite", "path": "app.db"},
    ],
)
def test_what_each_engine_reads_still_loads(entry: dict[str, Any]) -> None:
    _parse(entry)


def test_mysql_still_needs_its_database_name() -> None:
    with pytest.raises(ConfigError, match=r"databases.prod.database: mysql needs a database name$"):
        _parse({"engine": "mysql", "host": "prod-db"})


def test_a_port_out_of_range_is_refused_with_the_file_and_in_code() -> None:
    """Before, ``port: 99999`` (or 0, or -1) loaded, and the driver refused it at the
    database's first query, as a DatabaseError the model read ("invalid port number")."""
    from rho_adapters.db.factory import open_databases
    from rho_domain.database_config import DatabaseConfig
    from rho_domain.permissions import DatabaseMode

    for port in (99999, 0, -1):
        entry = {"engine": "postgres", "host": "db", "database": "app", "port": port}
        with pytest.raises(ConfigError, match=rf"databases\.prod\.port: {port} is not a port"):
            _parse(entry)
        built = DatabaseConfig(engine="mysql", host="db", database="app", port=port)
        with pytest.raises(ConfigError, match=rf"databases\.prod\.port: {port} is not a port"):
            open_databases({"prod": built}, mode=DatabaseMode.READONLY, environ={})
