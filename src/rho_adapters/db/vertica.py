"""Vertica through vertica-python (extra ``vertica``).

vertica-python has no read-only connect option (the public implementation's ``read_only=``
was silently ignored), so after every connect the adapter runs
``SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY``; the statement check refuses SET,
so the model cannot turn it back. ``SET SESSION RUNTIMECAP`` bounds each statement, and
every statement is rolled back. When rows are left over the connection is dropped rather
than drained. Tested against a fake DB-API connection only: no Vertica server runs in CI.

The catalogs the check refuses by name (``v_catalog.passwords``, ``v_monitor.sessions``,
``v_internal``'s tables) can be read through a view an administrator made over them; so on
connect the adapter reads the views that are not the system's (``v_catalog.views``), and
the check judges each by its query where it is named, as PostgreSQL's and MariaDB's are,
and refuses one reading a table or view this login cannot see (``CATALOG_UNSEEN``).
An external table (its ``COPY`` reads server files, or HDFS's, S3's) is refused where named.
Before each statement a version of them is read (``CATALOG_VERSION``), and they again
when it changed: one made while the connection is open is judged at once.
"""

# Queries below interpolate constant SQL fragments only (noqa: S608); values are bound.
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rho_adapters.db.base import ThreadedDatabase
from rho_adapters.db.results import fetch, format_description
from rho_adapters.extras import missing_extra
from rho_domain.ports.database import QueryResult
from rho_domain.sql import CatalogCalls, Verdict, dialect
from rho_domain.sql.name_folding import lookup_names

READ_ONLY_SESSION = "SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY"
# The views that are not the system's, with their queries, and the external tables, with
# their COPY (a read reads server files, or another store's: a path, HDFS, S3).
CATALOG_RELATIONS = (
    "SELECT table_name, view_definition, '' FROM v_catalog.views WHERE NOT is_system_view "
    "UNION ALL SELECT table_name, '', table_definition FROM v_catalog.tables "
    "WHERE table_definition <> ''"
)
# The views (not the system's) whose query reads a table or view this login cannot see:
# a view reads as its owner (Vertica asks the owner, not the reader, for SELECT on what it
# reads), and a login sees the catalog entries of the objects it has a privilege on only,
# so the query of a view inside such a view is never read, and the check judged the outer
# view by its own query: one over another schema's view over v_catalog.passwords passed.
# The columns are VIEW_TABLES' and ALL_TABLES' as documented (a server that lacks one
# fails the connect, never reads less).
CATALOG_UNSEEN = (
    "SELECT t.table_name, t.reference_table_schema, t.reference_table_name "
    "FROM v_catalog.view_tables t WHERE t.table_schema NOT IN "
    "('v_catalog', 'v_monitor', 'v_internal', 'v_func', 'v_txtindex') AND NOT EXISTS "
    "(SELECT 1 FROM v_catalog.all_tables a WHERE a.table_id = t.reference_table_id)"
)
# What changes when such a view or table is made, replaced, renamed or dropped (a replaced
# view's definition hashes otherwise, whatever its create_time; each hashed with its name,
# since two views swapping names or queries leave the sum of the queries' hashes as it was):
# read before each statement, and the relations again when it changed, so one made while
# the connection is open is judged.
CATALOG_VERSION = (
    "SELECT COUNT(*), MAX(create_time), SUM(HASH(s, n, d) % 1000000007) FROM (SELECT "
    "create_time, table_schema AS s, table_name AS n, view_definition AS d "
    "FROM v_catalog.views WHERE NOT is_system_view UNION ALL SELECT create_time, "
    "table_schema, table_name, table_definition FROM v_catalog.tables "
    "WHERE table_definition <> '') r"
)


def load_vertica() -> Any:
    """The ``vertica_python`` module, or ``MissingExtra`` naming the ``vertica`` extra."""
    try:
        import vertica_python
    except ImportError as exc:
        raise missing_extra("vertica-python", "vertica", "Vertica databases") from exc
    return vertica_python


