"""Oracle and Vertica adapters against a fake DB-API driver (no server can run here).

The fake records every statement and call, so the tests assert what the adapters send:
the read-only transaction or session setting, the timeout, rollback, fetchmany (never
fetchall of a result), reconnecting a dead connection and translating driver errors.
"""

from __future__ import annotations

import datetime
import re
import threading
import time
import zlib
from collections.abc import Sequence
from typing import Any

import pytest

from rho_adapters.db import StatementTimeout
from rho_adapters.db.oracle import CATALOG_EXTERNAL as ORACLE_EXTERNAL
from rho_adapters.db.oracle import CATALOG_SYNONYMS as ORACLE_SYNONYMS
from rho_adapters.db.oracle import CATALOG_SYNONYMS_11G as ORACLE_SYNONYMS_11G
from rho_adapters.db.oracle import CATALOG_UNSEEN as ORACLE_UNSEEN
from rho_adapters.db.oracle import CATALOG_UNSEEN_11G as ORACLE_UNSEEN_11G
from rho_adapters.db.oracle import CATALOG_VERSION as ORACLE_VERSION
from rho_adapters.db.oracle import CATALOG_VERSION_11G as ORACLE_VERSION_11G
from rho_adapters.db.oracle import CATALOG_VIEWS as ORACLE_VIEWS
from rho_adapters.db.oracle import CATALOG_VIEWS_11G as ORACLE_VIEWS_11G
from rho_adapters.db.oracle import OracleDatabase
from rho_adapters.db.vertica import CATALOG_RELATIONS as VERTICA_RELATIONS
from rho_adapters.db.vertica import CATALOG_UNSEEN as VERTICA_UNSEEN
from rho_adapters.db.vertica import CATALOG_VERSION as VERTICA_VERSION
from rho_adapters.db.vertica import READ_ONLY_SESSION, VerticaDatabase
from rho_domain.config import DatabaseConfig
from rho_domain.errors import DatabaseError, StatementRefused
from rho_domain.permissions import DatabaseMode


class FakeError(Exception):
    pass


class FakeCursor:
    def __init__(self, conn: FakeConnection) -> None:
        self.conn = conn
        self.description: Sequence[tuple[str, ...]] | None = None
        self.rowcount = -1
        self.arraysize = 100
        self._rows: list[tuple[Any, ...]] = []

    def execute(self, sql: str, params: Any = None) -> None:
        self.conn.log.append(sql)
        if sql.startswith("SELECT hang"):
            # A statement the server never times out: only a cancel ends it.
            if not self.conn.cancelled.wait(60):
                raise AssertionError("never cancelled")
            raise FakeError("ORA-01013: user requested cancel of current operation")
        if self.conn.fail_on and self.conn.fail_on in sql:
            raise FakeError(self.conn.fail_message)
        if sql in self.conn.catalog:  # the adapter's reading of the catalog on connect
            self.description, self._rows = [("NAME",)], list(self.conn.catalog[sql])
        elif sql.startswith("SELECT n FROM big"):
            self.description = [("N",)]
            self._rows = [(i,) for i in range(1, 1001)]
        elif sql.startswith("SELECT"):
            self.description = [("X",)]
            self._rows = [(1,)]
        else:
            self.description, self._rows, self.rowcount = None, [], 0

    def fetchmany(self, size: int) -> list[tuple[Any, ...]]:
        self.conn.fetched.append(size)
        rows, self._rows = self._rows[:size], self._rows[size:]
        return rows

    def fetchall(self) -> list[tuple[Any, ...]]:
        if self.conn.log and self.conn.log[-1] != "SELECT 1":
            raise AssertionError("fetchall used on a user query")
        rows, self._rows = self._rows, []
        return rows

    def close(self) -> None:
        pass


