"""Catalogs holding password hashes or stored credentials, read by a privileged login.

The agent's login is often the administrator's (the test servers' is a superuser, as on
many a developer's machine): ``SELECT rolname, rolpassword FROM pg_authid`` returned every
role's SCRAM verifier, ``pg_user_mappings`` a foreign server's password, MariaDB's
``mysql.user`` and ``mysql.global_priv`` the accounts' hashes (``mysql_native_password``
logs in with the hash alone), ``mysql.servers`` a FEDERATED server's password: the
statements name no function, so the check let them through, and the read-only transaction
does not stop a read. The secrets policy keeps these tables' files from the shell
(``global/1260``); now the check refuses the relations by name, in every spelling, and
the two SHOWs. The options a foreign-data wrapper keeps a password in were read by other
names: ``information_schema.user_mapping_options`` (every mapping's, to a superuser) and
``pg_foreign_server.srvoptions`` (any login's, for a wrapper that takes a password or a
connection string there); they are refused with the wrappers', servers' and tables' options.

Their column statistics hold the same values: after an ``ANALYZE`` (``vacuumdb --analyze``,
autovacuum), ``SELECT histogram_bounds FROM pg_stats WHERE tablename = 'pg_authid'`` passed
the check and listed every role's SCRAM verifier (``pg_statistic`` alike). Now the
statistics are refused to every login: ``pg_stats`` shows a plain login only the columns
it may read, but every login reads ``pg_foreign_server``, whose options' histogram showed it
a server's password (``srvoptions`` itself is refused by name).
MariaDB's ``mysql.column_stats`` (after ``ANALYZE TABLE mysql.servers PERSISTENT FOR
ALL``) gave the FEDERATED server's password as its column's min and max values; it is
refused by name with ``mysql.servers`` (and MySQL 8's ``COLUMN_STATISTICS`` histograms).
"""

from __future__ import annotations

from collections.abc import Iterator

import attrs
import pytest
from db_support import Server, adapter, own_pg_database

from rho_adapters.db import ADAPTERS
from rho_domain.errors import StatementRefused
from rho_domain.permissions import DatabaseMode
from rho_domain.sql import classify

