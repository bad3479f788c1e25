"""What in ``pg_catalog`` was made or changed after initdb: every statement is then refused.

The adapter's own catalog reads and its wrapping of the statement resolve names in
``pg_catalog`` and meet its functions, operators, casts and views with no name in the
text; one made there, or a built-in replaced or re-pointed, is met by every statement
(``CatalogCalls.system_made``). ``SYSTEM_MADE`` finds what DDL made or replaced there,
``pg_rewritten.REPOINTED`` what a write of the catalog itself re-pointed.
"""

# Constant SQL only: nothing here is built from a value.
from __future__ import annotations

from typing import Any

from rho_adapters.db.pg_extension_members import (
    function_made_by_script,
    function_trusted,
    made_by_script,
)
from rho_adapters.db.pg_rewritten import FRONTIER, REPOINTED

# Functions and operators made in pg_catalog after initdb, not by an extension's script
# (pg_extension_members: ALTER EXTENSION plpgsql ADD FUNCTION made any one a member); and the
# built-in functions (not internal or C) and views of pg_catalog and information_schema whose
# row changed since initdb (CREATE OR REPLACE keeps a built-in's oid: a view pg_tables or a
# SQL function to_timestamp(float8) made to call a user function ran it for a read), known
# by a row newer than initdb's databases' (FRONTIER), which it writes after every built-in
# (one changed while a connection is open is seen before the next statement:
# catalog_version reads those rows' xmins too). Every name
# and comparison here is exact (OPERATOR(pg_catalog.=), typed literals): what it looks for
# may be an operator such as pg_catalog.>=(oid, integer), which, made to answer false, hid
# every user function from the queries above (their "p.oid >= 16384").
_EXACT_MADE = """{alias}.oid OPERATOR(pg_catalog.>=) '16384'::pg_catalog.oid
  AND {alias}.{schema} OPERATOR(pg_catalog.=) 'pg_catalog'::pg_catalog.regnamespace::pg_catalog.oid
  AND NOT {made}"""
_CHANGED = (
    """{alias}.oid OPERATOR(pg_catalog.<) '16384'::pg_catalog.oid
  AND ({schema} OPERATOR(pg_catalog.=) 'pg_catalog'::pg_catalog.regnamespace::pg_catalog.oid
    OR {schema} OPERATOR(pg_catalog.=)
      'information_schema'::pg_catalog.regnamespace::pg_catalog.oid)
  AND pg_catalog.int8in(pg_catalog.xidout({alias}.xmin)) OPERATOR(pg_catalog.>) """
    + FRONTIER
)
SYSTEM_MADE = (
    "SELECT pg_catalog.quote_ident(n.nspname) OPERATOR(pg_catalog.||) '.'::pg_catalog.text "  # noqa: S608 - constant fragments
    "OPERATOR(pg_catalog.||) p.proname::pg_catalog.text OPERATOR(pg_catalog.||) "
    "'('::pg_catalog.text OPERATOR(pg_catalog.||) "
    "pg_catalog.pg_get_function_identity_arguments(p.oid) OPERATOR(pg_catalog.||) "
    "')'::pg_catalog.text FROM pg_catalog.pg_proc p "
    "JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) p.pronamespace WHERE ("
    + _EXACT_MADE.format(alias="p", schema="pronamespace", made=function_made_by_script("p"))
    + ") OR ("
    # internal and C (pg_language's fixed oids 12 and 13) first: ~60 built-ins are left
    + "p.prolang OPERATOR(pg_catalog.<>) '12'::pg_catalog.oid"
    " AND p.prolang OPERATOR(pg_catalog.<>) '13'::pg_catalog.oid AND "
    + _CHANGED.format(alias="p", schema="p.pronamespace")
    + ")"
    " UNION ALL SELECT 'pg_catalog.'::pg_catalog.text OPERATOR(pg_catalog.||) "
    "o.oprname::pg_catalog.text "
    "OPERATOR(pg_catalog.||) '('::pg_catalog.text OPERATOR(pg_catalog.||) "
    "pg_catalog.format_type(o.oprleft, NULL) OPERATOR(pg_catalog.||) ', '::pg_catalog.text "
    "OPERATOR(pg_catalog.||) pg_catalog.format_type(o.oprright, NULL) "
    "OPERATOR(pg_catalog.||) ')'::pg_catalog.text "
    "FROM pg_catalog.pg_operator o WHERE "
    + _EXACT_MADE.format(
        alias="o",
        schema="oprnamespace",
        made="("
        + made_by_script("pg_operator", "o", "o.oprowner")
        + " AND EXISTS (SELECT FROM pg_catalog.pg_proc f WHERE f.oid OPERATOR(pg_catalog.=) "
        + "o.oprcode AND "
        + function_trusted("f")
        + "))",
    )
    # a schema of a built-in's name made after initdb (the built-in renamed away): the
    # harness's own reads name information_schema's views, and a new one's ran a user
    # function for list_tables
    + " UNION ALL SELECT 'the schema '::pg_catalog.text OPERATOR(pg_catalog.||) "
    "pg_catalog.quote_ident(s.nspname) FROM pg_catalog.pg_namespace s WHERE "
    "s.oid OPERATOR(pg_catalog.>=) '16384'::pg_catalog.oid AND s.nspname "
    "OPERATOR(pg_catalog.=) ANY ('{pg_catalog,information_schema,pg_toast}'::pg_catalog.name[])"
    + " UNION ALL SELECT 'the view '::pg_catalog.text OPERATOR(pg_catalog.||) "
    "pg_catalog.quote_ident(n.nspname) OPERATOR(pg_catalog.||) '.'::pg_catalog.text "
    "OPERATOR(pg_catalog.||) pg_catalog.quote_ident(c.relname) FROM pg_catalog.pg_rewrite r "
    "JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) r.ev_class "
    "JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace WHERE "
    + _CHANGED.format(alias="r", schema="c.relnamespace")
)


def system_made(conn: Any) -> frozenset[str]:
    """What ``CatalogCalls.system_made`` lists for ``conn``'s database: ``SYSTEM_MADE``'s
    functions, operators and views, and the built-ins a catalog write re-pointed
    (``REPOINTED``), in one round trip."""
    both = f"{SYSTEM_MADE} UNION ALL {REPOINTED}"
    return frozenset(str(row[0]) for row in conn.execute(both, prepare=False))