class FakeConnection:
    def __init__(self, driver: FakeDriver, kwargs: dict[str, Any]) -> None:
        self.kwargs = kwargs
        self.log: list[str] = driver.log
        self.fetched: list[int] = driver.fetched
        self.fail_on = driver.fail_on
        self.fail_message = driver.fail_message
        self.catalog = driver.catalog
        self.version = driver.version  # python-oracledb's server version
        self.call_timeout = 0
        self.is_closed = False
        self.cancelled = threading.Event()

    def cancel(self) -> None:
        self.log.append("<cancel>")
        self.cancelled.set()

    def cursor(self) -> FakeCursor:
        return FakeCursor(self)

    def rollback(self) -> None:
        self.log.append("<rollback>")

    def commit(self) -> None:
        self.log.append("<commit>")

    def ping(self) -> None:
        if self.is_closed:
            raise FakeError("DPI-1080: connection was closed")

    def closed(self) -> bool:
        return self.is_closed

    def close(self) -> None:
        self.is_closed = True


class FakeDriver:
    """Stands in for the ``oracledb`` / ``vertica_python`` module."""

    Error = FakeError

    def __init__(self) -> None:
        self.log: list[str] = []
        self.fetched: list[int] = []
        self.connections: list[FakeConnection] = []
        self.fail_on = ""
        self.fail_message = ""
        self.version = "19.3.0.0.0"
        # what each catalog query answers (none by default): (query text, rows)
        self.catalog: dict[str, list[tuple[Any, ...]]] = {
            ORACLE_VIEWS: [],
            ORACLE_SYNONYMS: [],
            ORACLE_EXTERNAL: [],
            ORACLE_VIEWS_11G: [],
            ORACLE_SYNONYMS_11G: [],
            ORACLE_UNSEEN: [],
            ORACLE_UNSEEN_11G: [],
            ORACLE_VERSION: [(0, None, None)],
            ORACLE_VERSION_11G: [(0, None, None)],
            VERTICA_RELATIONS: [],
            VERTICA_UNSEEN: [],
            VERTICA_VERSION: [(0, None, None)],
        }

    def connect(self, **kwargs: Any) -> FakeConnection:
        conn = FakeConnection(self, kwargs)
        self.connections.append(conn)
        return conn


ORACLE = DatabaseConfig(engine="oracle", dsn="db.example:1521/ORCL", user="agent")
VERTICA = DatabaseConfig(engine="vertica", host="vx", database="dw", user="agent")


async def test_oracle_wraps_each_statement_in_a_read_only_transaction() -> None:
    driver = FakeDriver()
    db = OracleDatabase("ora", ORACLE, password="pw", driver=driver)
    result = await db.query("SELECT x FROM dual;", max_rows=10, timeout=2.5)
    assert result.rows == ((1,),)
    conn = driver.connections[0]
    assert conn.kwargs == {"user": "agent", "password": "pw", "dsn": "db.example:1521/ORCL"}
    assert conn.call_timeout == 2500
    assert driver.log == [
        ORACLE_VERSION,
        ORACLE_VIEWS,
        ORACLE_SYNONYMS,
        ORACLE_UNSEEN,
        ORACLE_EXTERNAL,
        ORACLE_VERSION,  # before each statement: unchanged, so the catalog is not read again
        "<rollback>",
        "SET TRANSACTION READ ONLY",
        "SELECT x FROM dual",
        "<rollback>",
    ]


@pytest.mark.parametrize(
    "sql",
    [
        "BEGIN DELETE FROM users; END;",
        "DECLARE x NUMBER; BEGIN NULL; END;",
        "SELECT UTL_HTTP.REQUEST('http://evil') FROM dual",
        "SELECT dbms_pipe.receive_message('x', 10) FROM dual",
        "SELECT sys.dbms_lock.sleep(5) FROM dual",
        "LOCK TABLE users IN EXCLUSIVE MODE",
        "ALTER SESSION SET CURRENT_SCHEMA = other",
        "EXPLAIN PLAN FOR SELECT 1 FROM dual",
        "SELECT q'[x]' FROM dual; DELETE FROM users",
        "SELECT * FROM users FOR UPDATE",
        "CALL evil()",
        "EXECUTE IMMEDIATE 'DROP TABLE users'",
        "SELECT httpuritype('http://evil').getclob() FROM dual",
        "WITH FUNCTION f RETURN NUMBER IS BEGIN RETURN 1; END; SELECT f FROM dual",
        # another database, as the link's stored login (passed the check: the read below)
        "SELECT * FROM users@prod_link",
        'SELECT name FROM app.users @ "PROD.EXAMPLE.COM"',
    ],
)
async def test_oracle_refuses_plsql_packages_and_locks(sql: str) -> None:
    driver = FakeDriver()
    db = OracleDatabase("ora", ORACLE, driver=driver)
    with pytest.raises(StatementRefused):
        await db.query(sql, max_rows=10, timeout=1)
    assert driver.log == []  # nothing reached the server