DB = "rho_secret_catalogs"
PG_SETUP = [
    "CREATE FOREIGN DATA WRAPPER rho_w",
    # a wrapper without a validator keeps any option: a server's password too
    "CREATE SERVER rho_s FOREIGN DATA WRAPPER rho_w OPTIONS (dsn 'u:srv-sekret@db')",
    "CREATE USER MAPPING FOR postgres SERVER rho_s OPTIONS (user 'u', password 'fdw-sekret')",
    # and a foreign table's column keeps any option too
    "CREATE FOREIGN TABLE rho_ft (a int OPTIONS (password 'col-sekret')) SERVER rho_s",
    # an administrator's view over one: judged by its query where it is named
    "CREATE VIEW accounts AS SELECT rolname AS who, rolpassword AS secret FROM pg_authid",
    "CREATE VIEW stats_copy AS SELECT histogram_bounds::text AS bounds FROM pg_stats "
    "WHERE attname = 'rolpassword'",
    "ANALYZE pg_authid",  # two verifiers, rho_hash's and rho_hash2's: a histogram's bounds
    # two servers' options: a histogram's bounds any login reads
    "CREATE SERVER rho_s2 FOREIGN DATA WRAPPER rho_w OPTIONS (dsn 'u:other@db')",
    "ANALYZE pg_foreign_server",
]
# (statement, the relation the refusal names, what the server gives without the check)
PG_READS = [
    ("SELECT rolname, rolpassword FROM pg_authid", "pg_authid", "SCRAM-SHA-256$"),
    ('SELECT passwd FROM pg_catalog."pg_shadow"', "pg_shadow", "SCRAM-SHA-256$"),
    ("SELECT umoptions FROM PG_USER_MAPPINGS", "pg_user_mappings", "fdw-sekret"),
    ("WITH m AS (SELECT umoptions FROM pg_user_mapping) TABLE m", "pg_user_mapping", "fdw-sekret"),
    ("SELECT secret FROM accounts", "pg_authid", "SCRAM-SHA-256$"),
    (
        "SELECT histogram_bounds FROM pg_stats WHERE tablename = 'pg_authid'",
        "pg_stats",
        "SCRAM-SHA-256$",
    ),
    ("SELECT stavalues1 FROM pg_statistic WHERE starelid = 1260", "pg_statistic", "SCRAM"),
    ("SELECT bounds FROM stats_copy", "pg_stats", "SCRAM-SHA-256$"),
]
# The options of foreign servers and user mappings, by the catalog and information_schema
# (the check let every one through; pg_foreign_server is every login's to read)
PG_OPTIONS = [
    ("SELECT srvoptions FROM pg_foreign_server", "pg_foreign_server", "srv-sekret"),
    ("SELECT * FROM information_schema.foreign_server_options", "foreign_server_", "srv-sekret"),
    ("SELECT srvoptions FROM information_schema._pg_foreign_servers", "_pg_fo", "srv-sekret"),
    ("SELECT option_value FROM information_schema.user_mapping_options", "user_map", "fdw-sekret"),
    ("TABLE information_schema._pg_user_mappings", "_pg_user_mappings", "fdw-sekret"),
    # the same rows by functions over them and other spellings of the name (held already)
    ("SELECT to_jsonb(s.*) FROM pg_catalog.pg_foreign_server s", "pg_foreign_s", "srv-sekret"),
    (
        "SELECT * FROM pg_options_to_table((SELECT srvoptions FROM pg_foreign_server LIMIT 1))",
        "pg_foreign_server",
        "srv-sekret",
    ),
    ('TABLE U&"pg_foreign_\\0073erver"', "pg_foreign_server", "srv-sekret"),
]
# The options of a foreign table's columns (the check let every one through): by name, and
# in pg_attribute's whole rows, where no column is named
PG_COLUMN_OPTIONS = [
    ("SELECT attname, attfdwoptions FROM pg_attribute WHERE attrelid >= 16384", "attfdwoptions"),
    ("SELECT * FROM information_schema.column_options", "column_options"),
    ("TABLE information_schema._pg_foreign_table_columns", "_pg_foreign_table_columns"),
    ("SELECT a.* FROM pg_attribute a WHERE attrelid = 'rho_ft'::regclass", "rho_ft: attfdw"),
    ("SELECT row_to_json(a) FROM pg_catalog.pg_attribute a WHERE attrelid >= 16384", "rho_ft"),
]
MY_SETUP = [
    "DROP USER IF EXISTS rho_hash@localhost",
    "CREATE USER rho_hash@localhost IDENTIFIED BY 'sekret'",
    "DROP SERVER IF EXISTS rho_fed",
    "CREATE SERVER rho_fed FOREIGN DATA WRAPPER mysql "
    "OPTIONS (HOST '127.0.0.1', USER 'u', PASSWORD 'fed-sekret')",
    "ANALYZE TABLE mysql.servers PERSISTENT FOR ALL",  # each column's min and max values
]
MY_TEARDOWN = [
    "DROP USER IF EXISTS rho_hash@localhost",
    "DROP SERVER IF EXISTS rho_fed",
    "DELETE FROM mysql.column_stats WHERE db_name = 'mysql' AND table_name = 'servers'",
]
MY_READS = [
    ("SELECT User, authentication_string FROM mysql.user", "mysql.user", "'rho_hash', '*"),
    ("SELECT Priv FROM `mysql` . `global_priv`", "global_priv", "authentication_string"),
    ("SELECT Password FROM mysql.servers", "mysql.servers", "fed-sekret"),
    ("SELECT max_value FROM mysql.column_stats", "mysql.column_stats", "fed-sekret"),
    ("SHOW GRANTS FOR rho_hash@localhost", "SHOW GRANTS shows password", "PASSWORD '*"),
    ("show create user rho_hash@localhost", "SHOW CREATE USER shows password", "PASSWORD '*"),
]


