"""PostgreSQL through psycopg 3 (extra ``postgres``).

Read-only mode: every statement runs inside a harness-issued
``BEGIN TRANSACTION READ ONLY`` with ``SET LOCAL statement_timeout`` and is always rolled
back. Resources: ``SET LOCAL temp_file_limit`` (``options.temp_file_limit_mb``, default
1024) bounds the temporary files one statement writes (a sort that spills), where the login
may set it: a superuser, or a role granted ``SET ON PARAMETER temp_file_limit`` (PostgreSQL
15+); for another login, set it on the role (``ALTER ROLE ... SET temp_file_limit``, as a
superuser; see docs/sql). Huge values are cut on the server (``pg_cut``; an ``EXPLAIN``'s
lines by ``pg_explain``). The statement goes
over the extended protocol (``prepare=True``, or the ``DECLARE`` of a server-side cursor),
so a second statement cannot ride along. Plain queries stream through a server-side cursor,
so a million-row result costs only the rows fetched.

The session starts with ``default_transaction_read_only`` on (its startup options), so what
the server runs at login (a login event trigger, 17+) is read-only too; a trigger that
writes then fails the connection, with the hint saying so.
After every call the session is reset with ``DISCARD ALL`` (advisory locks, settings, temp
tables, prepared statements, LISTEN), so nothing one statement leaves reaches the next.
The statement check reads the text as the server does: ``standard_conforming_strings`` is
reported by the server at connect time, and the function allowlist is narrowed to what the
server's ``pg_catalog`` defines (read on the first connection to a server, database and
version, then kept ``pg_catalog_calls.CATALOG_SECONDS``), so a function added in a later
version never resolves to a user function of the same name on an older server. The
harness's own SQL (catalog reads, ``describe``, ``list_tables``) runs with ``search_path =
pg_catalog`` alone, and what wraps the model's statement names ``pg_catalog``'s functions
and operators: no user operator, an exact match the server would prefer, runs in it.
"""

# Queries below interpolate constant SQL fragments only (noqa: S608); values are bound.
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rho_adapters.db.base import ThreadedDatabase
from rho_adapters.db.pg_catalog_calls import catalog_calls, catalog_functions, pg_catalog_only
from rho_adapters.db.pg_catalog_version import catalog_version
from rho_adapters.db.pg_cut import json_as_text
from rho_adapters.db.pg_explain import explain
from rho_adapters.db.pg_rows import query_rows
from rho_adapters.db.results import fetch, format_description
from rho_adapters.extras import missing_extra
from rho_domain.errors import StatementRefused
from rho_domain.ports.database import QueryResult
from rho_domain.sql import CatalogCalls, Verdict
from rho_domain.sql.catalog_calls import made_after_setup
from rho_domain.sql.functions import POSTGRES_GRAMMAR, POSTGRES_GRAMMAR_16, POSTGRES_GRAMMAR_17

_SYSTEM_SCHEMAS = ("pg_catalog", "information_schema", "pg_toast")


def load_psycopg() -> Any:
    """The ``psycopg`` module, or ``MissingExtra`` naming the ``postgres`` extra."""
    try:
        import psycopg
    except ImportError as exc:
        raise missing_extra("psycopg", "postgres", "PostgreSQL databases") from exc
    return psycopg


