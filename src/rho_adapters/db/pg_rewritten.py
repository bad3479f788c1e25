"""Built-in catalog rows written after initdb: what a direct catalog write re-points.

A superuser may write the catalog itself: ``UPDATE pg_operator SET oprcode =
'public.evil'::regproc`` for ``+(integer, integer)`` made ``SELECT 1 + 2`` run a user
function, and so did a built-in cast's ``castfunc``, ``count(any)``'s transition function
(``pg_aggregate``) and ``abs(integer)``'s row renamed away with ``pg_cancel_backend``'s
renamed to ``abs`` (``SELECT abs(123)`` signalled a backend). No DDL rewrites these rows:
``CREATE OR REPLACE`` of a built-in is ``SYSTEM_MADE``'s, a built-in view's rule too.

So a built-in row (oid below FirstNormalObjectId, 16384) of a catalog that says what a read
runs, written by a transaction newer than initdb's (``FRONTIER``), is a re-pointed built-in:

- ``REPOINTED`` (operators, casts, types' functions, aggregates, operator classes and
  families and their members, access methods, ranges, conversions, text search parsers and
  templates): no DDL writes these rows of a built-in (measured on PostgreSQL 15: the 47
  extensions it ships, created in one database, rewrote none), and what they run is met
  with no name in the text (``ORDER BY``, ``count(*)``, a cast), so every statement is
  refused, as for ``SYSTEM_MADE``;
- a built-in function whose planner support function is none of PostgreSQL's (it runs
  for an operator's call too: ``SELECT a + 1`` ran one re-pointed to a user function);
- ``REWRITTEN_FUNCTIONS`` (``pg_proc``, internal and C: a SQL or PL/pgSQL one is
  ``SYSTEM_MADE``'s): a ``GRANT`` or ``REVOKE``, which administrators do, rewrites the row
  and not what it runs, and a rename, a new default or support function does, which the
  row alone cannot tell apart: the function is refused by name, wherever it is written.

``FRONTIER`` is the oldest row of initdb's own databases (template1, template0, postgres):
an ``ALTER DATABASE`` of one of them (or a write of template0's row) moves only that one.
``VERSION`` changes when such a row is written, so a write made while a connection is open
is seen before the next statement. A superuser who writes the catalog may also rewrite what
these queries rely on (all three databases' rows, the functions they call): this finds a
re-pointed built-in, not a forger of the catalog (docs/security.md).

Constant SQL only; every name and comparison exact (``OPERATOR(pg_catalog.=)``).
"""

from __future__ import annotations

from typing import Any

