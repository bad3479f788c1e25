"""A connection that cannot be opened names the alias's keys that fix it.

An operator's databases.yaml with a typo'd port, database, user or password: the model and
the user read the driver's words only ("database \\"rhoo\\" does not exist", "Access denied for
user 'root'@'localhost' (using password: YES)"), never which key of which alias to change,
nor which variable the password came from. Now each names ``databases.ALIAS`` and the keys
(``host, port``, ``database``, ``user, password_env`` with the variable).
"""

from __future__ import annotations

from typing import Any

import attrs
import pytest
from db_support import Server, free_port

from rho_adapters.db import ADAPTERS
from rho_domain.errors import DatabaseError


async def _said(server: Server, password: str | None = None, **changes: Any) -> str:
    config = attrs.evolve(server.config, **changes)
    db = ADAPTERS[server.engine]("shop", config, password=password)
    try:
        with pytest.raises(DatabaseError) as raised:
            await db.list_tables()
    finally:
        await db.aclose()
    return str(raised.value)


async def test_postgres_connect_failures_name_the_keys(postgres_server: Server) -> None:
    said = await _said(postgres_server, database="rhoo")
    assert said.endswith('database "rhoo" does not exist; check databases.shop: database')
    said = await _said(postgres_server, user="nobody")
    assert 'role "nobody" does not exist; check databases.shop: user, password_env (none' in said
    said = await _said(postgres_server, port=free_port())
    assert "Connection refused" in said
    assert said.endswith("check databases.shop: host, port")


async def test_mariadb_connect_failures_name_the_keys(mariadb_server: Server) -> None:
    said = await _said(mariadb_server, database="rhoo")
    assert said.endswith("Unknown database 'rhoo'; check databases.shop: database")
    said = await _said(mariadb_server, password="wrong", password_env="SHOP_DB_PASSWORD")
    assert "Access denied for user 'root'" in said
    assert said.endswith(
        "check databases.shop: user, password_env (the password is $SHOP_DB_PASSWORD's value)"
    )