@pytest.fixture(scope="module")  # one database for the file
def pg_secrets(postgres_server: Server) -> Iterator[Server]:
    """``postgres_server`` with a role that has a password and a user mapping holding one,
    in a database of this file's own."""
    setup = (
        "DROP ROLE IF EXISTS rho_hash",
        "DROP ROLE IF EXISTS rho_hash2",
        "CREATE ROLE rho_hash LOGIN PASSWORD 'sekret'",
        "CREATE ROLE rho_hash2 PASSWORD 'sekret2'",
    )
    roles = ("rho_hash", "rho_hash2")
    with own_pg_database(postgres_server, DB, (*setup, *PG_SETUP), roles=roles) as server:
        yield server


@pytest.fixture
def my_secrets(mariadb_server: Server) -> Iterator[Server]:
    conn = mariadb_server.admin()
    cursor = conn.cursor()
    for sql in MY_SETUP:
        cursor.execute(sql)
        cursor.fetchall()  # ANALYZE answers with rows
    try:
        yield mariadb_server
    finally:
        for sql in MY_TEARDOWN:
            cursor.execute(sql)
        conn.close()


async def _refused_by_the_check(
    server: Server, reads: list[tuple[str, str, str]], why: str = "password hashes"
) -> None:
    db = adapter(server)
    try:
        for sql, relation, _ in reads:
            with pytest.raises(StatementRefused) as info:
                await db.query(sql, max_rows=5, timeout=5)
            assert info.value.by == "check", (sql, info.value)
            assert relation in str(info.value), sql
            assert why in str(info.value), sql
    finally:
        await db.aclose()


async def _read_without_the_check(server: Server, reads: list[tuple[str, str, str]]) -> None:
    db = adapter(server, check=False)
    try:
        for sql, _, shown in reads:
            rows = repr((await db.query(sql, max_rows=50, timeout=5)).rows)
            assert shown in rows, (sql, rows[:300])
    finally:
        await db.aclose()


async def test_postgres_catalogs_of_credentials_are_refused(pg_secrets: Server) -> None:
    await _refused_by_the_check(pg_secrets, PG_READS)
    db = adapter(pg_secrets)
    try:  # the views that mask the password still answer
        result = await db.query(
            "SELECT rolpassword FROM pg_roles WHERE rolname = 'rho_hash'", max_rows=1, timeout=5
        )
        assert result.rows == (("********",),)
    finally:
        await db.aclose()
    plain_config = attrs.evolve(pg_secrets.config, user="rho_hash")
    plain = ADAPTERS["postgres"]("p", plain_config, mode=DatabaseMode.READONLY, password="pw")
    unchecked = ADAPTERS["postgres"](
        "p", plain_config, mode=DatabaseMode.READONLY, password="pw", check_statements=False
    )
    sql = "SELECT histogram_bounds::text FROM pg_stats WHERE attname = 'srvoptions'"
    try:  # a login that may not read pg_authid reads pg_foreign_server, and its statistics
        assert "srv-sekret" in repr((await unchecked.query(sql, max_rows=5, timeout=5)).rows)
        with pytest.raises(StatementRefused, match="pg_stats holds the most common") as info:
            await plain.query(sql, max_rows=5, timeout=5)
        assert info.value.by == "check"
    finally:
        await plain.aclose()
        await unchecked.aclose()


async def test_without_the_check_postgres_gives_the_credentials(pg_secrets: Server) -> None:
    """The target is real: the read-only transaction returns the verifier and password."""
    await _read_without_the_check(pg_secrets, PG_READS + PG_OPTIONS)


