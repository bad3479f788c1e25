"""A function built into MariaDB only from some version is anyone's on an older server.

The allowlist held MariaDB's names whatever the server's version: ``sformat``,
``natural_sort_key`` and ``json_normalize`` are built in from 10.7, ``to_char`` from
10.6.1, ``random_bytes`` from 10.10. On an older server an unqualified ``sformat(...)``
calls the stored function ``sformat`` of the current database (anyone's, ``SET GLOBAL``
with its definer's rights), and the check let it through. Now the adapter reads the
server's version at connect and drops the names built in only later (``mysql_versions``).
The test server is 10.11, so the older one is a faked greeting.
"""

from __future__ import annotations

from typing import Any

import pytest
from db_support import Server

from rho_adapters.db.mysql import MysqlDatabase
from rho_domain.database_config import DatabaseConfig
from rho_domain.errors import StatementRefused
from rho_domain.sql.mysql_versions import mysql_builtins, server_version

LATER = ("sformat('{}', 1)", "natural_sort_key('a10')", "json_normalize('{}')", "to_char(now())")


class _Greeting(MysqlDatabase):
    """The real server (10.11), greeting as the version ``greeting`` says."""

    def __init__(self, greeting: str, config: DatabaseConfig) -> None:
        super().__init__("t", config)
        self.greeting = greeting

    def _open(self) -> Any:
        conn = super()._open()
        conn.get_server_info = lambda: self.greeting
        return conn


async def test_a_name_built_in_only_later_is_refused_on_an_older_server(
    mariadb_server: Server,
) -> None:
    older = _Greeting("10.5.27-MariaDB-log", mariadb_server.config)  # none from 10.6 on
    newer = MysqlDatabase("t", mariadb_server.config)
    try:
        for call in LATER:
            with pytest.raises(StatementRefused) as info:
                await older.query(f"SELECT {call}", max_rows=1, timeout=5)
            assert info.value.by == "check"
            assert f"the function {call.split('(')[0]}() is not on" in str(info.value)
        read = await older.query("SELECT json_value('{\"a\": 7}', '$.a')", max_rows=1, timeout=5)
        assert read.rows == (("7",),)
        read = await newer.query(f"SELECT {', '.join(LATER[:3])}", max_rows=1, timeout=5)
        assert read.rows[0][0] == "1"
    finally:
        await older.aclose()
        await newer.aclose()


def test_the_builtins_follow_the_flavour_and_version() -> None:
    assert server_version("5.5.5-10.11.19-MariaDB-0+deb12u1") == (10, 11, 19)  # PyMySQL's
    assert server_version("8.0.36") == (8, 0, 36)
    assert server_version("unknown") == (0, 0, 0)
    old, new = (mysql_builtins(mariadb=True, version=v) for v in ((10, 6, 9), (10, 7, 0)))
    assert "sformat" not in old
    assert {"sformat", "natural_sort_key", "to_char"} <= new
    assert "format_bytes" not in new  # MySQL's
    mysql = mysql_builtins(mariadb=False, version=(8, 0, 15))
    assert {"format_bytes", "sformat"}.isdisjoint(mysql)
    assert "regexp_like" in mysql
    assert "format_bytes" in mysql_builtins(mariadb=False, version=(8, 0, 16))
    assert "sformat" not in mysql_builtins(mariadb=True, version=server_version("unknown"))


def test_names_backported_to_several_series_follow_each_series() -> None:
    """JSON_PRETTY came to MariaDB in 10.4.28, 10.5.19, 10.6.12 ... 10.10.3: a 10.6.11 or a
    10.3 server has none, and its stored function of that name ran; the window functions
    (10.2.0; MySQL 8.0.2) and JSON functions (10.2.3; MySQL 5.7.8) are anyone's before."""
    has = {v: mysql_builtins(mariadb=True, version=v) for v in VERSIONS}
    assert "json_pretty" not in has[(10, 6, 11)] | has[(10, 3, 39)] | has[(10, 4, 27)]
    assert {"json_pretty", "json_merge_patch"} <= has[(10, 6, 12)] & has[(10, 11, 2)]
    assert "json_pretty" in has[(11, 4, 0)]
    assert "json_merge_patch" in has[(10, 3, 16)]
    assert "json_merge_patch" not in has[(10, 3, 15)] | has[(10, 2, 24)]
    assert {"row_number", "json_extract", "json_detailed"}.isdisjoint(has[(10, 1, 48)])
    assert {"row_number", "json_extract", "json_detailed"} <= has[(10, 2, 4)]
    mysql_57 = mysql_builtins(mariadb=False, version=(5, 7, 21))
    assert {"row_number", "json_pretty", "json_merge_patch"}.isdisjoint(mysql_57)
    assert "json_extract" in mysql_57
    assert {"row_number", "json_pretty"} <= mysql_builtins(mariadb=False, version=(8, 0, 2))


VERSIONS = [
    (10, 1, 48), (10, 2, 4), (10, 2, 24), (10, 3, 15), (10, 3, 16), (10, 3, 39), (10, 4, 27),
    (10, 6, 11), (10, 6, 12), (10, 11, 2), (11, 4, 0),
]  # fmt: skip


async def test_json_pretty_is_refused_on_a_series_release_without_it(
    mariadb_server: Server,
) -> None:
    older = _Greeting("5.5.5-10.6.11-MariaDB", mariadb_server.config)  # 10.11 has JSON_PRETTY
    newer = MysqlDatabase("t", mariadb_server.config)
    try:
        with pytest.raises(StatementRefused) as info:
            await older.query("SELECT json_pretty('[1]')", max_rows=1, timeout=5)
        assert "the function json_pretty() is not on" in str(info.value)
        read = await newer.query("SELECT json_pretty('[1]') IS NOT NULL", max_rows=1, timeout=5)
        assert read.rows == ((1,),)
    finally:
        await older.aclose()
        await newer.aclose()
