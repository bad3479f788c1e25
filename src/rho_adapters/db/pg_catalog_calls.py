"""What a PostgreSQL database runs with no call in the text, read from its catalog.

``catalog_calls(conn)`` gives the statement check (``rho_domain.sql.catalog_calls``) the
operators, casts and domain CHECKs of this database that a read could set off: the check
refuses a statement naming one whose functions are off the allowlist, as it refuses the call.
Read on every new connection (a few milliseconds), and again before a statement when
``catalog_version`` says the catalog changed, so one an administrator (or any role that may
create in the database) adds is seen by the next statement.

Listed: objects made after initdb (oid >= FirstNormalObjectId), and not by an extension's
script (its objects are its installer's, as its functions are):

- operators, by name, with their negators' and commutators' functions;
- casts, under the name of every type a cast to which reaches the cast's target: the target,
  a domain over it (a cast to a domain is the cast to its base type), a composite type, a
  table's or view's row type with a field of one (``ROW(t)::holder`` casts each field), an
  array of one (named by its element, as ``x::int8[]`` writes it); an implicit or assignment
  cast, which no text need name (``upper(t)``, ``WHERE t``), under "" for every statement;
- every domain's CHECKs, under the name of every type whose values hold the domain's (the
  same graph, with ranges), as ``pg_get_constraintdef`` writes them: the check judges the
  text (pg_depend records no dependency on a built-in function);
- functions, by name: ``lower(relname)`` calls a user's ``public.lower(name)``, an exact
  match, before the built-in ``lower(text)`` whatever the search path; and those one
  argument may call by field notation (``c.f`` is ``f(c)`` where c has no column f);
- the functions and operators' functions of operator families (classes): ``ORDER BY t``,
  ``GROUP BY t``, ``UNION``, a window's ``PARTITION BY t`` call the type's default btree
  comparison or hash function, with no operator or type in the text;
- views, by name, with their queries (``pg_get_viewdef``): selecting from one runs what its
  query calls or reads (``pg_read_file``, a user function, ``pg_file_settings``), judged
  where the view is named, as MariaDB's are;
- row-level security policies of every table with row security on, by their table's name,
  with their ``USING`` expressions: a read of the table runs them (a policy calling
  ``pg_read_file`` or a user function), judged where the table is named, as a view's query
  is; for every login, since a view reads as its owner, to whom they may apply;
- foreign tables, of every wrapper: ``file_fdw``'s run a program or read a server file on
  every read (``COPY FROM PROGRAM`` under another name), ``postgres_fdw``'s run a remote
  query as the login of their user mapping (a remote view calling ``pg_read_file``); and
  every table they inherit from or are a partition of (a read of a parent reads its
  children).
"""

# Constant SQL only: nothing here is built from a value.
from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from typing import Any

from rho_adapters.db.pg_privileged import privileged_refusals
from rho_domain.sql import CatalogCalls

