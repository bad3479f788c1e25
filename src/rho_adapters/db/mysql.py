"""MySQL and MariaDB through PyMySQL (extra ``mysql``).

Read-only mode: the client never enables multi-statements or
``LOCAL INFILE``; every statement runs inside ``START TRANSACTION READ ONLY`` ... ``ROLLBACK``
with a server-side statement time limit (``max_statement_time`` on MariaDB,
``max_execution_time`` on MySQL). Results stream through an unbuffered cursor; when rows are
left over, the connection is dropped rather than drained, so a million-row result costs only
the rows shown. Bytes: a value never exceeds the server's ``max_allowed_packet`` (MariaDB's
``REPEAT`` returns NULL past it), but a row may hold thousands of them, so the client reads
no row longer than ``MAX_ROW_BYTES`` (``mysql_rows.py``); cells are cut after fetching
and fetching stops at the byte budget (``results.fetch``); on MariaDB ``tmp_disk_table_size``
bounds one statement's on-disk temporary tables (``options.temp_file_limit_mb``, default
1024), and on MariaDB 11.5+ ``max_tmp_session_space_usage`` its sorts' merge files too.
Before 11.5 no session setting bounds those: the statement's time limit does (a sort of
``seq_1_to_100000000`` by a 180-character key wrote 706 MB in 10 s on the test machine),
and the server frees them when it ends the statement.

After every call the session is reset (``COM_RESET_CONNECTION``: user variables, session
variables, temporary tables, ``GET_LOCK`` locks, prepared statements), so nothing one call
sets survives into the next. The server's ``sql_mode`` is read once per connection, and the
statement check lexes for it (``NO_BACKSLASH_ESCAPES``, ``ANSI_QUOTES``, MariaDB's ``MSSQL``
with its ``[names]``) and allows only the functions built into the server's flavour (MariaDB
or MySQL) and version (``mysql_versions``). Every call sets that mode again with its time
limit: the reset gives the session the server's global settings, and a ``SET GLOBAL
sql_mode`` since the connection was made would have the server read the text otherwise
than the check did.

TLS (``options.tls``) is ``mysql_tls.py``'s; the views, virtual columns and other servers'
tables the check judges or refuses, read before each statement, ``mysql_views.py``'s.
"""

# Queries below interpolate constant SQL fragments only (noqa: S608); values are bound.
from __future__ import annotations

import socket
from collections.abc import Sequence
from typing import Any

from rho_adapters.db.base import ThreadedDatabase
from rho_adapters.db.mysql_catalog import Scope, read_catalog
from rho_adapters.db.mysql_login import INIT_CONNECT, init_connect_refusal
from rho_adapters.db.mysql_own_views import own_views
from rho_adapters.db.mysql_rows import bounded_connection
from rho_adapters.db.mysql_settings import secret_settings
from rho_adapters.db.mysql_tls import tls_kwargs
from rho_adapters.db.mysql_views import read_views
from rho_adapters.db.results import fetch, format_description
from rho_adapters.extras import missing_extra
from rho_domain.errors import DatabaseError
from rho_domain.ports.database import QueryResult
from rho_domain.sql import CatalogCalls, Verdict, dialect
from rho_domain.sql.mysql_versions import mysql_builtins, server_version
from rho_domain.sql.token_rules import default_schema_refusals

_COM_RESET_CONNECTION = 0x1F
_MODES_READ = ("NO_BACKSLASH_ESCAPES", "ANSI_QUOTES", "MSSQL")  # MSSQL: [names]


def caps_temp_space(version: str) -> bool:
    """Whether a MariaDB server of ``version`` (``5.5.5-11.5.2-MariaDB``) has
    ``max_tmp_session_space_usage`` (11.5+), which bounds a session's sort files too."""
    return server_version(version) >= (11, 5, 0)


def load_pymysql() -> Any:
    """The ``pymysql`` module, or ``MissingExtra`` naming the ``mysql`` extra."""
    try:
        import pymysql
        import pymysql.cursors
    except ImportError as exc:
        raise missing_extra("pymysql", "mysql", "MySQL/MariaDB databases") from exc
    return pymysql


