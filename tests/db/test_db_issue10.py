"""Regression tests for issue 10 (the readonly promise), SQL items 11-16, on real engines.

Each test reproduces the reported failure; on the code before the fix it fails (rows
deleted, a lock or variable left on the connection, a timeout overrun, a legit query
refused)."""

from __future__ import annotations

import asyncio
import gc
import logging
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from db_support import Server, adapter, checksum
from test_db_engines import SLOW
from test_db_fake_dbapi import VERTICA, FakeDriver

from rho_adapters.db import StatementTimeout
from rho_adapters.db.mysql import MysqlDatabase
from rho_adapters.db.mysql_tls import tls_context, tls_mode
from rho_adapters.db.vertica import VerticaDatabase
from rho_domain.config import DatabaseConfig
from rho_domain.errors import ConfigError, DatabaseError, StatementRefused
from rho_domain.permissions import readonly_profile
from rho_domain.ports.database import QueryResult
from rho_domain.tools.database import database_tools

# How long a call with a timeout of a second or less may take before it counts as hung. Not a
# margin past the timeout: at a load of 12 on 2 cores a server process waits for a core for
# longer than any such margin; the timeout error itself (the engine's or the watchdog's) is
# the evidence that the deadline, not the statement's end, stopped it.
HUNG = 30.0


async def _refused_by_check(server: Server, sql: str) -> StatementRefused:
    db = adapter(server)
    try:
        with pytest.raises(StatementRefused) as info:
            await db.query(sql, max_rows=5, timeout=5)
    finally:
        await db.aclose()
    assert info.value.by == "check", str(info.value)
    return info.value


@pytest.fixture
def pg_extensions(postgres_server: Server) -> Server:
    conn = postgres_server.admin()
    conn.autocommit = True
    conn.execute("CREATE EXTENSION IF NOT EXISTS dblink")
    conn.execute("CREATE EXTENSION IF NOT EXISTS adminpack")
    conn.close()
    return postgres_server


async def test_item_11_unicode_escaped_names_cannot_call_denied_functions(
    pg_extensions: Server, tmp_path: Path
) -> None:
    server = pg_extensions
    tmp_path.chmod(0o777)
    connstr = f"host=127.0.0.1 port={server.config.port} user=postgres dbname=rho"
    before = checksum(server)
    for sql in [
        f"SELECT U&\"\\0064blink_exec\"('{connstr}', 'DELETE FROM orders')",
        f"SELECT * FROM U&\"d\\+00006Cink\"('{connstr}', 'DELETE FROM orders') AS t(x text)",
        "SELECT U&\"pg_r\\0065ad_file\"('/etc/hostname')",
        "SELECT * FROM U&\"!0070g_ls_dir\" UESCAPE '!' ('.')",
        "SELECT U&\"pg_file_\\0077rite\"('rho-evil.txt', 'x', false)",
        f"SELECT U&\"lo_e\\0078port\"(lo_import('/etc/hostname'), '{tmp_path}/lo')",
        'SELECT U&"pg_\\0074erminate_backend"(pg_backend_pid())',
        'SELECT U&"pg_advisory_\\006Cock"(11)',
        "SELECT ('/etc/hostname'::text).U&\"pg_r\\0065ad_file\"",
    ]:
        await _refused_by_check(server, sql)
    assert checksum(server) == before
    assert list(tmp_path.iterdir()) == []


async def test_item_11_postgres_session_state_does_not_outlive_a_call(
    postgres_server: Server,
) -> None:
    db = adapter(postgres_server, check=False)  # the engine wall alone
    try:
        await db.query("SELECT pg_advisory_lock(4242)", max_rows=1, timeout=5)
        await db.query("PREPARE rho_p AS SELECT 1", max_rows=1, timeout=5)
        left = await db.query(
            "SELECT count(*) FROM pg_prepared_statements WHERE name = 'rho_p'",
            max_rows=1,
            timeout=5,
        )
        assert left.rows == ((0,),)
        conn = postgres_server.admin()
        try:
            locks = conn.execute(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'"
            ).fetchone()
        finally:
            conn.close()
        assert locks == (0,)
    finally:
        await db.aclose()