# inner -> outer: the types whose values hold values of another (an array its element's, a
# domain its base type's, a composite or row type its fields', a range its subtype's).
_EDGES = """
edges(inner_type, outer_type) AS (
  SELECT t.typelem, t.oid FROM pg_catalog.pg_type t WHERE t.typelem <> 0 AND t.typlen = -1
  UNION ALL
  SELECT t.typbasetype, t.oid FROM pg_catalog.pg_type t WHERE t.typtype = 'd'
  UNION ALL
  SELECT a.atttypid, r.reltype FROM pg_catalog.pg_attribute a
  JOIN pg_catalog.pg_class r ON r.oid = a.attrelid
  WHERE a.attnum > 0 AND NOT a.attisdropped AND r.reltype <> 0
  UNION ALL
  SELECT g.rngsubtype, g.rngtypid FROM pg_catalog.pg_range g
  UNION ALL
  SELECT g.rngtypid, g.rngmultitypid FROM pg_catalog.pg_range g
)"""
# An operator runs its own function, its negator's (the planner rewrites NOT (a = b) as
# a <> b) and its commutator's (b > a for a < b): each is listed under its name, for a
# user operator and for a built-in one a user operator was made the negator of.
_OPERATORS = """
SELECT o.oprname::text, pn.nspname::text || '.' || p.proname::text
FROM pg_catalog.pg_operator o
JOIN pg_catalog.pg_operator r ON r.oid IN (o.oid, o.oprcom, o.oprnegate)
JOIN pg_catalog.pg_proc p ON p.oid = r.oprcode
JOIN pg_catalog.pg_namespace pn ON pn.oid = p.pronamespace
WHERE (o.oid >= 16384 OR r.oid >= 16384) AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_depend e
  WHERE e.classid = 'pg_catalog.pg_operator'::regclass AND e.objid IN (o.oid, r.oid)
  AND e.deptype = 'e')
"""
_CASTS = (
    "WITH RECURSIVE"  # noqa: S608 - constant fragments
    + _EDGES
    + """, named(base, typ) AS (
  SELECT t.oid, t.oid FROM pg_catalog.pg_type t
  WHERE t.oid IN (SELECT casttarget FROM pg_catalog.pg_cast WHERE oid >= 16384)
  UNION
  SELECT n.base, e.outer_type FROM named n JOIN edges e ON e.inner_type = n.typ
)
SELECT CASE WHEN c.castcontext IN ('i', 'a') THEN '' ELSE t.typname::text END,
  pn.nspname::text || '.' || p.proname::text
FROM pg_catalog.pg_cast c JOIN pg_catalog.pg_proc p ON p.oid = c.castfunc
JOIN pg_catalog.pg_namespace pn ON pn.oid = p.pronamespace
JOIN named n ON n.base = c.casttarget
JOIN pg_catalog.pg_type a ON a.oid = n.typ
JOIN pg_catalog.pg_type t ON t.oid = CASE WHEN a.typelem <> 0 AND a.typlen = -1
  THEN a.typelem ELSE a.oid END
WHERE c.oid >= 16384 AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_depend e
  WHERE e.classid = 'pg_catalog.pg_cast'::regclass AND e.objid = c.oid AND e.deptype = 'e')
"""
)
_DOMAIN_CHECKS = (
    "WITH RECURSIVE"  # noqa: S608 - constant fragments
    + _EDGES
    + """, holds(outer_type, domain_type) AS (
  SELECT DISTINCT k.contypid, k.contypid FROM pg_catalog.pg_constraint k
  WHERE k.contypid <> 0 AND k.contype = 'c'
  UNION
  SELECT e.outer_type, h.domain_type FROM holds h JOIN edges e ON e.inner_type = h.outer_type
)
SELECT t.typname::text, pg_catalog.pg_get_constraintdef(k.oid) FROM holds h
JOIN pg_catalog.pg_type t ON t.oid = h.outer_type
JOIN pg_catalog.pg_constraint k ON k.contypid = h.domain_type AND k.contype = 'c'
"""
)