class MysqlDatabase(ThreadedDatabase):
    """MySQL and MariaDB over PyMySQL (extra ``mysql``); see ``ThreadedDatabase``."""

    dialect_name = "mysql"

    def _load_driver(self) -> Any:
        return load_pymysql()

    # Why this alias's logins stopped ("": they did not): its server's init_connect, which
    # runs again at each login (mysql_login).
    _login_refused = ""

    def _open(self) -> Any:
        if self._login_refused:
            raise DatabaseError(self._login_refused)
        c, pymysql = self.config, self._module()
        socket_path = c.options.get("unix_socket")
        # (a fake driver in the tests has no connections module: its own connect)
        real = hasattr(pymysql, "connections")
        connect = bounded_connection(pymysql) if real else pymysql.connect
        return connect(
            host=c.host or "localhost",
            port=c.port or 3306,
            unix_socket=str(socket_path) if socket_path else None,
            user=c.user,
            password=self._password or "",
            database=c.database,
            charset="utf8mb4",
            autocommit=True,
            local_infile=False,  # LOAD DATA LOCAL would read client files
            client_flag=0,  # no CLIENT.MULTI_STATEMENTS: one statement per call
            connect_timeout=int(c.options.get("connect_timeout", 10)),
            cursorclass=pymysql.cursors.SSCursor,  # unbuffered: fetchmany reads only that
            **tls_kwargs(c, self.alias),
        )

    def _prepare(self, conn: Any) -> None:
        pymysql = self._module()
        conn.rho_mariadb = "mariadb" in conn.get_server_info().lower()
        conn.rho_tmp_space = conn.rho_mariadb and caps_temp_space(conn.get_server_info())
        version = server_version(conn.get_server_info())
        conn.rho_functions = mysql_builtins(mariadb=conn.rho_mariadb, version=version)
        with conn.cursor(pymysql.cursors.Cursor) as cursor:
            if self.read_only and hasattr(pymysql, "connections"):  # (not a fake driver)
                cursor.execute(INIT_CONNECT)
                (init_connect, skipped) = cursor.fetchone()
                conn.rho_init_skipped = bool(skipped)
                refusal = init_connect_refusal(
                    self.alias, str(init_connect or ""), skipped=bool(skipped)
                )
                if refusal:
                    self._login_refused = refusal
                    raise DatabaseError(refusal)
            cursor.execute("SELECT @@SESSION.sql_mode, DATABASE()")
            (sql_mode, schema) = cursor.fetchone()
            # USE is no read statement: the alias's database stays the default schema
            in_schema = default_schema_refusals(dialect("mysql"), str(schema or ""))
            conn.rho_refused = {**in_schema, **secret_settings(cursor)}
        conn.rho_sql_mode = str(sql_mode)
        conn.rho_schema = str(schema or "")
        conn.rho_scope = Scope()  # what the catalog's first reading asks (mysql_catalog)
        modes = set(conn.rho_sql_mode.upper().split(","))
        conn.rho_settings = frozenset(f"sql_mode:{m}" for m in _MODES_READ if m in modes)

    def _views(self, conn: Any) -> CatalogCalls:
        """What a read runs or reads that its text does not show (``mysql_views``). Read
        before each statement, in one (``mysql_catalog``): information_schema gives no
        version to compare, and a view made or replaced while the connection is open must
        be judged by its query of now."""
        with conn.cursor(self._module().cursors.Cursor) as cursor:
            mariadb = conn.rho_mariadb
            catalog = read_catalog(cursor, mariadb=mariadb, scope=conn.rho_scope)
            if hasattr(conn, "rho_init_skipped") and not self._login_refused:
                self._next_login(catalog.init_connect, skipped=conn.rho_init_skipped)
            own = own_views(cursor, mariadb=mariadb, hashes=catalog.own_hashes)
            calls = read_views(
                catalog,
                cursor,
                mariadb=mariadb,
                refused=dict(conn.rho_refused),
                own=own,
                schema=conn.rho_schema,
            )
            conn.rho_scope = catalog.scope  # (as read_views widened it)
            return calls

    def _next_login(self, init_connect: str, *, skipped: bool) -> None:
        """Stop the alias's logins if ``init_connect`` (the server's now) changed, since
        this connection's, to one the next login may not run (a connection is replaced
        after a result left rows unread, an error, a timeout): this connection's
        statements still read."""
        self._login_refused = init_connect_refusal(
            self.alias, init_connect, skipped=skipped, ran=False
        )

    def _catalog_calls(self, conn: Any) -> CatalogCalls | None:
        return self._views(conn) if hasattr(conn, "rho_sql_mode") else None

    def _settings(self, conn: Any) -> frozenset[str] | None:
        settings: frozenset[str] | None = getattr(conn, "rho_settings", None)
        return settings

    def _available_functions(self, conn: Any) -> frozenset[str] | None:
        # A name built into only the other server, or only into a later version of this
        # one, would call a stored function here (mysql_versions).
        functions: frozenset[str] = conn.rho_functions
        return functions

    def _reset(self, conn: Any) -> None:
        conn._execute_command(_COM_RESET_CONNECTION, b"")
        conn._read_ok_packet()

    def _interrupt(self, conn: Any) -> None:
        # Shutting the socket down wakes the thread blocked on it at once; close() from
        # another thread would race with that thread's own reads.
        sock = getattr(conn, "_sock", None)
        if sock is not None:
            sock.shutdown(socket.SHUT_RDWR)

    def _usable(self, conn: Any) -> bool:
        try:
            conn.ping(reconnect=False)
        except self._module().Error:
            return False
        return True

    def _run(
        self,
        conn: Any,
        sql: str,
        params: Sequence[Any] | None,
        verdict: Verdict,
        max_rows: int,
        timeout: float,
    ) -> QueryResult:
        with conn.cursor(self._module().cursors.Cursor) as setup:
            # the sql_mode the check read the text for (see the module's docstring)
            mode = (conn.rho_sql_mode,)
            if conn.rho_mariadb:
                limit = f"{max(timeout, 0.001):.3f}"
                setup.execute(f"SET SESSION max_statement_time = {limit}, sql_mode = %s", mode)
                # The on-disk temporary tables of one statement (GROUP BY, DISTINCT, UNION),
                # and from 11.5 its sort files too; MySQL has no session limit
                # (temptable_max_* are global).
                cap = f"{self.temp_mb() << 20}"
                also = f", max_tmp_session_space_usage = {cap}" if conn.rho_tmp_space else ""
                setup.execute(f"SET SESSION tmp_disk_table_size = {cap}{also}")
            else:
                limit = f"{max(1, int(timeout * 1000))}"
                setup.execute(f"SET SESSION max_execution_time = {limit}, sql_mode = %s", mode)
            if self.read_only:
                # The session default too: DDL commits the open transaction implicitly and
                # runs in a new one, which only the session characteristic makes read-only.
                setup.execute("SET SESSION TRANSACTION READ ONLY")
            setup.execute("START TRANSACTION READ ONLY" if self.read_only else "START TRANSACTION")
        cursor = conn.cursor()
        try:
            # args=None: no %-interpolation of the model's SQL.
            cursor.execute(sql, tuple(params) if params is not None else None)
            result = fetch(cursor, max_rows)
        except BaseException:
            self._drop(conn, cursor)  # an unbuffered cursor may be mid-result: never reuse it
            raise
        if result.more_rows:
            # Draining an unbuffered result reads every remaining row; closing the socket
            # ends the statement (and its transaction, which rolls back) at once.
            self._drop(conn, cursor)
            return result
        cursor.close()
        conn.query("ROLLBACK" if self.read_only else "COMMIT")
        return result

    def _drop(self, conn: Any, cursor: Any) -> None:
        # PyMySQL would drain the unread rows on close and again in __del__ (after the
        # socket is gone); mark the result finished so the rows are simply abandoned.
        pending = getattr(cursor, "_result", None)
        if pending is not None:
            pending.unbuffered_active = False
        cursor._result = None
        conn._result = None
        self.discard(conn)

    def _list_tables_sql(self, pattern: str, schema: str | None) -> tuple[str, Sequence[Any]]:
        return (
            "SELECT table_schema, table_name, IF(table_type = 'VIEW', 'view', 'table') "
            "FROM information_schema.tables WHERE table_schema = COALESCE(%s, DATABASE()) "
            "AND table_name LIKE %s ORDER BY 1, 2",
            (schema, pattern),
        )

    async def describe(self, table: str, *, schema: str | None = None) -> str:
        """See ``Database.describe``."""
        where = "table_name = %s AND table_schema = COALESCE(%s, DATABASE())"
        cols = await self.internal(
            "SELECT column_name, column_type, is_nullable, column_default "  # noqa: S608
            f"FROM information_schema.columns WHERE {where} ORDER BY ordinal_position",
            (table, schema),
            max_rows=10_000,
        )
        idx = await self.internal(
            "SELECT index_name, MIN(non_unique) = 0, "  # noqa: S608
            "GROUP_CONCAT(column_name ORDER BY seq_in_index SEPARATOR ', ') "
            f"FROM information_schema.statistics WHERE {where} GROUP BY index_name ORDER BY 1",
            (table, schema),
            max_rows=1_000,
        )
        pk = next((str(c).split(", ") for n, _, c in idx.rows if n == "PRIMARY"), [])
        indexes = [(str(n), bool(u), str(c)) for n, u, c in idx.rows if n != "PRIMARY"]
        return format_description(table, cols.rows, pk, indexes)