async def test_postgres_options_of_foreign_servers_and_mappings_are_refused(
    pg_secrets: Server,
) -> None:
    """``information_schema.user_mapping_options`` gave a superuser every user mapping's
    password (``pg_user_mappings`` was refused, its information_schema twin not), and
    ``pg_foreign_server.srvoptions`` any login a server's, where a wrapper keeps one. The
    views that name the same objects without their options still answer."""
    await _refused_by_the_check(pg_secrets, PG_OPTIONS, why="a wrapper keeps a login's password")
    db = adapter(pg_secrets)
    try:
        sql = "SELECT foreign_server_name FROM information_schema.foreign_servers ORDER BY 1"
        assert (await db.query(sql, max_rows=5, timeout=5)).rows == (("rho_s",), ("rho_s2",))
        sql = "SELECT authorization_identifier FROM information_schema.user_mappings"
        assert (await db.query(sql, max_rows=5, timeout=5)).rows == (("postgres",),)
    finally:
        await db.aclose()


async def test_postgres_options_of_foreign_table_columns_are_refused(
    pg_secrets: Server, postgres_server: Server
) -> None:
    """A column of a foreign table keeps options as its server does (``attfdwoptions``: any
    option, for a wrapper without a validator): ``information_schema.column_options`` and
    ``pg_attribute`` gave the password 'col-sekret' to the check's login. Now their names are
    refused, and ``pg_attribute`` itself in a database where a column has options (a whole
    row shows them); a database without keeps it."""
    reads = [(sql, "", "col-sekret") for sql, _ in PG_COLUMN_OPTIONS]
    await _read_without_the_check(pg_secrets, reads)
    db = adapter(pg_secrets)
    try:
        for sql, said in PG_COLUMN_OPTIONS:
            with pytest.raises(StatementRefused, match="password") as info:
                await db.query(sql, max_rows=5, timeout=5)
            assert said in str(info.value), (sql, info.value)
    finally:
        await db.aclose()
    db = adapter(postgres_server)
    try:
        sql = (
            "SELECT attname FROM pg_attribute WHERE attrelid = 'pg_class'::regclass AND attnum = 1"
        )
        assert (await db.query(sql, max_rows=1, timeout=5)).rows == (("oid",),)
    finally:
        await db.aclose()


async def test_mariadb_tables_of_credentials_are_refused(my_secrets: Server) -> None:
    await _refused_by_the_check(my_secrets, MY_READS)
    db = adapter(my_secrets)
    try:  # an application's own table named user is not the server's
        result = await db.query("SELECT 1 FROM users AS user LIMIT 1", max_rows=1, timeout=5)
        assert result.rows == ((1,),)
    finally:
        await db.aclose()


async def test_without_the_check_mariadb_gives_the_hashes(my_secrets: Server) -> None:
    await _read_without_the_check(my_secrets, MY_READS)


async def test_an_alias_on_the_mysql_database_names_its_tables_alone(my_secrets: Server) -> None:
    """An alias whose database is ``mysql`` read ``SELECT Password FROM servers``: the check
    matched ``mysql.servers`` only as written so (``user`` is an application's table as often
    as the server's). Now the connection's default schema makes the bare names refused."""
    on_mysql = attrs.evolve(my_secrets, config=attrs.evolve(my_secrets.config, database="mysql"))
    reads = [
        ("SELECT Password FROM servers", "fed-sekret"),
        ("SELECT User, authentication_string FROM user", "'rho_hash', '*"),
        ("SELECT max_value FROM `column_stats`", "fed-sekret"),
    ]
    checked, unchecked = adapter(on_mysql), adapter(on_mysql, check=False)
    try:
        for sql, shown in reads:
            with pytest.raises(StatementRefused, match=r"database is mysql, so \w+ alone names"):
                await checked.query(sql, max_rows=5, timeout=5)
            rows = repr((await unchecked.query(sql, max_rows=50, timeout=5)).rows)
            assert shown in rows, (sql, rows[:300])  # the target is real
        assert (await checked.query("SELECT Db FROM db LIMIT 0", max_rows=1, timeout=5)).rows == ()
    finally:
        for db in (checked, unchecked):
            await db.aclose()