_FUNCTIONS = """
SELECT p.proname::text, pn.nspname::text || '.' || p.proname::text
FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace pn ON pn.oid = p.pronamespace
WHERE p.oid >= 16384 AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_depend e
  WHERE e.classid = 'pg_catalog.pg_proc'::regclass AND e.objid = p.oid AND e.deptype = 'e')
"""
# Materialized views are left out: a read gives their stored rows, it runs no query.
_VIEWS = """
SELECT c.relname::text, pg_catalog.pg_get_viewdef(c.oid) FROM pg_catalog.pg_class c
WHERE c.relkind = 'v' AND c.oid >= 16384 AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_depend e
  WHERE e.classid = 'pg_catalog.pg_class'::regclass AND e.objid = c.oid AND e.deptype = 'e')
"""
# A read of a table reads its inheritance children and partitions too, so a foreign table
# is listed with every table above it (SELECT * FROM parent ran a child's program). Every
# wrapper, not file_fdw alone: a postgres_fdw table over a view calling pg_read_file, read
# as the login its user mapping names, gave a login without that right the server file.
_FILE_TABLES = """
WITH RECURSIVE files(relid, what) AS (
  SELECT f.ftrelid, COALESCE((SELECT CASE o.option_name WHEN 'program' THEN 'runs the program '
      ELSE 'reads the server file ' END || pg_catalog.quote_literal(o.option_value)
    FROM pg_catalog.pg_options_to_table(f.ftoptions) o
    WHERE o.option_name IN ('program', 'filename') LIMIT 1),
    'reads through the foreign server ' || pg_catalog.quote_ident(s.srvname) || ' ('
    || w.fdwname || ': give what it reaches an alias of its own), which runs what the '
    || 'check never sees (a remote view or function) as the login its user mapping names')
  FROM pg_catalog.pg_foreign_table f
  JOIN pg_catalog.pg_foreign_server s ON s.oid = f.ftserver
  JOIN pg_catalog.pg_foreign_data_wrapper w ON w.oid = s.srvfdw
), above(relid, child, what) AS (
  SELECT relid, relid, what FROM files
  UNION
  SELECT i.inhparent, a.child, a.what FROM above a
  JOIN pg_catalog.pg_inherits i ON i.inhrelid = a.relid
)
SELECT c.relname::text, CASE WHEN a.relid = a.child
  THEN 'the foreign table ' || c.relname || ' ' || a.what
  ELSE 'the table ' || c.relname || ' reads its child or partition ' || k.relname
    || ', a foreign table that ' || a.what END || ' on every read'
FROM above a JOIN pg_catalog.pg_class c ON c.oid = a.relid
JOIN pg_catalog.pg_class k ON k.oid = a.child
"""
# The policies a read of a table may run, as queries: every table with row security on,
# whoever the login is. Not only where row_security_active says they apply to this login (a
# superuser, a BYPASSRLS role, the table's owner): a view reads its tables as the view's
# owner, so a superuser's SELECT from a view another role owns ran that role's policies.
_POLICIES = """
SELECT c.relname::text, 'SELECT ' || pg_catalog.pg_get_expr(p.polqual, p.polrelid)
FROM pg_catalog.pg_policy p JOIN pg_catalog.pg_class c ON c.oid = p.polrelid
WHERE p.polcmd IN ('r', '*') AND p.polqual IS NOT NULL AND c.relrowsecurity
"""
_ONE_ARGUMENT = "  AND p.pronargs >= 1 AND p.pronargs - p.pronargdefaults <= 1"
# An operator family's members (the btree comparison, the hash, the operators a sort, a hash
# join or a DISTINCT looks up by the type): one is an extension's when its row, its family
# or an operator class of its family is.
_NOT_AN_EXTENSIONS_MEMBER = """NOT EXISTS (SELECT 1 FROM pg_catalog.pg_depend e
  WHERE e.deptype = 'e' AND (
    (e.classid = 'pg_catalog.{table}'::regclass AND e.objid = m.oid)
    OR (e.classid = 'pg_catalog.pg_opfamily'::regclass AND e.objid = m.{family})
    OR (e.classid = 'pg_catalog.pg_opclass'::regclass AND e.objid IN (
      SELECT c.oid FROM pg_catalog.pg_opclass c WHERE c.opcfamily = m.{family}))))"""
_COMPARISONS = (
    "SELECT pn.nspname::text || '.' || p.proname::text FROM pg_catalog.pg_amproc m "  # noqa: S608 - constant fragments
    "JOIN pg_catalog.pg_proc p ON p.oid = m.amproc "
    "JOIN pg_catalog.pg_namespace pn ON pn.oid = p.pronamespace WHERE m.oid >= 16384 AND "
    + _NOT_AN_EXTENSIONS_MEMBER.format(table="pg_amproc", family="amprocfamily")
    + " UNION SELECT pn.nspname::text || '.' || p.proname::text FROM pg_catalog.pg_amop m "
    "JOIN pg_catalog.pg_operator o ON o.oid = m.amopopr "
    "JOIN pg_catalog.pg_proc p ON p.oid = o.oprcode "
    "JOIN pg_catalog.pg_namespace pn ON pn.oid = p.pronamespace WHERE m.oid >= 16384 AND "
    + _NOT_AN_EXTENSIONS_MEMBER.format(table="pg_amop", family="amopfamily")
)


# Every row a CREATE, ALTER or RENAME of the objects above writes has a new xmin (its
# transaction's), so the count, sum and newest of the user rows' xmins change with any of
# them; a scan of the user oids only (index ranges), ~0.5 ms where catalog_calls takes ~10.
# Read before every statement, outside pg_catalog_only (three round trips less): every
# function, type and operator named by its schema.
_XMIN = "xmin::pg_catalog.text::pg_catalog.int8"
_USER_OID = "OPERATOR(pg_catalog.>=) 16384::pg_catalog.oid"
_VERSION = (
    "SELECT pg_catalog.count(*), pg_catalog.sum(x), pg_catalog.max(x) FROM ("  # noqa: S608
    + " UNION ALL ".join(
        f"SELECT {_XMIN} AS x FROM pg_catalog.{table} WHERE oid {_USER_OID}"  # noqa: S608
        for table in (
            "pg_proc",
            "pg_operator",
            "pg_cast",
            "pg_type",
            "pg_class",
            "pg_constraint",
            "pg_amop",
            "pg_amproc",
            "pg_namespace",
            "pg_policy",
        )
    )
    # a field's type (ALTER TYPE holder ALTER ATTRIBUTE v TYPE a_domain) changes no row above
    + f" UNION ALL SELECT {_XMIN} FROM pg_catalog.pg_attribute"  # noqa: S608
    f" WHERE attrelid {_USER_OID}"
    # nor does ALTER FOREIGN TABLE kid INHERIT parent of column-less tables when the parent
    # has a child already: its one new row is pg_inherits'
    f" UNION ALL SELECT {_XMIN} FROM pg_catalog.pg_inherits WHERE inhrelid {_USER_OID}) rows"
)