async def test_oracle_fetches_with_fetchmany_and_reports_more_rows() -> None:
    driver = FakeDriver()
    db = OracleDatabase("ora", ORACLE, driver=driver)
    result = await db.query("SELECT n FROM big", max_rows=5, timeout=1)
    assert [r[0] for r in result.rows] == [1, 2, 3, 4, 5]
    assert result.more_rows
    # the catalog's version (a row, then the end), views, synonyms, the views over what
    # the login cannot see and external tables on connect, its version again before the
    # statement, then one row to learn its size, then what fits the budget
    assert driver.fetched == [1000] * 8 + [1, 5]


async def test_oracle_reconnects_a_dead_connection_and_maps_errors() -> None:
    driver = FakeDriver()
    db = OracleDatabase("ora", ORACLE, driver=driver)
    await db.query("SELECT 1 FROM dual", max_rows=1, timeout=1)
    driver.connections[0].close()
    await db.query("SELECT 1 FROM dual", max_rows=1, timeout=1)
    assert len(driver.connections) == 2
    driver.connections[1].fail_on = "FROM t"
    driver.connections[1].fail_message = "ORA-01456: may not perform insert/delete/update"
    with pytest.raises(StatementRefused, match="ORA-01456"):
        await db.query("SELECT a FROM t", max_rows=1, timeout=1)
    driver.connections[1].fail_message = "ORA-00942: table or view does not exist"
    with pytest.raises(DatabaseError, match="ORA-00942"):
        await db.query("SELECT a FROM t", max_rows=1, timeout=1)
    await db.aclose()
    assert driver.connections[1].is_closed


async def test_vertica_sets_the_session_read_only_after_connect() -> None:
    driver = FakeDriver()
    db = VerticaDatabase("vx", VERTICA, password="pw", driver=driver)
    result = await db.query("SELECT x FROM t", max_rows=10, timeout=3)
    assert result.rows == ((1,),)
    kwargs = driver.connections[0].kwargs
    assert "read_only" not in kwargs  # vertica-python has no such option
    assert kwargs["database"] == "dw"
    assert driver.log == [
        READ_ONLY_SESSION,
        VERTICA_VERSION,
        VERTICA_RELATIONS,
        VERTICA_UNSEEN,
        VERTICA_VERSION,  # before each statement: unchanged, so not read again
        "SET SESSION RUNTIMECAP '3 seconds'",
        "SELECT x FROM t",
        "<rollback>",
    ]


async def test_a_connection_whose_session_setting_fails_is_closed() -> None:
    # it was dropped open: nothing held it but the failed connect
    driver = FakeDriver()
    driver.fail_on, driver.fail_message = READ_ONLY_SESSION, "the server went away"
    db = VerticaDatabase("vx", VERTICA, password="pw", driver=driver)
    with pytest.raises(DatabaseError, match="the server went away"):
        await db.query("SELECT x FROM t", max_rows=10, timeout=3)
    [conn] = driver.connections
    assert conn.is_closed
    await db.aclose()


@pytest.mark.parametrize(
    "sql",
    [
        "SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE",
        "SELECT EXPORT_OBJECTS('/tmp/x', '')",
        "SELECT CLOSE_ALL_SESSIONS()",
        "SELECT PURGE_TABLE('users')",
        "SELECT DROP_PARTITIONS('users', 1, 2)",
        "SELECT ANALYZE_STATISTICS('users')",
        "SELECT INTERRUPT_STATEMENT('s', 1)",
        "COPY users FROM LOCAL '/etc/passwd'",
        "EXPORT TO PARQUET (directory = '/tmp/x') AS SELECT * FROM users",
        "CONNECT TO VERTICA db USER u PASSWORD 'p' ON 'h', 5433",
        "SELECT 1; DELETE FROM users",
        "/* /* */ SELECT 1 */ DELETE FROM users",
        "SELECT $$ x $$; DROP TABLE users",
    ],
)
async def test_vertica_refuses_meta_functions_and_session_changes(sql: str) -> None:
    driver = FakeDriver()
    db = VerticaDatabase("vx", VERTICA, driver=driver)
    with pytest.raises(StatementRefused):
        await db.query(sql, max_rows=10, timeout=1)
    assert driver.log == []