class VerticaDatabase(ThreadedDatabase):
    """Vertica over vertica-python (extra ``vertica``); see ``ThreadedDatabase``."""

    dialect_name = "vertica"

    def _load_driver(self) -> Any:
        return load_vertica()

    def _open(self) -> Any:
        c = self.config
        return self._module().connect(
            host=c.host or "localhost",
            port=c.port or 5433,
            user=c.user,
            password=self._password or "",
            database=c.database or "",
            autocommit=False,
            connection_timeout=float(c.options.get("connect_timeout", 10)),
        )

    def _prepare(self, conn: Any) -> None:
        if self.read_only:
            cursor = conn.cursor()
            try:
                cursor.execute(READ_ONLY_SESSION)
            finally:
                cursor.close()
        self._read_catalog(conn, _version(conn))

    def _read_catalog(self, conn: Any, version: list[tuple[Any, ...]]) -> None:
        """Read the views and external tables into ``conn.rho_catalog``, as of ``version``
        (read before them: a change in between is read again next time)."""
        vertica = dialect("vertica")
        cursor = conn.cursor()
        try:
            cursor.execute(CATALOG_RELATIONS)
            views: dict[str, set[str]] = {}
            refused: dict[str, str] = {}
            while batch := cursor.fetchmany(1_000):
                for name, query, copy in batch:
                    # Vertica compares names without case: each name the check looks up
                    for key in lookup_names(str(name), vertica):
                        if copy:
                            refused[key] = (
                                f"{name} is an external table ({copy}): a read reads server "
                                "files or another store's: the agent reads the database's "
                                "own tables only"
                            )
                        else:
                            views.setdefault(key, set()).add(str(query))
            cursor.execute(CATALOG_UNSEEN)
            while batch := cursor.fetchmany(1_000):
                for name, schema, table in batch:
                    for key in lookup_names(str(name), vertica):
                        refused[key] = unseen_refusal(str(name), f"{schema}.{table}")
        finally:
            cursor.close()
        conn.rho_catalog = CatalogCalls(
            views={name: frozenset(q) for name, q in views.items()}, refused_names=refused
        )
        conn.rho_catalog_version = version

    def _catalog_calls(self, conn: Any) -> CatalogCalls | None:
        if not hasattr(conn, "rho_catalog"):
            return None
        version = _version(conn)
        if version != conn.rho_catalog_version:
            self._read_catalog(conn, version)
        calls: CatalogCalls = conn.rho_catalog
        return calls

    def _usable(self, conn: Any) -> bool:
        if conn.closed():
            return False
        try:
            cursor = conn.cursor()
            cursor.execute("SELECT 1")
            cursor.fetchall()
            cursor.close()
        except self._module().Error:
            return False
        return True

    def _cancel(self, conn: Any) -> None:
        conn.cancel()  # the driver's thread-safe break; the connection stays usable

    def _run(
        self,
        conn: Any,
        sql: str,
        params: Sequence[Any] | None,
        verdict: Verdict,
        max_rows: int,
        timeout: float,
    ) -> QueryResult:
        cursor = conn.cursor()
        try:
            cursor.execute(f"SET SESSION RUNTIMECAP '{max(1, round(timeout))} seconds'")
            cursor.execute(sql, list(params) if params is not None else None)
            result = fetch(cursor, max_rows)
        except BaseException:
            self.discard(conn)
            raise
        if result.more_rows:
            self.discard(conn)  # draining would read every remaining row
            return result
        cursor.close()
        if self.read_only:
            conn.rollback()
        else:
            conn.commit()
        return result

    def _list_tables_sql(self, pattern: str, schema: str | None) -> tuple[str, Sequence[Any]]:
        return (
            "SELECT table_schema, table_name, 'table' FROM v_catalog.tables "
            "WHERE table_name ILIKE %s AND (%s IS NULL OR table_schema = %s) UNION ALL "
            "SELECT table_schema, table_name, 'view' FROM v_catalog.views "
            "WHERE table_name ILIKE %s AND (%s IS NULL OR table_schema = %s) ORDER BY 1, 2",
            (pattern, schema, schema) * 2,
        )

    async def describe(self, table: str, *, schema: str | None = None) -> str:
        """See ``Database.describe``."""
        where = "table_name = %s AND (%s IS NULL OR table_schema = %s)"
        args = (table, schema, schema)
        cols = await self.internal(
            "SELECT column_name, data_type, is_nullable, column_default "  # noqa: S608
            f"FROM v_catalog.columns WHERE {where} ORDER BY ordinal_position",
            args,
            max_rows=10_000,
        )
        pk = await self.internal(
            "SELECT column_name FROM v_catalog.primary_keys "  # noqa: S608
            f"WHERE {where} ORDER BY ordinal_position",
            args,
            max_rows=1_000,
        )
        proj = await self.internal(
            "SELECT projection_name, is_super_projection, '' FROM v_catalog.projections "
            "WHERE anchor_table_name = %s AND (%s IS NULL OR projection_schema = %s) ORDER BY 1",
            args,
            max_rows=1_000,
        )
        indexes = [
            (f"projection {n}", bool(s), "SUPER" if s else "STANDARD") for n, s, _ in proj.rows
        ]
        return format_description(table, cols.rows, [str(r[0]) for r in pk.rows], indexes)


def unseen_refusal(name: str, relation: str) -> str:
    """Why the view ``name``, which reads ``relation`` this login cannot see, is refused."""
    return (
        f"the view {name} reads {relation} as its owner, which this login cannot see, so the "
        "check cannot judge what that reads (a view over v_catalog.passwords); grant the "
        "login USAGE on its schema and SELECT on it, or give the agent a view of its own"
    )


def _version(conn: Any) -> list[tuple[Any, ...]]:
    """The catalog's version (``CATALOG_VERSION``) as ``conn``'s server gives it."""
    cursor = conn.cursor()
    try:
        cursor.execute(CATALOG_VERSION)
        rows: list[tuple[Any, ...]] = []
        while batch := cursor.fetchmany(1_000):
            rows.extend(tuple(row) for row in batch)
        return rows
    finally:
        cursor.close()
