"""Oracle through python-oracledb in thin mode (extra ``oracle``).

Read-only mode: each statement runs after ``SET TRANSACTION READ ONLY``
(which must open the transaction) and is rolled back; ``call_timeout`` bounds each round
trip. Oracle still allows ``LOCK TABLE``, ``ALTER SESSION`` and package calls inside a
read-only transaction, so the statement check (which refuses them) matters more here, and
the account must not have EXECUTE on UTL_*/DBMS_* packages. Tested against a fake DB-API
connection only: no Oracle server runs in CI.

The catalogs the check refuses by name (``SYS.USER$``, ``V$SQL``...) can be read under a
name an administrator gave them: a synonym (``CREATE PUBLIC SYNONYM users_pw FOR
sys.user$``) or a view. So on connect the adapter reads the views and synonyms this login
can see that Oracle did not make, and the check judges each where it is named: a view by
its query, a synonym as ``SELECT * FROM`` what it stands for; one over a database link
(another database, as the link's login) is refused, and so is an external table (a read
reads server files; a PREPROCESSOR runs a program), and so is a view reading a table,
view or synonym this login cannot see (``ALL_DEPENDENCIES``), whose query it never reads.
12c and later flag what Oracle made (``ORACLE_MAINTAINED``, per object: a view an
administrator made in ``SYSTEM`` is read); 11g has no flag, so there the views and synonyms
of the schemas Oracle installs are left out (``ORACLE_11G_SCHEMAS``), except a synonym
whose name is not its target's or that crosses a link: a ``PUBLIC`` one Oracle made by its
target's name is judged as that name.
Before each statement a version of them is read (``CATALOG_VERSION``), and they again when
it changed, or when they were read within two seconds of the newest DDL (its time is to the
second: one replaced in the same second changes no version): one made while the connection
is open is judged at once.
"""

# Queries below interpolate constant SQL fragments only (noqa: S608); values are bound.
from __future__ import annotations

import datetime
from collections.abc import Sequence
from typing import Any

from rho_adapters.db.base import ThreadedDatabase
from rho_adapters.db.results import fetch, format_description
from rho_adapters.extras import missing_extra
from rho_domain.ports.database import QueryResult
from rho_domain.sql import CatalogCalls, Verdict
from rho_domain.sql.functions import names


def _made(kind: str) -> str:
    """The objects of ``kind`` (12c+) no Oracle script made, joined as ``o``."""
    return (
        f"JOIN all_objects o ON o.owner = {kind[0]}.owner AND o.object_name = "
        f"{kind[0]}.{kind}_name AND o.object_type = '{kind.upper()}' "
        "WHERE o.oracle_maintained = 'N'"
    )


# The views and synonyms of the login's own making or an administrator's, with what each
# reads: a view's query (TEXT, a LONG: read whole), a synonym's target (and its link).
CATALOG_VIEWS = f"SELECT v.view_name, v.text FROM all_views v {_made('view')}"  # noqa: S608
_SYNONYM = "SELECT s.synonym_name, s.table_owner, s.table_name, s.db_link FROM all_synonyms s"
CATALOG_SYNONYMS = f"{_SYNONYM} {_made('synonym')}"
# 11g's schemas Oracle installs (the database's and its options' accounts, no sample one) and
# PUBLIC, where Oracle's public synonyms are (tens of thousands, each named as its target
# but V$x for SYS.V_$x). A schema missing here only makes more views read and judged.
ORACLE_11G_SCHEMAS = names(
    "SYS SYSTEM PUBLIC OUTLN DBSNMP APPQOSSYS ORACLE_OCM DIP XDB ANONYMOUS CTXSYS EXFSYS "
    "MDSYS ORDSYS ORDDATA ORDPLUGINS SI_INFORMTN_SCHEMA OLAPSYS OWBSYS OWBSYS_AUDIT WMSYS "
    "FLOWS_FILES MDDATA SPATIAL_CSW_ADMIN_USR SPATIAL_WFS_ADMIN_USR MGMT_VIEW SYSMAN "
    "XS$NULL TSMSYS DMSYS APEX_PUBLIC_USER APEX_030200 APEX_040000 APEX_040100 APEX_040200"
)
_ORACLE_OWNED = ", ".join(f"'{name}'" for name in sorted(ORACLE_11G_SCHEMAS))
CATALOG_VIEWS_11G = f"SELECT view_name, text FROM all_views WHERE owner NOT IN ({_ORACLE_OWNED})"  # noqa: S608
CATALOG_SYNONYMS_11G = (
    f"{_SYNONYM} WHERE s.owner NOT IN ({_ORACLE_OWNED}) "
    "OR s.synonym_name <> s.table_name OR s.db_link IS NOT NULL"
)
# The views above whose queries read a table, view or synonym this login cannot see (a view
# reads as its owner): the check judges a view by its query, and the views inside it by
# theirs, and one the login cannot see is one it never reads, which may read SYS.USER$.
# Seen means seen as that kind of object: an index, a trigger or a cluster has a namespace
# of its own, so HR's index SECRET_V, listed to a login that may read its table, is no view.
_UNSEEN = (
    "SELECT d.name, d.referenced_owner, d.referenced_name FROM all_dependencies d "
    "JOIN all_objects m ON m.owner = d.owner AND m.object_name = d.name "
    "AND m.object_type = 'VIEW' WHERE d.type = 'VIEW' AND d.referenced_link_name IS NULL "
    "AND d.referenced_type IN ('TABLE', 'VIEW', 'SYNONYM', 'MATERIALIZED VIEW') "
    "AND NOT EXISTS (SELECT 1 FROM all_objects o WHERE o.owner = d.referenced_owner "
    "AND o.object_name = d.referenced_name AND o.object_type = d.referenced_type) AND "
)
CATALOG_UNSEEN = f"{_UNSEEN}m.oracle_maintained = 'N'"
CATALOG_UNSEEN_11G = f"{_UNSEEN}m.owner NOT IN ({_ORACLE_OWNED})"
# External tables: a read runs the access driver over files of a server directory (and
# ORACLE_LOADER's PREPROCESSOR, a program), as PostgreSQL's file_fdw tables do.
CATALOG_EXTERNAL = "SELECT table_name, type_name, default_directory_name FROM all_external_tables"
# What changes when a view, synonym or table the reads above may list is made, replaced,
# altered or dropped: read before each statement, and the catalog again when it changed, so
# one made while the connection is open is judged at once (as PostgreSQL's adapter does).
# LAST_DDL_TIME is a DATE, to the second: a view replaced in the second of the last read
# leaves the version as it was, so the server's clock (SYSDATE) comes with it, and a read
# made within _SETTLE of the newest DDL is not trusted to be the last of its second.
_VERSION = (
    "SELECT COUNT(*), MAX(o.last_ddl_time), SYSDATE FROM all_objects o WHERE o.object_type IN "
)
_SETTLE = datetime.timedelta(seconds=2)
CATALOG_VERSION = f"{_VERSION}('VIEW', 'SYNONYM', 'TABLE') AND o.oracle_maintained = 'N'"
CATALOG_VERSION_11G = (
    f"{_VERSION}('VIEW', 'SYNONYM', 'TABLE') AND (o.owner NOT IN ({_ORACLE_OWNED}) "
    "OR o.object_type = 'SYNONYM')"
)