async def test_vertica_drops_a_connection_with_rows_left_and_commits_in_mutations_mode() -> None:
    driver = FakeDriver()
    db = VerticaDatabase("vx", VERTICA, driver=driver)
    result = await db.query("SELECT n FROM big", max_rows=3, timeout=1)
    assert result.more_rows
    assert driver.connections[0].is_closed  # not drained
    rw = VerticaDatabase("vx", VERTICA, mode=DatabaseMode.MUTATIONS, driver=driver)
    seen = len(driver.log)
    await rw.query("DELETE FROM t", max_rows=1, timeout=1)
    assert driver.log[seen:] == [
        VERTICA_VERSION,
        VERTICA_RELATIONS,
        VERTICA_UNSEEN,
        # no catalog version before the statement: with the check off nothing judges by it
        "SET SESSION RUNTIMECAP '1 seconds'",
        "DELETE FROM t",
        "<commit>",
    ]


@pytest.mark.parametrize("cls", [OracleDatabase, VerticaDatabase])
async def test_a_statement_the_server_does_not_stop_is_cancelled_in_time(
    cls: type[OracleDatabase] | type[VerticaDatabase],
) -> None:
    """The watchdog cancels through the driver (oracledb and vertica-python ``cancel()``)
    just after the timeout, and the connection stays usable. The fake statement ends only by
    a cancel (or fails after 60 s): the cancel in the log is the watchdog's work; how soon
    after 0.3 s is the machine's load as much as the code's, so only a hang is timed."""
    driver = FakeDriver()
    db = cls("x", ORACLE if cls is OracleDatabase else VERTICA, driver=driver)
    started = time.monotonic()
    with pytest.raises(StatementTimeout):
        await db.query("SELECT hang FROM dual", max_rows=1, timeout=0.3)
    assert time.monotonic() - started < 30  # a hang, not a speed
    assert "<cancel>" in driver.log
    assert (await db.query("SELECT 1 FROM dual", max_rows=1, timeout=1)).rows == ((1,),)
    # Oracle keeps the connection; Vertica drops any connection a statement failed on.
    assert len(driver.connections) == (1 if cls is OracleDatabase else 2)


