"""What a PostgreSQL database runs with no call in the text, read from its catalog.

``catalog_calls(conn)`` gives the statement check (``rho_domain.sql.catalog_calls``) the
operators, casts and domain CHECKs of this database that a read could set off: the check
refuses a statement naming one whose functions are off the allowlist, as it refuses the call.
Read on every new connection (a few milliseconds), and again before a statement when
``pg_catalog_version`` says the catalog changed, so one an administrator (or any role that may
create in the database) adds is seen by the next statement.

Listed: objects made after initdb (oid >= FirstNormalObjectId), and not by an extension's
script (its objects are its installer's, as its functions are; membership alone is not that:
``pg_extension_members``):

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
- the calls the planner may run for a read of a table, folding its indexes' expressions and
  predicates, its partition key's, its extended statistics' (14+), its CHECKs (folded where
  it is a member of an append) and its children's and partitions', as queries, by the name
  of every table whose read plans them: a call with arguments that fold to constants (an
  IMMUTABLE user function) and a SQL function (inlined, its body folded), read from the
  stored tree (``pg_planned``); a call over a column is not listed;
- row-level security policies of every table with row security on, by their table's name,
  with their ``USING`` expressions: a read of the table runs them (a policy calling
  ``pg_read_file`` or a user function), judged where the table is named, as a view's query
  is; for every login, since a view reads as its owner, to whom they may apply;
- foreign tables, of every wrapper: ``file_fdw``'s run a program or read a server file on
  every read (``COPY FROM PROGRAM`` under another name), ``postgres_fdw``'s run a remote
  query as the login of their user mapping (a remote view calling ``pg_read_file``); and
  every table they inherit from or are a partition of (a read of a parent reads its
  children);
- ``pg_attribute``, where a foreign table's column has options (``attfdwoptions``): a
  whole row shows them, and a wrapper without a validator keeps a password there;
- ``pg_roles`` and ``pg_user``, where a role or a database has a setting of an application's
  or an extension's stored (``ALTER ROLE app SET app.password = ...``): a whole row shows
  every role's (``rolconfig``), to every login.
"""

# Constant SQL only: nothing here is built from a value.
from __future__ import annotations

import contextlib
import re
import threading
import time
from collections.abc import Iterator
from typing import Any

from rho_adapters.db import pg_catalog_queries as query
from rho_adapters.db import pg_rewritten
from rho_adapters.db.pg_planned import TYPE_FIELD, Function, Type, planned_calls
from rho_adapters.db.pg_privileged import privileged_refusals
from rho_adapters.db.pg_system_made import system_made
from rho_domain.sql import CatalogCalls

# A string literal as the server writes one into a view's query, a policy's or a CHECK's
# expression (ruleutils' simple_quote_literal: quotes doubled, and backslashes too where
# standard_conforming_strings is off; never E''), or a quoted name, which is kept.
_LITERALS = {
    "on": re.compile(r"""("(?:[^"]|"")*")|'(?:[^']|'')*'"""),
    "off": re.compile(r"""("(?:[^"]|"")*")|'(?:[^'\\]|''|\\.)*'"""),
}


def judged_text(text: str, standard_conforming_strings: str) -> str:
    r"""``text`` as the server wrote it, with every string literal emptied: a literal calls
    nothing, and one ending in a backslash (``'C:\'``) reads otherwise where backslashes
    escape, a reading the check must pass too, so its view was refused as unreadable."""
    found = _LITERALS["off" if standard_conforming_strings == "off" else "on"]
    return found.sub(lambda literal: literal[1] or "''", text)


def catalog_calls(conn: Any) -> CatalogCalls:
    """The operators, casts, domain CHECKs, functions, views, policies and file tables of
    ``conn``'s database (``CatalogCalls``)."""
    scs = str(conn.info.parameter_status("standard_conforming_strings"))

    def grouped(sql: str, *, texts: bool = False) -> dict[str, frozenset[str]]:
        found: dict[str, set[str]] = {}
        for name, function in conn.execute(sql, prepare=False).fetchall():
            judged = judged_text(str(function), scs) if texts else str(function)
            found.setdefault(str(name), set()).add(judged)
        return {name: frozenset(functions) for name, functions in found.items()}

    statistics = query.STATISTICS if conn.info.server_version >= 140000 else ""
    comparisons = conn.execute(query.COMPARISONS, prepare=False).fetchall()
    return CatalogCalls(
        operators=grouped(query.OPERATORS),
        types=grouped(query.CASTS),
        checks=grouped(query.DOMAIN_CHECKS, texts=True),
        functions=grouped(query.FUNCTIONS),
        fields=grouped(query.FUNCTIONS + query.ONE_ARGUMENT),
        comparisons=frozenset(str(row[0]) for row in comparisons),
        views=grouped(query.VIEWS, texts=True),
        policies=grouped(query.POLICIES, texts=True),
        planned=_planned(conn, query.PLANNED.format(statistics=statistics), scs),
        refused_names={
            **{str(n): str(w) for n, w in conn.execute(query.FILE_TABLES, prepare=False)},
            **{str(n): str(w) for n, w in conn.execute(query.COLUMN_OPTIONS, prepare=False)},
            **{str(n): str(w) for n, w in conn.execute(query.ROLE_SETTINGS, prepare=False)},
            **privileged_refusals(conn),
            **pg_rewritten.rewritten_functions(conn),
        },
        system_made=system_made(conn),
    )


_OID = re.compile(r":(?:func|opfunc|hashfunc|negfunc)id (\d+)")


def _planned(conn: Any, sql: str, scs: str) -> dict[str, frozenset[str]]:
    """Per table, the calls the planner may run folding what a read of it plans, as a query
    the check judges (``SELECT public.f()``): those ``pg_planned`` finds in the stored tree,
    or every call the expression's text makes where it cannot read the tree."""
    rows = conn.execute(sql, prepare=False).fetchall()
    types = _conversion_types(conn, [str(row[2]) for row in rows])
    called = {int(oid) for row in rows for oid in _OID.findall(str(row[2]))}
    oids = sorted(called.union(*(held.io for held in types.values())))
    functions = {
        int(oid): Function(str(name), bool(user), bool(sql_language), bool(immutable))
        for oid, name, user, sql_language, immutable in conn.execute(
            query.PLANNED_FUNCTIONS, (oids,), prepare=False
        )
    }
    found: dict[str, set[str]] = {}
    for name, text, tree in rows:
        calls = planned_calls(str(tree), functions, types)
        if calls is None:
            found.setdefault(str(name), set()).add(judged_text(str(text), scs))
        elif calls:
            found.setdefault(str(name), set()).add(
                "SELECT " + ", ".join(f"{call}()" for call in sorted(calls))
            )
    return {name: frozenset(queries) for name, queries in found.items()}


_TYPE_OID = re.compile(rf":(?:{TYPE_FIELD.pattern}) (\d+)")


def _conversion_types(conn: Any, trees: list[str]) -> dict[int, Type]:
    """The types the trees holding an I/O conversion name (``pg_planned.Type``), read only
    where one does (none: no round trip)."""
    oids = sorted(
        {int(o) for tree in trees if "{COERCEVIAIO " in tree for o in _TYPE_OID.findall(tree)}
    )
    if not oids:
        return {}
    rows = conn.execute(query.TYPE_IO, (oids,), prepare=False).fetchall()
    return {int(oid): Type(tuple(int(f) for f in io), bool(domain)) for oid, io, domain in rows}


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