_XMIN = "pg_catalog.int8in(pg_catalog.xidout({row}.xmin))"
FRONTIER = (
    "(SELECT pg_catalog.min(pg_catalog.int8in(pg_catalog.xidout(d.xmin)))"
    " FROM pg_catalog.pg_database d WHERE d.oid OPERATOR(pg_catalog.<) '16384'::pg_catalog.oid)"
)
_TEXT = "::pg_catalog.text"
_CAT = " OPERATOR(pg_catalog.||) "
# (catalog, its key column, how a refusal names a row)
_CATALOGS = (
    ("pg_operator", "oid", f"'the operator '{_TEXT}{_CAT}r.oid::pg_catalog.regoperator{_TEXT}"),
    (
        "pg_cast",
        "oid",
        f"'the cast from '{_TEXT}{_CAT}pg_catalog.format_type(r.castsource, NULL){_CAT}"
        f"' to '{_TEXT}{_CAT}pg_catalog.format_type(r.casttarget, NULL)",
    ),
    ("pg_type", "oid", f"'the type '{_TEXT}{_CAT}pg_catalog.format_type(r.oid, NULL)"),
    (
        "pg_aggregate",
        "aggfnoid",
        f"'the aggregate '{_TEXT}{_CAT}r.aggfnoid::pg_catalog.regprocedure{_TEXT}",
    ),
    *(
        (table, "oid", f"'the {table} row '{_TEXT}{_CAT}r.oid{_TEXT}")
        for table in (
            "pg_amop",
            "pg_amproc",
            "pg_opclass",
            "pg_opfamily",
            "pg_am",
            "pg_conversion",
            "pg_ts_parser",
            "pg_ts_template",
        )
    ),
    ("pg_range", "rngtypid", f"'the range '{_TEXT}{_CAT}pg_catalog.format_type(r.rngtypid, NULL)"),
)
# A bootstrap row (xmin 1, most of them) is initdb's: no conversion for it.
_BOOTSTRAP = "r.xmin OPERATOR(pg_catalog.<>) '1'::pg_catalog.xid"
_WRITTEN = (
    "{key} OPERATOR(pg_catalog.<) '16384'::pg_catalog.oid"
    f" AND {_BOOTSTRAP} AND " + _XMIN.format(row="r") + f" OPERATOR(pg_catalog.>) {FRONTIER}"
)
# internal and C (pg_language's fixed oids 12 and 13): the rest is SYSTEM_MADE's
_FUNCTION = (
    "(r.prolang OPERATOR(pg_catalog.=) '12'::pg_catalog.oid"
    " OR r.prolang OPERATOR(pg_catalog.=) '13'::pg_catalog.oid) AND "
)
# A built-in function's planner support function runs wherever the planner meets a call of
# it, through an operator too, with no name in the text (int4pl's re-pointed to a user
# function ran it for ``SELECT a + 1``): one that is not a built-in support function
# (taking and returning ``internal``, as only C may) refuses every statement.
_INTERNAL = "'pg_catalog.internal'::pg_catalog.regtype::pg_catalog.oid"
_SUPPORTED = (
    f"SELECT 'the support function of '{_TEXT}{_CAT}r.oid::pg_catalog.regprocedure{_TEXT}"  # noqa: S608
    " FROM pg_catalog.pg_proc r WHERE r.oid OPERATOR(pg_catalog.<) '16384'::pg_catalog.oid"
    " AND r.prosupport OPERATOR(pg_catalog.<>) '0'::pg_catalog.oid AND NOT EXISTS (SELECT"
    " FROM pg_catalog.pg_proc s WHERE s.oid OPERATOR(pg_catalog.=) r.prosupport"
    " AND s.oid OPERATOR(pg_catalog.<) '16384'::pg_catalog.oid"
    f" AND s.prorettype OPERATOR(pg_catalog.=) {_INTERNAL}"
    f" AND s.pronargs OPERATOR(pg_catalog.=) '1'::pg_catalog.int2"
    f" AND s.proargtypes[0] OPERATOR(pg_catalog.=) {_INTERNAL})"
)
REPOINTED = " UNION ALL ".join(
    (
        *(
            f"SELECT {name} FROM pg_catalog.{table} r WHERE "  # noqa: S608 - constant fragments
            + _WRITTEN.format(key=f"r.{key}")
            for table, key, name in _CATALOGS
        ),
        _SUPPORTED,
    )
)
REWRITTEN_FUNCTIONS = (
    "SELECT r.proname::pg_catalog.text, pg_catalog.quote_ident(n.nspname)"  # noqa: S608
    f"{_CAT}'.'{_TEXT}{_CAT}r.oid::pg_catalog.regprocedure{_TEXT}"
    " FROM pg_catalog.pg_proc r JOIN pg_catalog.pg_namespace n"
    " ON n.oid OPERATOR(pg_catalog.=) r.pronamespace WHERE "
    + _FUNCTION
    + _WRITTEN.format(key="r.oid")
)
# Every built-in row newer than initdb's of these catalogs, pg_proc's of any language (a
# replaced SQL function, SYSTEM_MADE's) and the built-in views' rules: one filter after the
# union (one frontier read, not one a catalog); the scans are most of its cost (~6,000 rows,
# ~5,500 of them bootstrap rows).
VERSION = (
    "SELECT pg_catalog.count(*), pg_catalog.sum(w.x) FROM ("  # noqa: S608 - constant fragments
    + " UNION ALL ".join(
        f"SELECT {_XMIN.format(row='r')} AS x FROM pg_catalog.{table} r"  # noqa: S608
        f" WHERE r.{key} OPERATOR(pg_catalog.<) '16384'::pg_catalog.oid AND {_BOOTSTRAP}"
        for table, key, _ in (*_CATALOGS, ("pg_proc", "oid", ""), ("pg_rewrite", "oid", ""))
    )
    + f") w WHERE w.x OPERATOR(pg_catalog.>) {FRONTIER}"
)
_WHY = (
    " was rewritten after this database was set up (its catalog row written since "
    "initdb, not by DDL that keeps what it runs: a GRANT or REVOKE does that too), so "
    "it may run something else than PostgreSQL's own: the agent does not call it "
    "here (its row stays newer even with its values put back: a dump of the database "
    "restored into a new one reads it)"
)


def rewritten_functions(conn: Any) -> dict[str, str]:
    """The internal and C built-in functions of ``conn``'s database whose ``pg_proc`` row was
    written after initdb, by name, each with the whole reason (``conn`` is a psycopg
    connection inside ``pg_catalog_only``)."""
    rows = conn.execute(REWRITTEN_FUNCTIONS, prepare=False).fetchall()
    return {str(name): f"{shown}{_WHY}" for name, shown in rows}