# The catalogs the check refuses by name, read under a name an administrator gave them: the
# check let each through (it knew no such name). Now the adapter reads, on connect, the
# views and synonyms not the server's own, and the check judges them where named. And the
# external tables, whose reads read server files (a PREPROCESSOR runs a program), refused.
ORACLE_ALIASES: dict[str, list[tuple[Any, ...]]] = {
    ORACLE_SYNONYMS: [
        ("USERS_PW", "SYS", "USER$", None),  # CREATE PUBLIC SYNONYM users_pw FOR sys.user$
        ("SQLS", "SYS", "V_$SQL", None),
        ("REMOTE_T", "APP", "ORDERS", "PROD.EXAMPLE.COM"),  # another database, its login
        ("MY_ORDERS", "APP", "ORDERS", None),
    ],
    ORACLE_VIEWS: [
        ("PW_VIEW", "SELECT name, spare4 FROM sys.user$"),
        ("NESTED", "SELECT * FROM users_pw"),  # a view over the synonym
        ("ORDERS_V", "SELECT id FROM orders"),
        # a view over HR's view, which the login cannot see (it reads SYS.USER$, as HR)
        ("OVER_HR", "SELECT * FROM hr.secret_v"),
    ],
    ORACLE_UNSEEN: [("OVER_HR", "HR", "SECRET_V")],
    # ORGANIZATION EXTERNAL ... PREPROCESSOR exec_dir:'unzip.sh'
    ORACLE_EXTERNAL: [("FEED", "ORACLE_LOADER", "DATA_DIR")],
}
ORACLE_REFUSED = [
    ("SELECT name, spare4 FROM users_pw", "USER$ holds password hashes"),
    ("SELECT sql_text FROM app.sqls", "V_$SQL shows other sessions' statement texts"),
    ("SELECT * FROM pw_view", "the view PW_VIEW runs"),
    ("SELECT * FROM nested", "USER$ holds password hashes"),
    ("SELECT * FROM remote_t", "another database's"),
    ("SELECT * FROM app.feed", "FEED is an external table (ORACLE_LOADER, directory DATA_DIR)"),
    ("SELECT * FROM over_hr", "the view OVER_HR reads HR.SECRET_V as its owner"),
]
VERTICA_ALIASES = {
    VERTICA_RELATIONS: [
        ("PW_Copy", "SELECT user_name, password, salt FROM v_catalog.passwords", ""),
        ("requests", "SELECT request FROM v_internal.dc_requests_issued", ""),
        ("ok_v", "SELECT a FROM public.t", ""),
        ("Feed", "", "COPY FROM '/etc/shadow' DELIMITER ':'"),
        # over hid.secret_v, which the login cannot see (it reads v_catalog.passwords)
        ("Over_Hid", "SELECT * FROM hid.secret_v", ""),
        # a letter whose lower case Python and the check write otherwise
        ("Pw_V\u0130ew", "SELECT user_name, password, salt FROM v_catalog.passwords", ""),
    ],
    VERTICA_UNSEEN: [("Over_Hid", "hid", "secret_v")],
}
VERTICA_REFUSED = [
    ("SELECT * FROM pw_copy", "passwords holds password hashes"),
    ("SELECT request FROM public.requests", "dc_requests_issued is the server's internal"),
    ("SELECT * FROM feed", "Feed is an external table (COPY FROM '/etc/shadow'"),
    ("SELECT * FROM public.over_hid", "the view Over_Hid reads hid.secret_v as its owner"),
    ("SELECT * FROM pw_v\u0130ew", "passwords holds password hashes"),
]


@pytest.mark.parametrize(
    ("cls", "config", "catalog", "refused", "reads"),
    [
        (OracleDatabase, ORACLE, ORACLE_ALIASES, ORACLE_REFUSED, ["my_orders", "orders_v"]),
        (VerticaDatabase, VERTICA, VERTICA_ALIASES, VERTICA_REFUSED, ["ok_v"]),
    ],
)
async def test_synonyms_and_views_over_refused_catalogs_are_judged_by_what_they_read(
    cls: type[OracleDatabase] | type[VerticaDatabase],
    config: DatabaseConfig,
    catalog: dict[str, list[tuple[Any, ...]]],
    refused: list[tuple[str, str]],
    reads: list[str],
) -> None:
    driver = FakeDriver()
    driver.catalog.update(catalog)
    db = cls("x", config, driver=driver)
    try:
        for sql, said in refused:
            with pytest.raises(StatementRefused) as info:
                await db.query(sql, max_rows=1, timeout=1)
            assert info.value.by == "check", (sql, info.value)
            assert said in str(info.value), (sql, info.value)
            assert sql not in driver.log  # never sent
        for name in reads:  # an administrator's names for an application's tables read
            await db.query(f"SELECT * FROM {name}", max_rows=1, timeout=1)
            assert f"SELECT * FROM {name}" in driver.log
    finally:
        await db.aclose()


# Vertica's catalog tables as documented (SQL Reference Manual, V_CATALOG schema): the
# columns CATALOG_UNSEEN names, by the alias it gives each table.
VERTICA_DOCUMENTED = {
    "view_tables": {
        "table_id",
        "table_schema",
        "table_name",
        "reference_table_id",
        "reference_table_schema",
        "reference_table_name",
        "reference_table_owner_id",
    },
    "all_tables": {"schema_name", "table_id", "table_name", "table_type", "remarks"},
}


# ALL_DEPENDENCIES and ALL_OBJECTS as Oracle's Database Reference documents them (11g-23ai;
# ORACLE_MAINTAINED from 12c, read on 12c and later only).
ORACLE_DOCUMENTED = {
    "all_dependencies": {
        "owner",
        "name",
        "type",
        "referenced_owner",
        "referenced_name",
        "referenced_type",
        "referenced_link_name",
        "dependency_type",
    },
    "all_objects": {
        "owner",
        "object_name",
        "object_type",
        "status",
        "oracle_maintained",
    },
}


