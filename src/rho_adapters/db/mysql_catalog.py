"""What a MariaDB/MySQL statement is judged against, read in one statement before it.

The check needs, before each statement, the server's ``init_connect`` (``mysql_login``),
the views this login sees with their queries, the other servers' tables
(``REMOTE_ENGINES``), MariaDB's virtual columns (``mysql_views``) and, for the server's
own views, their hashes (``mysql_own_views``). Read as three statements over every
database, they cost the server 20-32 ms of CPU a statement (MariaDB 10.11, the test
seed): information_schema opens every view (it parses its query) and every table (its
engine) of every database it is asked about, ``information_schema`` itself included
(2.7 ms a scan for no view and no table of anyone's), and the views were opened twice
(once for the own views' digest, once for the others).

So one statement reads them all, each table of information_schema once, and asks about
the databases this login sees one by one (``TABLE_SCHEMA = 'rho'``: the server then opens
that database's files only), never ``information_schema`` nor ``performance_schema``,
where no one, root included, may create a view or a table (measured: "Access denied").
Which databases the login sees is read in the same statement (``SCHEMATA``, which lists a
database for a grant on one of its tables or through a role too: the server's own walk of
the databases for ``VIEWS`` and ``TABLES`` decides by the same test); the statement is
built from the last statement's list, and read again at once with the new one when it
differs (a database made, dropped, granted or revoked since). Nothing read is kept from one
statement to the next but that list, which only shapes the question. Past ``_BRANCHES``
databases, a branch a database costs more than it saves, and each table is read in one scan
(still one statement, the views opened once).
"""

# Queries below interpolate constant SQL fragments only (noqa: S608); values are bound.
from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple

from rho_adapters.db.mysql_settings import REMOTE_ENGINES
from rho_domain.errors import DatabaseError

SYSTEM_SCHEMAS = ("mysql", "information_schema", "performance_schema", "sys")
# Databases that hold neither views nor tables of anyone's (the server refuses to make any).
_EMPTY = frozenset({"information_schema", "performance_schema"})
# Each view with its query and what the harness knows of it: 'hidden' (its query shows
# empty to this login), 'definer' (it reads as another login), or 'view'. A definer is
# compared to this login exactly: user names tell cases apart, so a view whose definer was
# 'SEER'@'%' (every privilege) passed as the login 'seer'@'%''s own. An empty query is told
# by its length, not by ``= ''``: the server parses these reads in the session's sql_mode
# (the global one after each reset; SET STATEMENT comes too late, after the parse), and
# under EMPTY_STRING_IS_NULL '' is NULL, so every view whose query the login may not read
# was judged as an empty query (a stored function's SET GLOBAL ran through one, MariaDB
# 10.11).
VIEW_KIND = (
    "IF(COALESCE(LENGTH(VIEW_DEFINITION), 0) = 0, 'hidden', IF(SECURITY_TYPE = 'DEFINER' "
    "AND CAST(DEFINER AS BINARY) <> CAST(CURRENT_USER() AS BINARY), 'definer', 'view'))"
)
_SYSTEM = ", ".join(f"'{name}'" for name in SYSTEM_SCHEMAS)
# The server's own views (sys.session, MariaDB's mysql.user), by their exact spelling (under
# lower_case_table_names=0 a database ``Sys`` is anyone's) and their installer's definers.
OWN = (
    f"CAST(TABLE_SCHEMA AS BINARY) IN ({_SYSTEM}) "
    "AND CAST(DEFINER AS BINARY) IN ('mariadb.sys@localhost', 'mysql.sys@localhost')"
)
# An own view's hash covers what its row holds (its kind, which this login decides, too), so
# that rows read once serve every connection that finds the same hashes. Its name and query
# are hashed apart first: CONCAT_WS returns NULL past max_allowed_packet, and a query that
# long (the server writes a newline in a literal as two bytes) hashed as NULL whatever it
# said, so the view's replacement kept the rows read before it; and fixed-length parts
# leave no 0x1f in a name or a query to move a field's border.
OWN_HASH = (
    "SHA2(CONCAT_WS(0x1f, TABLE_SCHEMA, SHA2(TABLE_NAME, 256), DEFINER, SECURITY_TYPE, "
    f"SHA2(VIEW_DEFINITION, 256), {VIEW_KIND}), 256)"
)
# MariaDB writes a column's expression when it is read, quoting names as the reading
# session's sql_mode says: under ANSI_QUOTES (ORACLE, MSSQL, ANSI...) as "a'b", which the
# literal's reader took for the start of a literal, emptying the call after it. Read in the
# default mode, every name is written in backticks (a view's query is stored so already).
_WRITTEN_AS_DEFAULT = "SET STATEMENT sql_mode = '' FOR "
_ENGINES = ", ".join(f"'{engine}'" for engine in REMOTE_ENGINES)
_HEAD = (
    "SELECT 'schema', SCHEMA_NAME, NULL, NULL, NULL FROM information_schema.SCHEMATA "
    "UNION ALL SELECT 'init', @@GLOBAL.init_connect, NULL, NULL, NULL"
)
# Per database: its views (an own view's hash in place of its query), its other servers'
# tables (every table's name where a definer's view reads: ``Catalog.seen``), and MariaDB's
# VIRTUAL columns (computed at each read; MySQL allows only deterministic built-ins there,
# MariaDB UUID_SHORT() too), each expression read as it is and made a SELECT by the reader
# (CONCAT returns NULL past max_allowed_packet, and one that long was judged as "None").
_VIEWS = (
    f" UNION ALL SELECT IF({OWN}, 'own', 'view'), TABLE_SCHEMA, TABLE_NAME, "  # noqa: S608
    f"IF({OWN}, {OWN_HASH}, VIEW_DEFINITION), {VIEW_KIND} "
    "FROM information_schema.VIEWS WHERE TABLE_SCHEMA = %s"
)
_TABLES = (
    " UNION ALL SELECT 'table', TABLE_SCHEMA, TABLE_NAME, NULL, ENGINE "
    "FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s"
)
_REMOTE = f" AND ENGINE IN ({_ENGINES})"
_COLUMNS = (
    " UNION ALL SELECT 'column', TABLE_SCHEMA, TABLE_NAME, GENERATION_EXPRESSION, 'column' "  # noqa: S608
    "FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = %s AND EXTRA LIKE 'VIRTUAL%%' "
    f"AND CAST(TABLE_SCHEMA AS BINARY) NOT IN ({_SYSTEM})"
)
# Past this many databases, each table of information_schema is read in one scan, not one
# branch a database: a branch costs the server about 0.9 ms of CPU, a scan's cost grows
# slowly, and they cross at 10-13 databases (the seed and 0-20 more, one table each).
_BRANCHES = 8
_TRIES = 4  # readings while the databases keep changing under them
_TABLE_NAMES = "SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES WHERE "