# (dialect, statement, what the refusal says) for the engines no test server runs (and
# the test MariaDB's performance_schema, which is off): the check let every one through
# (a login with SELECT ANY DICTIONARY, or Vertica's superuser, reads them)
CHECK_ONLY = [
    ("oracle", "SELECT name, spare4 FROM sys.user$", "USER$ holds password hashes"),
    # MySQL 8's old password hashes (under lower_case_table_names=1 or 2 in any case)
    ("mysql", "SELECT Password FROM MYSQL.Password_History", "mysql.password_history holds"),
    # every session's user variables (an application's SET @password = ...)
    (
        "mysql",
        "SELECT variable_value FROM performance_schema.user_variables_by_thread",
        "user_variables_by_thread shows other sessions'",
    ),
    ("oracle", 'SELECT * FROM "SYS"."LINK$"', "LINK$ holds password hashes"),
    ("oracle", "SELECT password FROM sys.user_history$", "USER_HISTORY$ holds"),
    ("oracle", "SELECT sql_text FROM gv$sql", "GV$SQL shows other sessions' statement"),
    ("oracle", "SELECT value_string FROM sys.v_$sql_bind_capture", "V_$SQL_BIND_CAPTURE"),
    # the same texts, binds and verifiers under names the list had not: a container's CDB_
    # twin of every DBA_ view, the cursors' texts and peeked binds by other views, the
    # fine-grained and common audit trails, the fixed tables a login AS SYSDBA reads
    ("oracle", "SELECT sql_text FROM cdb_hist_sqltext", "CDB_HIST_SQLTEXT shows"),
    ("oracle", 'SELECT * FROM "SYS"."CDB_UNIFIED_AUDIT_TRAIL"', "CDB_UNIFIED_AUDIT_TRAIL"),
    ("oracle", "SELECT sql_text, sql_bind FROM dba_fga_audit_trail", "DBA_FGA_AUDIT_TRAIL"),
    ("oracle", "SELECT lsqltext FROM sys.fga_log$", "FGA_LOG$ shows"),
    ("oracle", "SELECT sql_bind FROM cdb_common_audit_trail", "CDB_COMMON_AUDIT_TRAIL"),
    ("oracle", "SELECT sql_text FROM dba_audit_object", "DBA_AUDIT_OBJECT shows"),
    ("oracle", "SELECT name FROM v$db_object_cache", "V$DB_OBJECT_CACHE shows"),
    ("oracle", "SELECT sql_fulltext FROM gv$sqlarea_plan_hash", "GV$SQLAREA_PLAN_HASH"),
    ("oracle", "SELECT other_xml FROM v$sql_plan", "V$SQL_PLAN shows"),
    ("oracle", "SELECT value FROM dba_sqlset_binds", "DBA_SQLSET_BINDS shows"),
    ("oracle", "SELECT kglnaobj FROM sys.x$kglob", "X$KGLOB shows"),
    ("oracle", "SELECT spare4 FROM sys.cdb_local_adminauth$", "CDB_LOCAL_ADMINAUTH$ holds"),
    # upper-cased as Unicode does, long s is S and dotless i is I
    ("oracle", "SELECT spare4 FROM sys.u\u017fer$", "USER$ holds"),
    ("oracle", "SELECT sql_text FROM v$sqlarea_plan_hash", "V$SQLAREA_PLAN_HASH"),
    ("oracle", "SELECT sql_text FROM v$\u017fqlarea", "V$SQLAREA shows"),
    ("vertica", "SELECT user_name, password, salt FROM v_catalog.passwords", "passwords holds"),
    ("vertica", "SELECT * FROM PASSWORDS", "passwords alone names it"),
    ("vertica", "SELECT last_statement FROM sessions", "v_monitor.sessions shows other"),
    ("vertica", "SELECT request FROM v_monitor.query_requests", "query_requests shows"),
    # the Data Collector keeps every user's statements in some 200 internal tables, more
    # each release: v_internal is refused whole, its tables alone by their dc_ and vs_
    # prefixes (it is on the search path); and the views of a transaction's first statement,
    # a plan's constants, the Database Designer's queries
    ("vertica", "SELECT * FROM v_internal.dc_requests_completed", "server's internal table"),
    ("vertica", 'SELECT * FROM "V_INTERNAL"."DC_EXPLAIN_PLANS"', "server's internal table"),
    ("vertica", "SELECT request FROM dc_requests_issued", "dc_requests_issued alone names"),
    ("vertica", "SELECT * FROM vs_users", "vs_users alone names v_internal.vs_users"),
    ("vertica", "SELECT transaction_description FROM locks", "v_monitor.locks shows"),
    ("vertica", "SELECT description FROM v_monitor.transactions", "transactions shows"),
    ("vertica", "SELECT path_line FROM query_plan_profiles", "query_plan_profiles shows"),
    ("vertica", "SELECT design_query_text FROM design_queries", "design_queries shows"),
    # a key's text (a TLS private key), shown to its owner and to a login with USAGE on it
    ("vertica", "SELECT name, key FROM v_catalog.cryptographic_keys", "cryptographic_keys"),
    ("vertica", "SELECT * FROM Cryptographic_Keys", "cryptographic_keys holds"),
    # every configuration parameter's value, to a superuser: DataSSLParams and SSLPrivateKey
    # the TLS private key, AWSAuth an S3 secret key; an LDAP bind password in the
    # authentication records' parameters
    ("vertica", "SELECT current_value FROM configuration_parameters", "configuration_param"),
    ("vertica", "SELECT value FROM v_monitor.configuration_changes", "configuration_changes"),
    ("vertica", "SELECT * FROM client_auth_params", "client_auth_params holds"),
    ("vertica", "SHOW CURRENT ALL", "SHOW ... ALL shows every configuration parameter"),
    ("vertica", "SHOW DATABASE DEFAULT DataSSLParams", "DATASSLPARAMS shows a parameter"),
    ("vertica", "show current SSLPrivateKey", "SSLPRIVATEKEY shows a parameter holding"),
    ("vertica", 'SHOW NODE v_dw_node0001 "AWSAuth"', "AWSAuth shows a parameter holding"),
    ("oracle", "SELECT spare4 FROM sys . user$", "USER$ holds"),  # spaces around the dot
]


def test_oracle_and_vertica_catalogs_of_credentials_are_refused_by_the_check() -> None:
    for name, sql, said in CHECK_ONLY:
        verdict = classify(sql, name)
        assert not verdict.read_only, (name, sql)
        assert said in verdict.reason, (sql, verdict.reason)
    # an application's own tables of those names, named with their schema, still read
    for name, sql in [
        ("vertica", "SELECT * FROM public.passwords"),
        ("vertica", "SHOW CURRENT MaxClientSessions"),
        ("vertica", "SHOW SEARCH_PATH"),
        ("vertica", "SELECT * FROM app.sessions"),
        ("vertica", "SELECT * FROM public.dc_orders"),
        ("vertica", "SELECT t.dc_total FROM t"),
        ("vertica", "SELECT * FROM app.transactions"),
        ("oracle", "SELECT username FROM dba_users"),
        ("oracle", "SELECT username FROM all_users"),
        ("oracle", 'SELECT * FROM "sys"."user$"'),  # quoted, lower case: another name
        ("oracle", "SELECT sql_id, event FROM v$active_session_history"),
    ]:
        assert classify(sql, name).read_only, sql