def test_oracle_reads_views_over_what_it_cannot_see_by_documented_columns() -> None:
    """The fake answers whatever the adapter asks, so the query is held to the documented
    columns here; and what the login sees is matched by kind too: an index or a trigger
    named as the hidden view (their own namespaces) made the view count as seen."""
    for sql in (ORACLE_UNSEEN, ORACLE_UNSEEN_11G):
        aliases = {a: table for table, a in re.findall(r"\b(all_\w+) (\w)\b", sql)}
        assert set(aliases.values()) == set(ORACLE_DOCUMENTED), sql
        for alias, column in re.findall(r"\b(\w)\.(\w+)\b", sql):
            assert column in ORACLE_DOCUMENTED[aliases[alias]], (alias, column)
        assert "o.object_type = d.referenced_type" in sql


async def test_vertica_reads_views_over_what_it_cannot_see_by_documented_columns() -> None:
    """No Vertica server runs here, so the fake answers whatever the adapter asks: the
    columns the adapter names are held to the documented ones, and a server that refuses
    the query (a column it lacks) fails the connect, rather than leave such views unread."""
    aliases = {a: table for table, a in re.findall(r"v_catalog\.(\w+) (\w+)\b", VERTICA_UNSEEN)}
    assert set(aliases.values()) == set(VERTICA_DOCUMENTED)
    named = re.findall(r"\b(\w+)\.(\w+)\b", VERTICA_UNSEEN)
    for alias, column in named:
        if alias != "v_catalog":
            assert column in VERTICA_DOCUMENTED[aliases[alias]], (alias, column)
    driver = FakeDriver()
    driver.fail_on, driver.fail_message = "v_catalog.view_tables", 'Column "x" does not exist'
    db = VerticaDatabase("vx", VERTICA, driver=driver)
    with pytest.raises(DatabaseError, match="does not exist"):
        await db.query("SELECT * FROM t", max_rows=1, timeout=1)
    assert "SELECT * FROM t" not in driver.log


async def test_a_database_link_is_refused_by_the_check_alone() -> None:
    """``users@prod_link`` reads another database: the read-only transaction does not stop a
    distributed read, so without the check the statement reaches the server."""
    driver = FakeDriver()
    unchecked = OracleDatabase("ora", ORACLE, driver=driver, check_statements=False)
    await unchecked.query("SELECT * FROM users@prod_link", max_rows=1, timeout=1)
    assert "SELECT * FROM users@prod_link" in driver.log
    with pytest.raises(StatementRefused, match="reads another database through a database link"):
        await OracleDatabase("ora", ORACLE, driver=driver).query(
            "SELECT * FROM users@prod_link", max_rows=1, timeout=1
        )


async def test_a_vertica_sequence_advanced_without_parentheses_is_refused() -> None:
    """``seq.NEXTVAL`` is Vertica's other spelling of ``NEXTVAL('seq')``: it advances the
    sequence for every session, and it names no function, so without the rule it reaches
    the server as ``NEXTVAL(...)`` never does."""
    driver = FakeDriver()
    unchecked = VerticaDatabase("vx", VERTICA, driver=driver, check_statements=False)
    for sql in ("SELECT order_seq.NEXTVAL", 'SELECT app.order_seq."nextval" FROM t'):
        await unchecked.query(sql, max_rows=1, timeout=1)
        assert sql in driver.log
        with pytest.raises(StatementRefused, match="names a function with side effects"):
            await VerticaDatabase("vx", VERTICA, driver=driver).query(sql, max_rows=1, timeout=1)
    # CURRVAL is the session's last value: it reads
    await VerticaDatabase("vx", VERTICA, driver=driver).query(
        "SELECT order_seq.CURRVAL", max_rows=1, timeout=1
    )
    assert "SELECT order_seq.CURRVAL" in driver.log