@pytest.mark.parametrize(
    "sql",
    [
        'SELECT U&"\\0043LOSE_ALL_SESSIONS"()',
        "SELECT U&\"!0043LOSE_ALL_SESSIONS\" UESCAPE '!' ()",
        'SELECT "close_all_sessions"()',
        "SELECT v_catalog.close_all_sessions()",
    ],
)
async def test_item_12_vertica_unicode_identifier_is_decoded(sql: str) -> None:
    driver = FakeDriver()
    db = VerticaDatabase("vx", VERTICA, driver=driver)
    with pytest.raises(StatementRefused, match="close_all_sessions"):
        await db.query(sql, max_rows=1, timeout=1)
    assert driver.log == []


async def test_item_13_mariadb_assignments_are_refused_and_state_is_reset(
    mariadb_server: Server,
) -> None:
    await _refused_by_check(mariadb_server, "SELECT @evil := 1")
    await _refused_by_check(mariadb_server, "SET @evil = 1")
    db = adapter(mariadb_server, check=False)  # even if a statement got through...
    try:
        await db.query("SELECT @evil := 1", max_rows=1, timeout=5)
        await db.query("SELECT GET_LOCK('rho-lock', 0)", max_rows=1, timeout=5)
        await db.query("HANDLER users OPEN", max_rows=1, timeout=5)
        after = await db.query("SELECT @evil, 'é😀'", max_rows=1, timeout=5)
        # ...the next call starts from a clean session, still speaking utf8mb4.
        assert after.rows == ((None, "é😀"),)
        with pytest.raises(DatabaseError, match="Unknown table"):
            await db.query("HANDLER users READ FIRST", max_rows=1, timeout=5)
    finally:
        await db.aclose()
    conn = mariadb_server.admin()
    try:
        cursor = conn.cursor()
        cursor.execute("SELECT IS_FREE_LOCK('rho-lock')")
        assert cursor.fetchone() == (1,)
    finally:
        conn.close()


DOUBLING = (
    "WITH RECURSIVE c(x) AS (SELECT 'a' UNION ALL SELECT x || x FROM c) "
    "SELECT max(length(x)) FROM c"
)


async def test_item_14_sqlite_string_doubling_stops_within_the_timeout(
    sqlite_server: Server,
) -> None:
    db = adapter(sqlite_server)
    try:
        started = time.monotonic()
        with pytest.raises(DatabaseError):
            await db.query(DOUBLING, max_rows=1, timeout=1.0)
        assert time.monotonic() - started < HUNG  # 2^n bytes: it never ends by itself
    finally:
        await db.aclose()


SLOW_FETCH = {
    "sqlite": SLOW["sqlite"],
    # DECLARE returns at once; the FETCH is what runs long.
    "postgres": "SELECT x FROM generate_series(1, 1000000000) AS x WHERE x = 999999999",
    "mysql": SLOW["mysql"],
}


@pytest.mark.parametrize("slow", [SLOW, SLOW_FETCH], ids=["count", "fetch"])
async def test_item_14_every_engine_times_out_within_a_small_margin(
    server: Server, slow: dict[str, str]
) -> None:
    db = adapter(server)
    try:
        await db.query("SELECT 1", max_rows=1, timeout=5)  # connect outside the measurement
        started = time.monotonic()
        with pytest.raises(StatementTimeout):
            await db.query(slow[server.engine], max_rows=1, timeout=0.5)
        elapsed = time.monotonic() - started
        assert elapsed < HUNG, f"{server.engine}: {elapsed:.3f} s for a 0.5 s timeout"
        again = await db.query("SELECT count(*) FROM users", max_rows=1, timeout=5)
        assert again.rows == ((20,),)
    finally:
        await db.aclose()