def catalog_version(conn: Any) -> tuple[Any, ...]:
    """A value that changes when an object ``catalog_calls`` reads is made, altered or
    renamed: the adapter reads the catalog again before a statement when it has, so a cast
    or function made while a session's connection is open is judged (not at its next
    connection only)."""
    return tuple(conn.execute(_VERSION, prepare=False).fetchall())


def catalog_calls(conn: Any) -> CatalogCalls:
    """The operators, casts, domain CHECKs, functions, views, policies and file tables of
    ``conn``'s database (``CatalogCalls``)."""

    def grouped(sql: str) -> dict[str, frozenset[str]]:
        found: dict[str, set[str]] = {}
        for name, function in conn.execute(sql, prepare=False).fetchall():
            found.setdefault(str(name), set()).add(str(function))
        return {name: frozenset(functions) for name, functions in found.items()}

    comparisons = conn.execute(_COMPARISONS, prepare=False).fetchall()
    return CatalogCalls(
        operators=grouped(_OPERATORS),
        types=grouped(_CASTS),
        checks=grouped(_DOMAIN_CHECKS),
        functions=grouped(_FUNCTIONS),
        fields=grouped(_FUNCTIONS + _ONE_ARGUMENT),
        comparisons=frozenset(str(row[0]) for row in comparisons),
        views=grouped(_VIEWS),
        policies=grouped(_POLICIES),
        refused_names={
            **{str(n): str(w) for n, w in conn.execute(_FILE_TABLES, prepare=False)},
            **privileged_refusals(conn),
        },
    )


@contextlib.contextmanager
def pg_catalog_only(conn: Any) -> Iterator[None]:
    """A transaction (on the autocommit connection) whose search path is ``pg_catalog``
    alone, for the harness's own reads: the server prefers a user's operator to a built-in
    when its argument types match better (``>=(oid, integer)`` for ``oid >= 16384``),
    whatever the search path, and finds none outside the path."""
    conn.execute("BEGIN", prepare=False)
    try:
        conn.execute("SET LOCAL search_path = pg_catalog", prepare=False)
        yield
    finally:
        if not conn.closed:
            conn.execute("ROLLBACK", prepare=False)


# pg_catalog's function names per server (address, database, version), read on the first
# connection and kept CATALOG_SECONDS: every Session opens its own connection, and the list
# (~3,000 names) changes only with the server's version or a superuser's extension.
CATALOG_SECONDS = 600.0
_catalogs: dict[tuple[object, ...], tuple[float, frozenset[str]]] = {}
_catalogs_lock = threading.Lock()


def catalog_functions(conn: Any) -> frozenset[str]:
    """The names of the functions ``pg_catalog`` defines on ``conn``'s server (kept)."""
    info = conn.info
    key = (info.host, info.port, info.dbname, info.user, info.server_version)
    with _catalogs_lock:
        known = _catalogs.get(key)
    if known is not None and time.monotonic() - known[0] < CATALOG_SECONDS:
        return known[1]
    rows = conn.execute(
        "SELECT DISTINCT proname::text FROM pg_catalog.pg_proc "
        "WHERE pronamespace = 'pg_catalog'::regnamespace",
        prepare=False,
    ).fetchall()
    names = frozenset(row[0] for row in rows)
    with _catalogs_lock:
        _catalogs[key] = (time.monotonic(), names)
    return names


def may_limit_temp_files(conn: Any) -> bool:
    """Whether this login may set ``temp_file_limit`` (a superuser, or PostgreSQL 15+ with
    ``GRANT SET ON PARAMETER temp_file_limit``); other logins rely on the role's setting."""
    if conn.info.parameter_status("is_superuser") == "on":
        return True
    if conn.info.server_version < 150000:
        return False
    row = conn.execute(
        "SELECT has_parameter_privilege('temp_file_limit', 'SET')", prepare=False
    ).fetchone()
    return bool(row and row[0])