async def test_oracle_11g_connects_and_still_judges_synonyms_and_views() -> None:
    """11g has no ORACLE_MAINTAINED column: the 12c read failed there (ORA-00904) and no
    statement ran. 11g's read leaves out the schemas Oracle installs instead, and keeps a
    synonym named otherwise than its target (PUBLIC's over SYS.USER$) or over a link."""
    driver = FakeDriver()
    driver.version = "11.2.0.4.0"
    driver.fail_on = "oracle_maintained"
    driver.fail_message = 'ORA-00904: "O"."ORACLE_MAINTAINED": invalid identifier'
    driver.catalog[ORACLE_SYNONYMS_11G] = ORACLE_ALIASES[ORACLE_SYNONYMS]
    driver.catalog[ORACLE_VIEWS_11G] = ORACLE_ALIASES[ORACLE_VIEWS]
    driver.catalog[ORACLE_EXTERNAL] = ORACLE_ALIASES[ORACLE_EXTERNAL]
    driver.catalog[ORACLE_UNSEEN_11G] = ORACLE_ALIASES[ORACLE_UNSEEN]
    db = OracleDatabase("ora", ORACLE, driver=driver)
    try:
        for sql, said in ORACLE_REFUSED:
            with pytest.raises(StatementRefused, match=re.escape(said)):
                await db.query(sql, max_rows=1, timeout=1)
        await db.query("SELECT * FROM my_orders", max_rows=1, timeout=1)
        assert "SELECT * FROM my_orders" in driver.log
        assert not [sql for sql in driver.log if "oracle_maintained" in sql]
    finally:
        await db.aclose()
    # Oracle's own schemas and its PUBLIC synonyms by their targets' names are not read
    assert "'SYS'," in ORACLE_VIEWS_11G
    assert "'SYSTEM'," in ORACLE_VIEWS_11G
    assert "s.synonym_name <> s.table_name" in ORACLE_SYNONYMS_11G


@pytest.mark.parametrize(
    ("cls", "config", "relations", "version", "made", "sql", "said"),
    [
        (
            OracleDatabase,
            ORACLE,
            ORACLE_SYNONYMS,
            ORACLE_VERSION,
            [("USERS_PW", "SYS", "USER$", None)],  # CREATE PUBLIC SYNONYM users_pw ...
            "SELECT name, spare4 FROM users_pw",
            "USER$ holds password hashes",
        ),
        (
            VerticaDatabase,
            VERTICA,
            VERTICA_RELATIONS,
            VERTICA_VERSION,
            [("pw_copy", "SELECT user_name, password, salt FROM v_catalog.passwords", "")],
            "SELECT * FROM pw_copy",
            "passwords holds password hashes",
        ),
    ],
)
async def test_a_view_or_synonym_made_while_the_connection_is_open_is_judged(
    cls: type[OracleDatabase] | type[VerticaDatabase],
    config: DatabaseConfig,
    relations: str,
    version: str,
    made: list[tuple[Any, ...]],
    sql: str,
    said: str,
) -> None:
    """The views and synonyms were read on connect only: one over a refused catalog made
    after it passed until the next connection (shown with the version read off). The
    catalog's version (Oracle: count and last DDL time of views, synonyms and tables;
    Vertica: count, create time and definitions' hash) is read before each statement, and
    the catalog again when it changed."""
    driver = FakeDriver()
    db = cls("x", config, driver=driver)
    try:
        await db.query("SELECT * FROM t", max_rows=1, timeout=1)  # connected
        driver.catalog[relations] = made
        driver.catalog[version] = [(1, _AT, _AT + datetime.timedelta(minutes=1))]
        with pytest.raises(StatementRefused, match=re.escape(said)):
            await db.query(sql, max_rows=1, timeout=1)
        assert len(driver.connections) == 1  # on the same connection
        assert driver.log.count(relations) == 2
    finally:
        await db.aclose()


_AT = datetime.datetime(2026, 11, 28, 0, 30, 0)