def load_oracledb() -> Any:
    """The ``oracledb`` module, or ``MissingExtra`` naming the ``oracle`` extra."""
    try:
        import oracledb
    except ImportError as exc:
        raise missing_extra("oracledb", "oracle", "Oracle databases") from exc
    return oracledb


class OracleDatabase(ThreadedDatabase):
    """Oracle over python-oracledb, thin mode (extra ``oracle``); see ``ThreadedDatabase``."""

    dialect_name = "oracle"

    def _load_driver(self) -> Any:
        return load_oracledb()

    def _open(self) -> Any:
        c = self.config
        dsn = c.dsn or f"{c.host or 'localhost'}:{c.port or 1521}/{c.database or ''}"
        # thin mode is the default of python-oracledb: no Oracle client libraries needed.
        return self._module().connect(user=c.user, password=self._password, dsn=dsn)

    def _prepare(self, conn: Any) -> None:
        # python-oracledb's connection.version ("11.2.0.4.0"); unknown reads as 12c+, whose
        # query fails on 11g (ORA-00904) rather than read less
        before_12c = str(getattr(conn, "version", "") or "99").split(".")[0] in {"9", "10", "11"}
        conn.rho_reads = (
            (CATALOG_VIEWS_11G, CATALOG_SYNONYMS_11G, CATALOG_VERSION_11G, CATALOG_UNSEEN_11G)
            if before_12c
            else (CATALOG_VIEWS, CATALOG_SYNONYMS, CATALOG_VERSION, CATALOG_UNSEEN)
        )
        self._read_catalog(conn, _version(conn))

    def _read_catalog(self, conn: Any, version: list[tuple[Any, ...]]) -> None:
        """Read the views, synonyms and external tables into ``conn.rho_catalog``, as of
        ``version`` (read before them: a change in between is read again next time)."""
        view_sql, synonym_sql, _, unseen_sql = conn.rho_reads
        views: dict[str, set[str]] = {}
        refused: dict[str, str] = {}
        cursor = conn.cursor()
        try:
            for name, text in _rows(cursor, view_sql):
                views.setdefault(str(name), set()).add(str(text))
            for name, owner, table, link in _rows(cursor, synonym_sql):
                if link:
                    refused[str(name)] = (
                        f"{name} is a synonym of {owner}.{table}@{link}, another database's, "
                        "read as the link's login: the agent reads this database only"
                    )
                else:
                    target = f'"{owner}"."{table}"' if owner else f'"{table}"'
                    views.setdefault(str(name), set()).add(f"SELECT * FROM {target}")  # noqa: S608
            for name, owner, table in _rows(cursor, unseen_sql):
                refused[str(name)] = (
                    f"the view {name} reads {owner}.{table} as its owner, which this login "
                    "cannot see, so the check cannot judge what that reads (a view over "
                    "SYS.USER$); grant the login SELECT on it, or give the agent a view of its own"
                )
            for name, driver, directory in _rows(cursor, CATALOG_EXTERNAL):
                refused[str(name)] = (
                    f"{name} is an external table ({driver}, directory {directory}): a read "
                    "reads server files, and a PREPROCESSOR runs a program: the agent reads "
                    "the database's own tables only"
                )
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
        if _changed(conn.rho_catalog_version, version):
            self._read_catalog(conn, version)
        calls: CatalogCalls = conn.rho_catalog
        return calls

    def _usable(self, conn: Any) -> bool:
        try:
            conn.ping()
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
        conn.call_timeout = max(1, int(timeout * 1000))
        conn.rollback()  # SET TRANSACTION must be the first statement of a transaction
        cursor = conn.cursor()
        try:
            if self.read_only:
                cursor.execute("SET TRANSACTION READ ONLY")
            cursor.arraysize = min(max_rows + 1, 1_000)
            # oracledb runs one statement per call; a trailing ";" is not Oracle SQL.
            cursor.execute(sql.rstrip().rstrip(";"), list(params) if params else None)
            result = fetch(cursor, max_rows)
            if not self.read_only:
                conn.commit()
            return result
        finally:
            cursor.close()
            if self.read_only:
                conn.rollback()

    def _list_tables_sql(self, pattern: str, schema: str | None) -> tuple[str, Sequence[Any]]:
        owner = "COALESCE(:2, SYS_CONTEXT('USERENV', 'CURRENT_SCHEMA'))"
        return (
            f"SELECT owner, table_name, 'table' FROM all_tables WHERE owner = {owner} "  # noqa: S608
            "AND table_name LIKE :1 UNION ALL "
            f"SELECT owner, view_name, 'view' FROM all_views WHERE owner = {owner} "
            "AND view_name LIKE :1 ORDER BY 1, 2",
            (pattern.upper(), schema.upper() if schema else None),
        )

    async def describe(self, table: str, *, schema: str | None = None) -> str:
        """See ``Database.describe``."""
        owner = "COALESCE(:2, SYS_CONTEXT('USERENV', 'CURRENT_SCHEMA'))"
        args = (table.upper(), schema.upper() if schema else None)
        cols = await self.internal(
            "SELECT column_name, data_type || CASE WHEN data_type LIKE '%CHAR%' "  # noqa: S608
            "THEN '(' || data_length || ')' WHEN data_precision IS NOT NULL THEN '(' || "
            "data_precision || ',' || data_scale || ')' END, nullable, data_default "
            f"FROM all_tab_columns WHERE table_name = :1 AND owner = {owner} ORDER BY column_id",
            args,
            max_rows=10_000,
        )
        pk = await self.internal(
            "SELECT cc.column_name FROM all_constraints c JOIN all_cons_columns cc "  # noqa: S608
            "ON cc.owner = c.owner AND cc.constraint_name = c.constraint_name "
            f"WHERE c.constraint_type = 'P' AND c.table_name = :1 AND c.owner = {owner} "
            "ORDER BY cc.position",
            args,
            max_rows=1_000,
        )
        idx = await self.internal(
            "SELECT i.index_name, CASE i.uniqueness WHEN 'UNIQUE' THEN 1 ELSE 0 END, "  # noqa: S608
            "LISTAGG(ic.column_name, ', ') WITHIN GROUP (ORDER BY ic.column_position) "
            "FROM all_indexes i JOIN all_ind_columns ic ON ic.index_owner = i.owner "
            "AND ic.index_name = i.index_name "
            f"WHERE i.table_name = :1 AND i.table_owner = {owner} "
            "GROUP BY i.index_name, i.uniqueness ORDER BY 1",
            args,
            max_rows=1_000,
        )
        indexes = [(str(n), bool(u), str(c)) for n, u, c in idx.rows]
        return format_description(table.upper(), cols.rows, [str(r[0]) for r in pk.rows], indexes)


def _version(conn: Any) -> list[tuple[Any, ...]]:
    """The catalog's version (``CATALOG_VERSION``) as ``conn``'s server gives it."""
    cursor = conn.cursor()
    try:
        return _rows(cursor, conn.rho_reads[2])
    finally:
        cursor.close()


def _changed(read: list[tuple[Any, ...]], now: list[tuple[Any, ...]]) -> bool:
    """Whether the catalog must be read again: its version (count, newest DDL) moved since
    ``read``, the version it was read at, or ``read`` came within ``_SETTLE`` of a DDL,
    where another in the same second would leave the version unchanged."""
    if [row[:2] for row in read] != [row[:2] for row in now]:
        return True
    return any(
        newest is not None and (at is None or at - newest < _SETTLE) for _, newest, at in read
    )


def _rows(cursor: Any, sql: str) -> list[tuple[Any, ...]]:
    """Every row of a catalog query, a batch at a time (never ``fetchall``)."""
    cursor.execute(sql)
    rows: list[tuple[Any, ...]] = []
    while batch := cursor.fetchmany(1_000):
        rows.extend(tuple(row) for row in batch)
    return rows
