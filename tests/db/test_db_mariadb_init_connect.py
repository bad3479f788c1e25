"""A server's ``init_connect`` that writes stops the readonly agent's logins.

MariaDB runs ``init_connect`` at each login of an account without ``SUPER`` or ``CONNECTION
ADMIN``, before the adapter's first statement and outside any read-only transaction: with
``INSERT INTO rho.rho_ic_log VALUES (CURRENT_USER())`` there, the readonly agent's login
wrote a row (MariaDB 10.11), and each new connection would write another. No client setting
comes before it; now the adapter reads it once logged in, refuses the connection when it does
more than set this session's variables, and logs in no more. One that sets ``NAMES`` reads.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import attrs
import pytest
from db_support import Server

from rho_adapters.db import ADAPTERS
from rho_adapters.db.mysql_login import init_connect_refusal
from rho_domain.errors import DatabaseError

SETUP = [
    "CREATE USER 'rho_ic'@'%' IDENTIFIED BY 'pw-ic'",
    "GRANT SELECT ON rho.* TO 'rho_ic'@'%'",
    "CREATE TABLE rho.rho_ic_log (who varchar(100))",
    "GRANT INSERT ON rho.rho_ic_log TO 'rho_ic'@'%'",
    "CREATE SEQUENCE rho.rho_ic_seq",
    "GRANT INSERT ON rho.rho_ic_seq TO 'rho_ic'@'%'",
]
TEARDOWN = [
    "SET GLOBAL init_connect = ''",
    "DROP TABLE IF EXISTS rho.rho_ic_log",
    "DROP SEQUENCE IF EXISTS rho.rho_ic_seq",
    "DROP USER IF EXISTS 'rho_ic'@'%'",
]
WRITES = "INSERT INTO rho.rho_ic_log VALUES (CURRENT_USER())"
ADVANCES = "SET sql_mode = ORACLE; SET @a = rho.rho_ic_seq.nextval"


@pytest.fixture
def limited(mariadb_server: Server) -> Iterator[tuple[Server, Any]]:
    conn = mariadb_server.admin()
    conn.autocommit(True)
    cursor = conn.cursor()
    for sql in TEARDOWN + SETUP:
        cursor.execute(sql)
    try:
        yield (
            attrs.evolve(mariadb_server, config=attrs.evolve(mariadb_server.config, user="rho_ic")),
            cursor,
        )
    finally:
        for sql in TEARDOWN:
            cursor.execute(sql)
        conn.close()


async def test_an_init_connect_that_writes_stops_the_logins(
    limited: tuple[Server, Any],
) -> None:
    server, cursor = limited
    cursor.execute("SET GLOBAL init_connect = %s", (WRITES,))
    db = ADAPTERS["mysql"]("t", server.config, password="pw-ic")
    try:
        for _ in range(2):  # the second connects no more: init_connect wrote once
            with pytest.raises(
                DatabaseError, match=r"t: the server ran its init_connect \('INSERT"
            ):
                await db.query("SELECT 1", max_rows=1, timeout=10)
    finally:
        await db.aclose()
    cursor.execute("SELECT COUNT(*) FROM rho.rho_ic_log")
    assert cursor.fetchone() == (1,)
    cursor.execute("SET GLOBAL init_connect = 'SET NAMES utf8mb4'")
    db = ADAPTERS["mysql"]("t", server.config, password="pw-ic")
    try:
        assert (await db.query("SELECT 1", max_rows=1, timeout=10)).rows == ((1,),)
    finally:
        await db.aclose()


async def test_a_sequence_advanced_by_a_plain_looking_set_stops_the_logins(
    limited: tuple[Server, Any],
) -> None:
    """Under sql_mode = ORACLE (a session variable init_connect may set first), a SET's value
    ``rho.rho_ic_seq.nextval`` advances the sequence: no call, no word the rule knew, and it
    wrote at each login (MariaDB 10.11). Refused now, having run once."""
    server, cursor = limited
    cursor.execute("SET GLOBAL init_connect = %s", (ADVANCES,))
    db = ADAPTERS["mysql"]("t", server.config, password="pw-ic")
    try:
        for _ in range(2):
            with pytest.raises(DatabaseError, match=r"t: the server ran its init_connect"):
                await db.query("SELECT 1", max_rows=1, timeout=10)
    finally:
        await db.aclose()
    cursor.execute("SELECT PREVIOUS VALUE FOR rho.rho_ic_seq, NEXTVAL(rho.rho_ic_seq)")
    assert cursor.fetchone() == (None, 2)  # this session's none yet; the login's took 1


async def test_an_init_connect_changed_after_the_login_stops_the_next_one(
    limited: tuple[Server, Any],
) -> None:
    """init_connect was read at the login only: set to an INSERT while the connection was
    open, the next login (a result left rows unread, so the connection was replaced) wrote
    a row before it was read. Now each statement reads it first, and no login follows."""
    server, cursor = limited
    db = ADAPTERS["mysql"]("t", server.config, password="pw-ic")
    try:
        assert (await db.query("SELECT 1", max_rows=1, timeout=10)).rows == ((1,),)
        cursor.execute("SET GLOBAL init_connect = %s", (WRITES,))
        more = await db.query("SELECT 1 UNION SELECT 2", max_rows=1, timeout=10)
        assert more.more_rows  # read on the open connection, which is then replaced
        with pytest.raises(DatabaseError, match=r"t: the server's init_connect is now 'INSERT"):
            await db.query("SELECT 1", max_rows=1, timeout=10)
    finally:
        await db.aclose()
    cursor.execute("SELECT COUNT(*) FROM rho.rho_ic_log")
    assert cursor.fetchone() == (0,)


def test_only_session_settings_pass() -> None:
    fine = [
        "",
        "SET NAMES utf8mb4",
        "SET NAMES utf8mb4 COLLATE utf8mb4_unicode_ci; SET SESSION sql_mode = 'ANSI'",
        "SET @@SESSION.wait_timeout = 60, autocommit = 0;",
        "SET NAMES utf8mb4;\nSET time_zone = '+00:00'\n",
        "SET long_query_time = 0.5, @a = 'x.y;z', @@LOCAL.b = 1.5e3, sql_mode = 'ORACLE'",
    ]
    for text in fine:
        assert init_connect_refusal("t", text, skipped=False) == "", text
    refused = [
        WRITES,
        "CALL audit.log_login()",
        "SET GLOBAL max_connections = 200",
        "SET @@global.max_connections = 200",
        "SET PASSWORD = PASSWORD('x')",
        "SET DEFAULT ROLE admin FOR rho_ic",
        "SET ROLE admin",
        "SET STATEMENT max_statement_time = 1 FOR INSERT INTO t VALUES (1)",
        "SET @x = (SELECT f())",
        "SET NAMES utf8mb4 /*!50000 , @@GLOBAL.max_connections = 1 */",
        "SET NAMES utf8mb4; DO f()",
        ADVANCES,  # a dot outside a string: a sequence (ORACLE mode), however spelled
        "SET sql_mode = ORACLE; SET @a = `rho_ic_seq` . NEXTVAL",
        "SET @a = r1.2s.nextval",
        # quotes the server pairs otherwise than a split at each ';' or a skipped comment
        "SET @a = '; SET @b = ', @c = s.nextval, @d = '; SET @e = '",
        'SET @a = "\'", @c = s.nextval, @d = "\'"',
        "SET @a = 1 -- '\n, @c = s.nextval -- '",
        "SET @a = 'unterminated",
    ]
    for text in refused:
        assert "init_connect" in init_connect_refusal("t", text, skipped=False), text
    assert init_connect_refusal("t", WRITES, skipped=True) == ""  # a login it skips