async def test_an_oracle_view_replaced_in_the_second_of_the_last_read_is_judged() -> None:
    """LAST_DDL_TIME is to the second: a view replaced (CREATE OR REPLACE: same count) in
    the second the catalog was last read left the version (count, newest DDL time) as it
    was, and the open connection judged the old query at every statement after. The server
    answers the version query with its clock when asked (SYSDATE), as the fake does here."""
    driver = FakeDriver()
    db = OracleDatabase("x", ORACLE, driver=driver)

    def version(now: datetime.datetime) -> list[tuple[Any, ...]]:
        return [(1, _AT, now) if "SYSDATE" in ORACLE_VERSION else (1, _AT)]

    try:
        driver.catalog[ORACLE_VERSION] = version(_AT)  # a view made in this very second
        driver.catalog[ORACLE_VIEWS] = [("REPORT", "SELECT 1 AS n FROM dual")]
        assert (await db.query("SELECT * FROM report", max_rows=1, timeout=1)).rows == ((1,),)
        # replaced in the same second, by a query of the password hashes; read a minute on
        driver.catalog[ORACLE_VIEWS] = [("REPORT", "SELECT name, spare4 FROM sys.user$")]
        driver.catalog[ORACLE_VERSION] = version(_AT + datetime.timedelta(minutes=1))
        with pytest.raises(StatementRefused, match=re.escape("USER$ holds password hashes")):
            await db.query("SELECT * FROM report", max_rows=1, timeout=1)
        assert len(driver.connections) == 1
    finally:
        await db.aclose()


async def test_two_vertica_views_that_swap_names_are_judged_by_their_new_queries() -> None:
    """The version summed the hashes of the views' queries: two views swapping names
    (ALTER VIEW ... RENAME, three times) or queries keep the count, the newest create_time
    and that sum, and the open connection judged each name by the other's query. Each
    query is now hashed with its view's name. The fake answers the version query as
    Vertica would for the text it is sent (with names in the hash, or without)."""
    driver = FakeDriver()
    db = VerticaDatabase("x", VERTICA, driver=driver)
    harmless, reads = "SELECT 1 AS n", "SELECT user_name, password, salt FROM v_catalog.passwords"

    def answer(views: list[tuple[str, str, str]]) -> None:
        hashed = "HASH(s, n, d)" in VERTICA_VERSION
        texts = (f"{n}\0{d}" if hashed else d for n, d, _ in views)
        total = sum(zlib.crc32(text.encode()) for text in texts)  # Vertica's HASH(), as a stand-in
        driver.catalog[VERTICA_RELATIONS] = views
        driver.catalog[VERTICA_VERSION] = [(len(views), _AT, total)]

    try:
        answer([("report", harmless, ""), ("pw_copy", reads, "")])
        assert (await db.query("SELECT * FROM report", max_rows=1, timeout=1)).rows == ((1,),)
        answer([("report", reads, ""), ("pw_copy", harmless, "")])  # swapped
        with pytest.raises(StatementRefused, match="passwords holds password hashes"):
            await db.query("SELECT * FROM report", max_rows=1, timeout=1)
    finally:
        await db.aclose()


@pytest.mark.parametrize("cls", [OracleDatabase, VerticaDatabase])
async def test_a_deadline_passed_while_connecting_runs_no_statement(
    cls: type[OracleDatabase] | type[VerticaDatabase], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A connection still being made when the watchdog fired (a slow server, a loaded
    machine) had no connection to cancel on, and its statement then began on it, out of every
    cancel's reach, running on until the engine's own timeout. Here the connect waits for the
    watchdog: the statement must never begin, and the next call works."""
    from rho_adapters.db import connection_slot

    fired = threading.Event()
    real_cancel = connection_slot.ConnectionSlot._cancel_quietly

    def cancel_and_tell(self: Any, conn: Any) -> None:
        real_cancel(self, conn)
        fired.set()

    monkeypatch.setattr(connection_slot.ConnectionSlot, "_cancel_quietly", cancel_and_tell)

    class SlowToConnect(FakeDriver):
        def connect(self, **kwargs: Any) -> FakeConnection:
            if not self.connections:
                assert fired.wait(30), "the watchdog never fired"
            return super().connect(**kwargs)

    driver = SlowToConnect()
    db = cls("x", ORACLE if cls is OracleDatabase else VERTICA, driver=driver)
    with pytest.raises(StatementTimeout, match="while its connection was being made"):
        await db.query("SELECT hang FROM dual", max_rows=1, timeout=0.05)
    assert "SELECT hang FROM dual" not in driver.log
    assert (await db.query("SELECT 1 FROM dual", max_rows=1, timeout=1)).rows == ((1,),)