class Scope(NamedTuple):
    """The question's shape: the databases asked about (those the login saw at the last
    reading, sorted), and those whose every table's name is read (a definer's view reads
    there)."""

    schemas: tuple[str, ...] = ()
    whole: frozenset[str] = frozenset()


class Catalog:
    """One reading: ``init_connect``, the own views' ``own_hashes`` (sorted; "" for one
    hashed as NULL), the other views as ``(name, query, kind)``, the remote tables as
    ``(name, engine)``, the virtual columns as ``(name, expression)``; ``scope`` what the
    next reading asks (widened by ``seen``)."""

    def __init__(self, scope: Scope, rows: Iterable[tuple[Any, ...]]) -> None:
        self.scope = scope
        self.init_connect = ""
        self.views: list[tuple[str, str, str]] = []
        self.remote: list[tuple[str, str]] = []
        self.columns: list[tuple[str, str]] = []
        self._names: set[tuple[str, str]] = set()
        hashes = []
        for part, schema, name, text, kind in rows:
            if part == "init":
                self.init_connect = str(schema or "")
            elif part == "own":
                hashes.append(str(text or ""))
            elif part == "view":
                self.views.append((str(name), str(text or ""), str(kind)))
            elif part == "column":
                self.columns.append((str(name), str(text)))
            elif part == "table":
                self._names.add((str(schema), str(name)))
                if str(kind).upper() in REMOTE_ENGINES:
                    self.remote.append((str(name), str(kind)))
        self.own_hashes = tuple(sorted(hashes))

    def seen(self, cursor: Any, schemas: Iterable[str]) -> set[tuple[str, str]]:
        """The ``(database, table)`` names this login sees in ``schemas`` (spelled as the
        server spells them: another spelling sees nothing). A database it sees whose names
        this reading did not ask for is read now, and asked for from the next on."""
        wanted = {s for s in schemas if s in self.scope.schemas and s not in self.scope.whole}
        if wanted:
            ordered = sorted(wanted)
            where = " OR ".join(["TABLE_SCHEMA = %s"] * len(ordered))
            cursor.execute(_TABLE_NAMES + where, ordered)
            self._names |= {(str(s), str(n)) for s, n in cursor.fetchall()}
            self.scope = self.scope._replace(whole=self.scope.whole | wanted)
        return self._names


def read_catalog(cursor: Any, *, mariadb: bool, scope: Scope) -> Catalog:
    """The catalog as this login sees it now, asked with ``scope`` (the last reading's),
    asked again while the databases it sees are others; ``DatabaseError`` when they kept
    changing."""
    for _ in range(_TRIES):
        sql, params = _question(scope, mariadb=mariadb)
        cursor.execute(sql, params)
        rows = cursor.fetchall()
        schemas = {str(r[1]) for r in rows if r[0] == "schema"} - _EMPTY
        if tuple(sorted(schemas)) == scope.schemas:
            return Catalog(scope, rows)
        scope = Scope(tuple(sorted(schemas)), scope.whole & schemas)
    raise DatabaseError(
        f"the server's databases changed during each of {_TRIES} readings of its views "
        "before the statement (databases made or dropped, privileges granted or revoked): "
        "run the statement again"
    )


def _question(scope: Scope, *, mariadb: bool) -> tuple[str, list[str]]:
    if len(scope.schemas) > _BRANCHES:
        return _scans(scope, mariadb=mariadb)
    parts, params = [_HEAD], []
    for schema in scope.schemas:
        parts.append(_VIEWS)
        parts.append(_TABLES if schema in scope.whole else _TABLES + _REMOTE)
        params += [schema, schema]
        if mariadb and schema not in SYSTEM_SCHEMAS:
            parts.append(_COLUMNS)
            params.append(schema)
    return (_WRITTEN_AS_DEFAULT if mariadb else "") + "".join(parts), params


def _scans(scope: Scope, *, mariadb: bool) -> tuple[str, list[str]]:
    """The question as one scan of each table (every database the login sees)."""
    whole = sorted(scope.whole)
    named = f" OR TABLE_SCHEMA IN ({', '.join(['%s'] * len(whole))})" if whole else ""
    sql = (
        _HEAD
        + _VIEWS.removesuffix(" WHERE TABLE_SCHEMA = %s")
        + _TABLES.replace("TABLE_SCHEMA = %s", f"(ENGINE IN ({_ENGINES}){named})")
        + (_COLUMNS.replace("TABLE_SCHEMA = %s AND ", "") if mariadb else "")
    )
    return (_WRITTEN_AS_DEFAULT if mariadb else "") + sql, whole
