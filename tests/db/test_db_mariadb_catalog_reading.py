"""The catalog a MariaDB statement is judged against is read in one statement, database by
database, and the list of databases it asks about is the last statement's (``mysql_catalog``).

A database this login sees that the last reading did not (made, or granted to it or to its
role, while the connection is open) must be read before the very next statement: otherwise
its views would be taken for tables, and a definer's view calling a stored function would
run the function's ``SET GLOBAL``. Each attack below is made by the administrator's
connection between two statements of the agent's, and an adapter without the check shows
its target is real.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import attrs
import pytest
from db_support import Server, adapter, mariadb_objects, max_connections

from rho_adapters.db import ADAPTERS
from rho_domain.errors import StatementRefused
from rho_domain.permissions import DatabaseMode

DB = "rho_late27"
ROLE_DB = "rho_granted27"
TUNE = (
    "CREATE DEFINER=root@localhost FUNCTION {db}.tune() RETURNS int SQL SECURITY DEFINER "
    "BEGIN SET GLOBAL max_connections = @@GLOBAL.max_connections + 3; RETURN 1; END"
)
VIEW = "CREATE OR REPLACE DEFINER=root@localhost SQL SECURITY DEFINER VIEW {db}.v AS SELECT {q} a"
RUNS = r"the view v runs .*tune\(\).* is not on the mysql list"
SETUP = [
    "CREATE USER 'rho_cast27'@'%' IDENTIFIED BY 'pw-cast27'",
    "CREATE ROLE rho_reader27",
    "GRANT SELECT, SHOW VIEW ON rho.* TO rho_reader27",
    "GRANT rho_reader27 TO 'rho_cast27'@'%'",
    "SET DEFAULT ROLE rho_reader27 FOR 'rho_cast27'@'%'",
]
# More databases than the reading asks about one by one (``mysql_catalog._BRANCHES``): it
# then scans each table of information_schema whole, and must find the same.
MANY = [f"rho_many27_{i}" for i in range(9)]
TEARDOWN = [
    *(f"DROP DATABASE IF EXISTS {name}" for name in MANY),
    f"DROP DATABASE IF EXISTS {DB}",
    f"DROP DATABASE IF EXISTS {ROLE_DB}",
    "DROP USER IF EXISTS 'rho_cast27'@'%'",
    "DROP ROLE IF EXISTS rho_reader27",
]


@pytest.fixture(params=["few databases", "many databases"])
def admin(mariadb_server: Server, request: pytest.FixtureRequest) -> Iterator[Any]:
    many = request.param == "many databases"
    made = [f"CREATE DATABASE {name}" for name in MANY] if many else []
    grants = [f"GRANT SELECT ON {name}.* TO rho_reader27" for name in MANY] if many else []
    with mariadb_objects(mariadb_server, [*made, *SETUP, *grants], TEARDOWN) as cursor:
        yield cursor


async def test_a_database_made_after_the_last_reading_is_read_before_the_next_statement(
    mariadb_server: Server, admin: Any
) -> None:
    checked, unchecked = adapter(mariadb_server), adapter(mariadb_server, check=False)
    try:
        for db in (checked, unchecked):
            assert (await db.query("SELECT 1", max_rows=1, timeout=5)).rows == ((1,),)
        for sql in (
            f"CREATE DATABASE {DB}",
            TUNE.format(db=DB),
            VIEW.format(db=DB, q=f"{DB}.tune()"),
        ):
            admin.execute(sql)
        admin.execute(f"CREATE TABLE {DB}.tickets (n INT, id BIGINT AS (UUID_SHORT()) VIRTUAL)")
        before = max_connections(admin)
        with pytest.raises(StatementRefused, match=RUNS) as info:
            await checked.query(f"SELECT a FROM {DB}.v", max_rows=5, timeout=5)
        assert info.value.by == "check"
        with pytest.raises(
            StatementRefused, match=r"a virtual column of tickets runs SELECT uuid_short\(\)"
        ):
            await checked.query(f"SELECT id FROM {DB}.tickets", max_rows=5, timeout=5)
        assert max_connections(admin) == before
        # replaced in place, either way, and judged by its query of now each time
        admin.execute(VIEW.format(db=DB, q="1"))
        assert (await checked.query(f"SELECT a FROM {DB}.v", max_rows=5, timeout=5)).rows == ((1,),)
        admin.execute(VIEW.format(db=DB, q=f"{DB}.tune()"))
        with pytest.raises(StatementRefused, match=RUNS):
            await checked.query(f"SELECT a FROM {DB}.v", max_rows=5, timeout=5)
        assert max_connections(admin) == before
        await unchecked.query(f"SELECT a FROM {DB}.v", max_rows=5, timeout=5)
        assert max_connections(admin) == before + 3
        # and once it is dropped, the next statements read as before
        admin.execute(f"DROP DATABASE {DB}")
        assert (await checked.query("SELECT COUNT(*) FROM users", max_rows=1, timeout=5)).rows
    finally:
        await checked.aclose()
        await unchecked.aclose()


async def test_a_database_granted_to_the_logins_role_is_read_before_the_next_statement(
    mariadb_server: Server, admin: Any
) -> None:
    """The login sees ``rho`` through its default role; the role is then granted another
    database, whose definer's view calls a stored function: the session's role holds the
    grant at once, so the next statement may name the view."""
    login = attrs.evolve(mariadb_server.config, user="rho_cast27")
    checked, unchecked = (
        ADAPTERS["mysql"]("t", login, password="pw-cast27", check_statements=check)
        for check in (True, False)
    )
    try:
        for db in (checked, unchecked):
            assert (await db.query("SELECT COUNT(*) FROM users", max_rows=1, timeout=5)).rows
        for sql in (
            f"CREATE DATABASE {ROLE_DB}",
            TUNE.format(db=ROLE_DB),
            VIEW.format(db=ROLE_DB, q=f"{ROLE_DB}.tune()"),
            f"GRANT SELECT, SHOW VIEW ON {ROLE_DB}.* TO rho_reader27",
        ):
            admin.execute(sql)
        before = max_connections(admin)
        with pytest.raises(StatementRefused, match=RUNS) as info:
            await checked.query(f"SELECT a FROM {ROLE_DB}.v", max_rows=5, timeout=5)
        assert info.value.by == "check"
        # SHOW VIEW revoked from the role: the query hidden at once, the view refused
        admin.execute(f"REVOKE SHOW VIEW ON {ROLE_DB}.* FROM rho_reader27")
        with pytest.raises(StatementRefused, match="hides its query from this login"):
            await checked.query(f"SELECT a FROM {ROLE_DB}.v", max_rows=5, timeout=5)
        assert max_connections(admin) == before
        await unchecked.query(f"SELECT a FROM {ROLE_DB}.v", max_rows=5, timeout=5)
        assert max_connections(admin) == before + 3
    finally:
        await checked.aclose()
        await unchecked.aclose()


@pytest.mark.parametrize("schema", ["information_schema", "performance_schema"])
@pytest.mark.parametrize(
    "sql", ["CREATE VIEW {s}.rho_v27 AS SELECT 1", "CREATE TABLE {s}.rho_t27 (a INT)"]
)
def test_no_login_may_make_a_view_or_table_where_the_catalog_does_not_ask(
    mariadb_server: Server, schema: str, sql: str
) -> None:
    """The reading skips these two databases (3 ms of the server's CPU a statement for
    information_schema alone): it may only because the server refuses root there."""
    import pymysql  # here: collecting the suite need not import it (test_collection_costs)

    conn = mariadb_server.admin()
    try:
        with pytest.raises(pymysql.err.OperationalError, match="denied"):
            conn.cursor().execute(sql.format(s=schema))
    finally:
        conn.close()


async def test_with_the_check_off_no_statement_reads_the_catalog(mariadb_server: Server) -> None:
    """Only the check's refusals come of the catalog: in read-write mode (the check off)
    each statement paid its reading all the same (a statement over information_schema
    before each one). The server counts the SELECTs it ran: one a statement."""
    conn = mariadb_server.admin()
    db = adapter(mariadb_server, mode=DatabaseMode.MUTATIONS)
    try:
        await db.query("SELECT 1", max_rows=1, timeout=5)  # the login's own reads done
        cursor = conn.cursor()
        before = _selects(cursor)
        for _ in range(3):
            assert (await db.query("SELECT COUNT(*) FROM users", max_rows=1, timeout=5)).rows
        assert _selects(cursor) - before == 3
    finally:
        await db.aclose()
        conn.close()


def _selects(cursor: Any) -> int:
    cursor.execute("SHOW GLOBAL STATUS LIKE 'Com\\_select'")
    return int(cursor.fetchone()[1])