@pytest.fixture
def asyncio_errors(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    with caplog.at_level(logging.ERROR, logger="asyncio"):
        yield caplog


async def test_item_14_an_abandoned_call_leaves_no_noise(
    sqlite_server: Server, asyncio_errors: pytest.LogCaptureFixture
) -> None:
    db = adapter(sqlite_server)
    with pytest.raises(TimeoutError):
        # The caller gives up first: the adapter interrupts SQLite and drops the connection.
        await asyncio.wait_for(db.query(SLOW["sqlite"], max_rows=1, timeout=30), 0.3)
    await db.aclose()
    await asyncio.get_running_loop().shutdown_default_executor()  # the thread has finished
    gc.collect()
    assert "never retrieved" not in asyncio_errors.text


async def test_item_15_mysql_lexes_for_the_servers_sql_mode(mariadb_server: Server) -> None:
    db = adapter(mariadb_server)
    try:
        result = await db.query(
            "SELECT name FROM users WHERE name = 'O\\'Brien'", max_rows=1, timeout=5
        )
        assert result.rows == ()
    finally:
        await db.aclose()
    admin = mariadb_server.admin()
    cursor = admin.cursor()
    cursor.execute("SELECT @@GLOBAL.sql_mode")
    (saved,) = cursor.fetchone()
    cursor.execute("SET GLOBAL sql_mode = 'NO_BACKSLASH_ESCAPES,ANSI_QUOTES'")
    try:
        # Under NO_BACKSLASH_ESCAPES the backslash ends nothing: a DELETE follows.
        await _refused_by_check(mariadb_server, "SELECT 'a\\'; DELETE FROM users; -- '")
        await _refused_by_check(mariadb_server, 'SELECT "sleep"(0)')  # ANSI_QUOTES: a name
        db = adapter(mariadb_server)
        try:
            names = await db.query('SELECT "name" FROM users ORDER BY id', max_rows=1, timeout=5)
            assert names.rows == (("user1",),)
        finally:
            await db.aclose()
    finally:
        cursor.execute("SET GLOBAL sql_mode = %s", (saved,))
        admin.close()


def test_mysql_tls_setting_defaults_secure_and_shares_one_context() -> None:
    remote = DatabaseConfig(engine="mysql", host="db.example.com", database="app")
    local = DatabaseConfig(engine="mysql", host="127.0.0.1", database="app")
    assert tls_mode(remote, "r") == "verify"
    assert tls_mode(local, "l") == "off"
    sock = DatabaseConfig(engine="mysql", database="a", options={"unix_socket": "/run/m.sock"})
    assert tls_mode(sock, "s") == "off"
    with pytest.raises(ConfigError, match="loopback"):
        tls_mode(DatabaseConfig(engine="mysql", host="db", options={"tls": "off"}), "r")
    with pytest.raises(ConfigError, match=r"options\.tls"):
        tls_mode(DatabaseConfig(engine="mysql", host="db", options={"tls": "maybe"}), "r")
    assert tls_context("verify", None) is tls_context("verify", None)
    assert tls_context("required", None).check_hostname is False


async def test_mysql_connections_cost_no_tls_setup_on_loopback(mariadb_server: Server) -> None:
    db = MysqlDatabase("t", mariadb_server.config)
    cpu = time.process_time()
    try:
        for _ in range(10):
            await db.query("SELECT 1", max_rows=1, timeout=5)
            await db.aclose()  # the next query connects again
    finally:
        await db.aclose()
    per_connection = (time.process_time() - cpu) / 10
    assert per_connection < 0.010, f"{per_connection * 1000:.1f} ms CPU per connection"


async def test_allowed_functions_admit_a_vetted_user_function(postgres_server: Server) -> None:
    admin = postgres_server.admin()
    admin.autocommit = True
    admin.execute(
        "CREATE OR REPLACE FUNCTION public.rho_safe() RETURNS int AS 'SELECT 1' LANGUAGE sql"
    )
    admin.close()
    await _refused_by_check(postgres_server, "SELECT public.rho_safe()")
    config = DatabaseConfig(
        engine="postgres",
        host=postgres_server.config.host,
        port=postgres_server.config.port,
        user="postgres",
        database="rho",
        options={"allowed_functions": ["public.rho_safe"]},
    )
    (tool,) = database_tools({"t": config}, readonly_profile())
    assert not tool.policy_for({"operation": "query", "sql": "SELECT public.rho_safe()"}).dangerous
    db = adapter(Server("postgres", config, postgres_server.admin, postgres_server.workdir))
    try:
        result = await db.query("SELECT public.rho_safe()", max_rows=1, timeout=5)
    finally:
        await db.aclose()
    assert result.rows == ((1,),)
    with pytest.raises(ConfigError, match="allowed_functions"):
        adapter(
            Server(
                "postgres",
                DatabaseConfig(engine="postgres", database="x", options={"allowed_functions": "f"}),
                postgres_server.admin,
                postgres_server.workdir,
            )
        )


# Volatile pg_catalog functions on the allowlist, each reviewed: they read state (sizes, WAL
# positions, control data, the current query) or return fresh values, and change nothing.
REVIEWED_VOLATILE = frozenset(
    [
        "clock_timestamp",
        "current_query",
        "currval",
        "gen_random_uuid",
        "pg_blocking_pids",
        "pg_control_checkpoint",
        "pg_control_init",
        "pg_control_recovery",
        "pg_control_system",
        "pg_current_logfile",
        "pg_current_wal_flush_lsn",
        "pg_current_wal_insert_lsn",
        "pg_current_wal_lsn",
        "pg_database_size",
        "pg_get_backend_memory_contexts",
        "pg_get_wal_replay_pause_state",
        "pg_indexes_size",
        "pg_is_in_recovery",
        "pg_is_wal_replay_paused",
        "pg_jit_available",
        "pg_last_committed_xact",
        "pg_last_wal_receive_lsn",
        "pg_last_wal_replay_lsn",
        "pg_last_xact_replay_timestamp",
        "pg_notification_queue_usage",
        "pg_partition_ancestors",
        "pg_partition_tree",
        "pg_relation_size",
        "pg_safe_snapshot_blocking_pids",
        "pg_table_size",
        "pg_tablespace_size",
        "pg_total_relation_size",
        "pg_xact_commit_timestamp",
        "pg_xact_status",
        "random",
        "timeofday",
    ]
)


def test_item_11_every_volatile_allowlisted_function_was_reviewed(
    postgres_server: Server,
) -> None:
    """The PostgreSQL allowlist against the real catalog: a volatile function (one that may
    act) is on it only after review, and none runs with its owner's rights."""
    from rho_domain.sql.postgres_functions import POSTGRES_FUNCTIONS

    conn = postgres_server.admin()
    try:
        rows = conn.execute(
            "SELECT proname, bool_or(provolatile = 'v'), bool_or(prosecdef) FROM pg_proc p "
            "JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'pg_catalog' "
            "GROUP BY proname"
        ).fetchall()
    finally:
        conn.close()
    volatile = {name for name, vol, _ in rows if vol} & POSTGRES_FUNCTIONS
    assert volatile == REVIEWED_VOLATILE
    assert not {name for name, _, definer in rows if definer} & POSTGRES_FUNCTIONS


async def test_item_11_a_name_the_server_lacks_never_reaches_a_user_function(
    postgres_server: Server, mariadb_server: Server
) -> None:
    """array_shuffle is built into PostgreSQL 17, not 15: on 15, ``array_shuffle(x)`` would
    call a user function of that name. The adapter narrows the allowlist to the server's
    pg_catalog, and to the MariaDB or MySQL flavour."""
    admin = postgres_server.admin()
    admin.autocommit = True
    admin.execute(
        "CREATE OR REPLACE FUNCTION public.array_shuffle(int[]) RETURNS int[] "
        "AS 'SELECT $1' LANGUAGE sql"
    )
    version = admin.info.server_version
    admin.close()
    if version < 170000:
        await _refused_by_check(postgres_server, "SELECT array_shuffle(ARRAY[1, 2])")
    await _refused_by_check(mariadb_server, "SELECT regexp_like('a', 'a')")  # MySQL-only
    db = adapter(mariadb_server)
    try:
        result = await db.query("SELECT natural_sort_key('a1')", max_rows=1, timeout=5)
    finally:
        await db.aclose()
    assert result.rows


async def test_item_11_pg_catalog_is_searched_first_whatever_the_configuration(
    postgres_server: Server,
) -> None:
    admin = postgres_server.admin()
    admin.autocommit = True
    admin.execute(
        "CREATE OR REPLACE FUNCTION public.lower(text) RETURNS text AS 'SELECT ''evil''' "
        "LANGUAGE sql"
    )
    admin.execute("ALTER DATABASE rho SET search_path = public, pg_catalog")
    db = adapter(postgres_server)
    try:
        for _ in range(2):  # also after the reset between calls
            shown = await db.query("SELECT current_schemas(true)", max_rows=1, timeout=5)
            assert str(shown.rows[0][0]).lstrip("{[").startswith("pg_catalog"), shown.rows
            # and a user function of a built-in's name is refused whatever the path: the
            # server picks it when its argument types match better (varsql15b)
            with pytest.raises(StatementRefused, match=r"calls public\.lower\(\)"):
                await db.query("SELECT lower('X')", max_rows=1, timeout=5)
    finally:
        await db.aclose()
        admin.execute("ALTER DATABASE rho RESET search_path")
        admin.execute("DROP FUNCTION public.lower(text)")
        admin.close()


def test_item_11_every_mariadb_allowlisted_name_is_built_in(mariadb_server: Server) -> None:
    """An allowlisted name MariaDB does not build in would call a stored function of the same
    name in the current database (error 1305 when none exists): there must be none."""
    import pymysql

    from rho_domain.sql.functions import MYSQL_FUNCTIONS, MYSQL_ONLY

    conn = mariadb_server.admin()
    missing = []
    try:
        cursor = conn.cursor()
        for name in sorted(MYSQL_FUNCTIONS - MYSQL_ONLY):
            try:
                cursor.execute(f"SELECT {name}()")
                cursor.fetchall()
            except pymysql.err.MySQLError as exc:
                if exc.args[0] == 1305:  # FUNCTION rho.<name> does not exist
                    missing.append(name)
    finally:
        conn.close()
    assert missing == []


async def test_the_pg_catalog_list_is_read_once_per_server_and_kept_a_while(
    postgres_server: Server,
) -> None:
    """Each Session's connection narrows the allowlist with the server's function list; the
    list is read on the first connection to a server and version and kept
    ``CATALOG_SECONDS``, not read again by every connection."""
    from rho_adapters.db import pg_catalog_calls as catalog

    async def lower() -> QueryResult:
        db = adapter(postgres_server)
        try:
            return await db.query("SELECT lower('A')", max_rows=1, timeout=5)
        finally:
            await db.aclose()

    catalog._catalogs.clear()
    assert (await lower()).rows == (("a",),)
    (key,) = catalog._catalogs
    stamp, names = catalog._catalogs[key]
    assert "lower" in names
    assert len(names) > 1_000
    # The next connection uses the kept list: a list without lower() refuses it.
    catalog._catalogs[key] = (stamp, names - {"lower"})
    with pytest.raises(StatementRefused, match=r"lower\(\)"):
        await lower()
    # Once the list is older than CATALOG_SECONDS the server is asked again.
    catalog._catalogs[key] = (stamp - catalog.CATALOG_SECONDS - 1, names - {"lower"})
    assert (await lower()).rows == (("a",),)
    assert "lower" in catalog._catalogs[key][1]


def test_the_unicode_escape_table_is_what_postgresql_decodes(postgres_server: Server) -> None:
    """The lexer's table of U& edges (test_db_units.UNICODE_ESCAPES) against the server: each
    decoded body is what PostgreSQL returns for ``U&'body'``, each refused one an error."""
    from test_db_units import _ESCAPE, _PAIR, _VALUE, UNICODE_ESCAPES

    conn = postgres_server.admin()
    conn.autocommit = True
    try:
        for body, expected in UNICODE_ESCAPES:
            literal = "U&'" + body.replace("'", "''") + "'"
            if expected in (_PAIR, _VALUE, _ESCAPE):
                with pytest.raises(Exception, match=r"(?i)unicode|escape|surrogate"):
                    conn.execute(f"SELECT {literal}")
            else:
                row = conn.execute(f"SELECT {literal}").fetchone()
                assert row is not None
                assert row[0] == expected, body
    finally:
        conn.close()