class PostgresDatabase(ThreadedDatabase):
    """PostgreSQL over psycopg 3 (extra ``postgres``); see ``ThreadedDatabase``."""

    dialect_name = "postgres"

    def _load_driver(self) -> Any:
        return load_psycopg()

    def _open(self) -> Any:
        c = self.config
        kwargs: dict[str, Any] = {
            k: v
            for k, v in {
                "host": c.host,
                "port": c.port,
                "user": c.user,
                "dbname": c.database,
                "password": self._password,
                "connect_timeout": int(c.options.get("connect_timeout", 10)),
                "application_name": "rho-agent",
            }.items()
            if v is not None
        }
        if self.read_only:
            kwargs["options"] = self._read_only_options(c.dsn or "")
        # autocommit: the adapter issues BEGIN/ROLLBACK itself, so nothing is implicit.
        return self._module().connect(c.dsn or "", autocommit=True, **kwargs)

    def _read_only_options(self, dsn: str) -> str:
        """The session's startup options, the dsn's (else ``PGOPTIONS`` of the ``environ``
        the wiring gave, which libpq would have read had no options been given) with every
        transaction read-only by default: what runs before the adapter's first ``BEGIN
        TRANSACTION READ ONLY`` (a PostgreSQL 17+ login event trigger, an administrator's
        function run as the agent's login at every connection) writes nothing either."""
        given = self._module().conninfo.conninfo_to_dict(dsn).get("options")
        given = given if given is not None else self.environ.get("PGOPTIONS", "")
        # local_preload_libraries: C code from $libdir/plugins loaded at each session's
        # start, named by any role or database setting (ALTER ROLE agent SET ...) and seen
        # only once it ran; a client's startup option outranks those, so it is emptied.
        # (session_preload_libraries, a superuser's to set, cannot be: a login that is not
        # one would be refused for naming it; docs/security.md.)
        preload = "-c local_preload_libraries="
        return f"{given} -c default_transaction_read_only=on {preload}".strip()

    def _prepare(self, conn: Any) -> None:
        version = conn.info.server_version
        grammar = POSTGRES_GRAMMAR
        grammar |= POSTGRES_GRAMMAR_16 if version >= 160000 else frozenset()
        grammar |= POSTGRES_GRAMMAR_17 if version >= 170000 else frozenset()
        first = conn.execute(
            "SELECT (pg_catalog.current_schemas(true))[1]", prepare=False
        ).fetchone()
        with pg_catalog_only(conn):  # the harness's reads meet no user operator
            conn.rho_functions = catalog_functions(conn) | grammar
            # the version before the calls: a change between them is seen at the next check
            conn.rho_catalog_version = catalog_version(conn, None)
            conn.rho_catalog_calls = catalog_calls(conn)
            conn.rho_temp_limit = conn.rho_catalog_version.temp_limit
        conn.rho_catalog_first = first is not None and first[0] == "pg_catalog"
        self._catalog_first(conn)

    def _catalog_first(self, conn: Any) -> None:
        """Put pg_catalog first in the search path when the role or database configured it
        later (an allowlisted name must resolve to the built-in, not to public.lower)."""
        if not conn.rho_catalog_first:
            conn.execute(
                "SELECT pg_catalog.set_config('search_path', pg_catalog.concat('pg_catalog, ', "
                "pg_catalog.current_setting('search_path')), false)",
                prepare=False,
            )

    def _available_functions(self, conn: Any) -> frozenset[str] | None:
        functions: frozenset[str] | None = getattr(conn, "rho_functions", None)
        return functions

    def _catalog_calls(self, conn: Any) -> CatalogCalls | None:
        """The connection's catalog calls, read again if the catalog changed since (a cast
        made mid-session would otherwise run until the connection is replaced)."""
        if not hasattr(conn, "rho_catalog_calls"):
            return None
        # every name qualified: no user operator runs; the scans skipped while the
        # server's snapshot is unchanged (pg_catalog_version)
        version = catalog_version(conn, conn.rho_catalog_version)
        if not version.same_catalog(conn.rho_catalog_version):
            with pg_catalog_only(conn):
                conn.rho_catalog_calls = catalog_calls(conn)
        conn.rho_catalog_version = version
        conn.rho_temp_limit = version.temp_limit
        calls: CatalogCalls = conn.rho_catalog_calls
        return calls

    def _usable(self, conn: Any) -> bool:
        if conn.closed or conn.broken:
            return False
        try:
            conn.execute("SELECT 1", prepare=False).fetchone()
        except self._module().Error:
            return False
        return True

    def _interrupt(self, conn: Any) -> None:
        try:
            self._cancel(conn)
        finally:
            conn.close()

    def _cancel(self, conn: Any) -> None:
        conn.cancel_safe(timeout=2.0)

    def _reset(self, conn: Any) -> None:
        if not conn.closed:
            conn.execute("DISCARD ALL", prepare=False)
            # psycopg forgets its prepared statements at a DISCARD ALL or ROLLBACK only the
            # first time it meets that text since it last forgot them: after a catalog
            # re-read's own ROLLBACK it kept the model's statement as prepared, and the same
            # statement next (SHOW work_mem) failed, "prepared statement does not exist".
            prepared = getattr(conn, "_prepared", None)  # (a fake connection has none)
            if prepared is not None:
                prepared.clear()
            self._catalog_first(conn)  # DISCARD ALL restored the configured search path

    def _settings(self, conn: Any) -> frozenset[str] | None:
        scs = conn.info.parameter_status("standard_conforming_strings")
        return frozenset({"standard_conforming_strings=off"} if scs == "off" else ())

    def _run(
        self,
        conn: Any,
        sql: str,
        params: Sequence[Any] | None,
        verdict: Verdict,
        max_rows: int,
        timeout: float,
    ) -> QueryResult:
        begin = ["BEGIN TRANSACTION READ ONLY" if self.read_only else "BEGIN"]
        begin.append(f"SET LOCAL statement_timeout = {max(1, int(timeout * 1000))}")
        if conn.rho_temp_limit:
            begin.append(f"SET LOCAL temp_file_limit = '{self.temp_mb()}MB'")
        if params is not None:  # the harness's own query (``internal``): no user operator
            begin.append("SET LOCAL search_path = pg_catalog")
        committed = False
        try:
            # Constant statements with no parameters: one simple-protocol round trip. Harness
            # statements never go through psycopg's automatic preparation: DISCARD ALL
            # deallocates prepared statements behind its back.
            conn.execute("; ".join(begin), prepare=False)
            if verdict.returns_rows:
                result = self._rows(conn, sql, params, max_rows)
            elif verdict.kind == "EXPLAIN" and params is None:
                result = explain(conn, sql, max_rows, self.alias)  # cut on the server
            else:
                with conn.cursor() as cursor:
                    json_as_text(cursor)  # EXPLAIN (FORMAT JSON): cut as text
                    cursor.execute(sql, params, prepare=True)
                    result = fetch(cursor, max_rows)
            if not self.read_only:
                conn.execute("COMMIT", prepare=False)
                committed = True
            return result
        finally:
            if not committed and not conn.closed:
                conn.execute("ROLLBACK", prepare=False)

    def _rows(
        self, conn: Any, sql: str, params: Sequence[Any] | None, max_rows: int
    ) -> QueryResult:
        """The rows of a plain query through a server-side cursor: the harness's own
        (``params``) as written, the model's inside the server (``pg_rows``: its large
        values and its errors cut there). DECLARE ... CURSOR and OPEN take one statement."""
        if params is None:
            return query_rows(conn, sql, max_rows, self.alias, self._settings(conn))
        with conn.cursor(name="rho_agent_internal") as cursor:
            cursor.execute(sql, params)
            return fetch(cursor, max_rows)

    async def internal(
        self, sql: str, params: Sequence[Any] | None, *, max_rows: int, timeout: float = 30.0
    ) -> QueryResult:
        """See ``ThreadedDatabase.internal``; refused as every statement is where a built-in
        its text names (``information_schema.tables``) was replaced (``made_after_setup``)."""
        verdict = Verdict(kind="SELECT", read_only=True)

        def work(conn: Any) -> QueryResult:
            calls = self._catalog_calls(conn) if self._check else None
            if calls is not None and made_after_setup(calls):
                raise StatementRefused(made_after_setup(calls))
            return self._run(conn, sql, params, verdict, max_rows, timeout)

        return await self.slot.call(work, timeout)

    def _list_tables_sql(self, pattern: str, schema: str | None) -> tuple[str, Sequence[Any]]:
        sql = (
            "SELECT table_schema, table_name, CASE table_type WHEN 'VIEW' THEN 'view' "
            "ELSE 'table' END FROM information_schema.tables "
            "WHERE table_schema <> ALL(%s) AND table_name LIKE %s "
            "AND (%s::text IS NULL OR table_schema = %s) ORDER BY 1, 2"
        )
        return sql, (list(_SYSTEM_SCHEMAS), pattern, schema, schema)

    async def describe(self, table: str, *, schema: str | None = None) -> str:
        """See ``Database.describe``."""
        if schema is None:  # the user's search path, before the harness's is set
            current = await self.internal("SELECT CURRENT_SCHEMA", None, max_rows=1)
            found = current.rows[0][0] if current.rows else None
            schema = "public" if found is None else str(found)  # None: no schema on the path
        where = "table_name = %s AND table_schema = %s"
        cols = await self.internal(
            "SELECT column_name, data_type || CASE WHEN character_maximum_length IS NOT NULL "  # noqa: S608
            "THEN '(' || character_maximum_length || ')' WHEN data_type = 'numeric' "
            "THEN COALESCE('(' || numeric_precision || ',' || numeric_scale || ')', '') "
            "ELSE '' END, "
            f"is_nullable, column_default FROM information_schema.columns WHERE {where} "
            "ORDER BY ordinal_position",
            (table, schema),
            max_rows=10_000,
        )
        pk = await self.internal(
            "SELECT k.column_name FROM information_schema.table_constraints c "
            "JOIN information_schema.key_column_usage k ON k.constraint_name = c.constraint_name "
            "AND k.table_schema = c.table_schema AND k.table_name = c.table_name "
            "WHERE c.constraint_type = 'PRIMARY KEY' AND c.table_name = %s "
            "AND c.table_schema = %s "
            "ORDER BY k.ordinal_position",
            (table, schema),
            max_rows=1_000,
        )
        idx = await self.internal(
            "SELECT i.relname, x.indisunique, pg_get_indexdef(x.indexrelid) "
            "FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid "
            "JOIN pg_class t ON t.oid = x.indrelid JOIN pg_namespace n ON n.oid = t.relnamespace "
            "WHERE t.relname = %s AND n.nspname = %s ORDER BY 1",
            (table, schema),
            max_rows=1_000,
        )
        indexes = [(str(n), bool(u), str(d).split(" USING ", 1)[-1]) for n, u, d in idx.rows]
        return format_description(table, cols.rows, [str(r[0]) for r in pk.rows], indexes)
