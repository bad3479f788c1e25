"""MySQL and MariaDB through PyMySQL (extra ``mysql``).

Read-only mode (security-notes §3.3): the client never enables multi-statements or
``LOCAL INFILE``; every statement runs inside ``START TRANSACTION READ ONLY`` ... ``ROLLBACK``
with a server-side statement time limit (``max_statement_time`` on MariaDB,
``max_execution_time`` on MySQL). Results stream through an unbuffered cursor; when rows are
left over, the connection is dropped rather than drained, so a million-row result costs only
the rows shown.
"""

# Queries below interpolate constant SQL fragments only (noqa: S608); values are bound.
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rho_adapters.db.base import ThreadedDatabase, fetch, format_description
from rho_domain.errors import MissingExtra
from rho_domain.ports.database import QueryResult
from rho_domain.sql import Verdict

_SYSTEM_SCHEMAS = ("mysql", "information_schema", "performance_schema", "sys")


def load_pymysql() -> Any:
    try:
        import pymysql
        import pymysql.cursors
    except ImportError as exc:
        raise MissingExtra("pymysql", "mysql", "MySQL/MariaDB databases") from exc
    return pymysql


class MysqlDatabase(ThreadedDatabase):
    dialect_name = "mysql"

    def _load_driver(self) -> Any:
        return load_pymysql()

    def _connect(self) -> Any:
        c, pymysql = self.config, self._module()
        conn = pymysql.connect(
            host=c.host or "localhost",
            port=c.port or 3306,
            user=c.user,
            password=self._password or "",
            database=c.database,
            charset="utf8mb4",
            autocommit=True,
            local_infile=False,  # LOAD DATA LOCAL would read client files
            client_flag=0,  # no CLIENT.MULTI_STATEMENTS: one statement per call
            connect_timeout=int(c.options.get("connect_timeout", 10)),
            cursorclass=pymysql.cursors.SSCursor,  # unbuffered: fetchmany reads only that
        )
        conn.rho_mariadb = "mariadb" in conn.get_server_info().lower()
        return conn

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
            if conn.rho_mariadb:
                setup.execute(f"SET SESSION max_statement_time = {max(timeout, 0.001):.3f}")
            else:
                setup.execute(f"SET SESSION max_execution_time = {max(1, int(timeout * 1000))}")
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
