"""The catalog queries ``pg_catalog_calls`` runs, as constant SQL (nothing here is built from
a value): the user's operators, casts, domain CHECKs, functions (and those one argument may
call by field notation), views, row-level security policies, foreign tables and operator
families' members, each listed with the functions it runs (see ``pg_catalog_calls`` for what
each means to the statement check), and ``VERSION``, whose answer changes when any of them
is made, altered or renamed. Objects made by an extension's script are left out, as its
functions are (``pg_extension_members``). Run on a transaction whose search path is
``pg_catalog`` alone.
"""

from __future__ import annotations

from rho_adapters.db.pg_extension_members import (
    family_made_by_script,
    function_trusted,
    made_by_script,
    operator_trusted,
)

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
OPERATORS = (
    """
SELECT o.oprname::text, pn.nspname::text || '.' || p.proname::text
FROM pg_catalog.pg_operator o
JOIN pg_catalog.pg_operator r ON r.oid IN (o.oid, o.oprcom, o.oprnegate)
JOIN pg_catalog.pg_proc p ON p.oid = r.oprcode
JOIN pg_catalog.pg_namespace pn ON pn.oid = p.pronamespace
WHERE (o.oid >= 16384 OR r.oid >= 16384) AND NOT ("""
    + " AND ".join((operator_trusted("o"), operator_trusted("r"), function_trusted("p")))
    + ")"
)
CASTS = (
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
WHERE c.oid >= 16384 AND NOT ("""
    + made_by_script("pg_cast", "c", None)
    + " AND "
    + function_trusted("p")
    + ")"
)
DOMAIN_CHECKS = (
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


FUNCTIONS = """
SELECT p.proname::text, pn.nspname::text || '.' || p.proname::text
FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace pn ON pn.oid = p.pronamespace
WHERE p.oid >= 16384 AND NOT """ + function_trusted("p")
# Materialized views are left out: a read gives their stored rows, it runs no query.
VIEWS = (
    "SELECT c.relname::text, pg_catalog.pg_get_viewdef(c.oid) FROM pg_catalog.pg_class c "  # noqa: S608 - constant fragments
    "WHERE c.relkind = 'v' AND c.oid >= 16384 AND NOT "
    + made_by_script(
        "pg_class",
        "c",
        "c.relowner",
        # what it runs: its rule (CREATE OR REPLACE VIEW writes it, a GRANT its pg_class row)
        "(SELECT w.xmin FROM pg_catalog.pg_rewrite w WHERE w.ev_class = c.oid LIMIT 1)",
    )
)
# A read of a table reads its inheritance children and partitions too, so a foreign table
# is listed with every table above it (SELECT * FROM parent ran a child's program). Every
# wrapper, not file_fdw alone: a postgres_fdw table over a view calling pg_read_file, read
# as the login its user mapping names, gave a login without that right the server file.
FILE_TABLES = """
WITH RECURSIVE files(relid, what) AS (
  SELECT f.ftrelid, COALESCE((SELECT CASE o.option_name WHEN 'program' THEN 'runs the command '
      || 'its program option names (not shown: a command line may hold a password)'
      ELSE 'reads the server file ' || pg_catalog.quote_literal(o.option_value) END
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
# A foreign table's column options (attfdwoptions), kept by a wrapper without a validator
# whatever they hold, a password too: pg_attribute shows them in a whole row (SELECT *,
# TABLE pg_attribute, row_to_json(a)) with no column named, so where one column has any,
# pg_attribute is refused by name (its options views and attfdwoptions are, everywhere).
COLUMN_OPTIONS = """
SELECT 'pg_attribute', 'pg_attribute shows the options of the columns of foreign tables ('
  || pg_catalog.string_agg(DISTINCT c.relname::text, ', ') || ': attfdwoptions), where a '
  || 'wrapper keeps what it is given, a password too: the agent does not read it in this '
  || 'database; information_schema.columns lists the columns without their options'
FROM pg_catalog.pg_attribute a JOIN pg_catalog.pg_class c ON c.oid = a.attrelid
WHERE a.attfdwoptions IS NOT NULL HAVING pg_catalog.count(*) > 0
"""
# The settings stored for roles and databases (pg_db_role_setting, shared by the cluster's
# databases): pg_roles and pg_user show a role's in a whole row (rolconfig, useconfig), to
# every login. Where one of them is an extension's or an application's (its name dotted:
# ALTER ROLE app SET app.password = '...'; the built-in ones, search_path or work_mem, hold
# no credential), both views are refused by name (rolconfig and the catalog are, always).
ROLE_SETTINGS = """
SELECT v.name, v.name || ' shows the settings stored for every role (rolconfig), and one '
  || 'of them here is an application''s or an extension''s (a dotted name), which may hold '
  || 'a password: the agent does not read it; pg_catalog.pg_get_userbyid(oid) names a role, '
  || 'and pg_has_role tells membership'
FROM (VALUES ('pg_roles'), ('pg_user')) v(name)
WHERE EXISTS (SELECT 1 FROM pg_catalog.pg_db_role_setting s,
  pg_catalog.unnest(s.setconfig) c
  WHERE pg_catalog.strpos(pg_catalog.split_part(c, '=', 1), '.') > 0)
"""
# The policies a read of a table may run, as queries: every table with row security on,
# whoever the login is. Not only where row_security_active says they apply to this login (a
# superuser, a BYPASSRLS role, the table's owner): a view reads its tables as the view's
# owner, so a superuser's SELECT from a view another role owns ran that role's policies.
POLICIES = """
SELECT c.relname::text, 'SELECT ' || pg_catalog.pg_get_expr(p.polqual, p.polrelid)
FROM pg_catalog.pg_policy p JOIN pg_catalog.pg_class c ON c.oid = p.polrelid
WHERE p.polcmd IN ('r', '*') AND p.polqual IS NOT NULL AND c.relrowsecurity
"""
# What the planner computes for a read of a table, with no call in the text: it folds every
# call with constant arguments (an IMMUTABLE user function, whatever it does) in the
# expressions of the table's indexes (and partial indexes' predicates), of its partition key
# and (14+) of its extended statistics when it loads them, and in its CHECKs where it is
# scanned as a member of an append (constraint exclusion: a child or partition under its
# parent, a branch of a UNION ALL subquery, a view's too): SELECT * FROM t ran
# probe_ran(1) of an index on (x + probe_ran(1)). Listed by the name of every table whose
# read plans them, as queries ("SELECT <expressions>"), as policies are, with the server's
# stored tree (pg_planned reads which calls it may fold).
PLANNED = """
WITH RECURSIVE own(relid, expr, tree) AS (
  SELECT i.indrelid, pg_catalog.pg_get_expr(i.indexprs, i.indrelid), i.indexprs::text
  FROM pg_catalog.pg_index i WHERE i.indexprs IS NOT NULL
  UNION ALL
  SELECT i.indrelid, pg_catalog.pg_get_expr(i.indpred, i.indrelid), i.indpred::text
  FROM pg_catalog.pg_index i WHERE i.indpred IS NOT NULL
  UNION ALL
  SELECT p.partrelid, pg_catalog.pg_get_expr(p.partexprs, p.partrelid), p.partexprs::text
  FROM pg_catalog.pg_partitioned_table p WHERE p.partexprs IS NOT NULL
  UNION ALL
  SELECT k.conrelid, pg_catalog.pg_get_expr(k.conbin, k.conrelid), k.conbin::text
  FROM pg_catalog.pg_constraint k WHERE k.contype = 'c' AND k.conrelid <> 0
  {statistics}
), above(relid, expr, tree) AS (
  SELECT relid, expr, tree FROM own
  UNION
  SELECT h.inhparent, a.expr, a.tree FROM above a
  JOIN pg_catalog.pg_inherits h ON h.inhrelid = a.relid
)
SELECT c.relname::text, 'SELECT ' || a.expr, a.tree FROM above a
JOIN pg_catalog.pg_class c ON c.oid = a.relid
"""
STATISTICS = """UNION ALL
  SELECT s.stxrelid, pg_catalog.pg_get_expr(s.stxexprs, s.stxrelid), s.stxexprs::text
  FROM pg_catalog.pg_statistic_ext s WHERE s.stxexprs IS NOT NULL"""
# The functions a planned tree names by oid (pg_planned.Function), $1 their oids.
PLANNED_FUNCTIONS = """
SELECT p.oid::int8, pg_catalog.quote_ident(pn.nspname) || '.' || pg_catalog.quote_ident(p.proname),
  p.oid >= 16384, l.lanname = 'sql' OR p.pronargdefaults > 0, p.provolatile = 'i'
FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace pn ON pn.oid = p.pronamespace
JOIN pg_catalog.pg_language l ON l.oid = p.prolang
WHERE p.oid = ANY(%s::pg_catalog.oid[])
"""
# The types an I/O conversion names (pg_planned.Type), $1 their oids: per type, the input and
# output functions of every type its values hold, and whether one of those is a domain.
TYPE_IO = """
WITH RECURSIVE held(top, t) AS (
  SELECT o, o FROM pg_catalog.unnest(%s::pg_catalog.oid[]) o
  UNION
  SELECT h.top, x.t FROM held h JOIN pg_catalog.pg_type ty ON ty.oid = h.t
  CROSS JOIN LATERAL (
    SELECT ty.typbasetype WHERE ty.typbasetype <> 0
    UNION ALL SELECT ty.typelem WHERE ty.typelem <> 0
    UNION ALL SELECT a.atttypid FROM pg_catalog.pg_attribute a
      WHERE ty.typrelid <> 0 AND a.attrelid = ty.typrelid AND a.attnum > 0
    UNION ALL SELECT r.rngsubtype FROM pg_catalog.pg_range r WHERE r.rngtypid = ty.oid
    UNION ALL SELECT r.rngtypid FROM pg_catalog.pg_range r WHERE r.rngmultitypid = ty.oid
  ) x(t)
)
SELECT h.top::int8,
  pg_catalog.array_agg(ty.typinput::pg_catalog.oid::int8)
    || pg_catalog.array_agg(ty.typoutput::pg_catalog.oid::int8),
  pg_catalog.bool_or(ty.typtype = 'd')
FROM held h JOIN pg_catalog.pg_type ty ON ty.oid = h.t GROUP BY h.top
"""
ONE_ARGUMENT = "  AND p.pronargs >= 1 AND p.pronargs - p.pronargdefaults <= 1"
# An operator family's members (the btree comparison, the hash, the operators a sort, a hash
# join or a DISTINCT looks up by the type): one is an extension's when its script wrote its
# row and its function (pg_extension_members).
COMPARISONS = (
    "SELECT pn.nspname::text || '.' || p.proname::text FROM pg_catalog.pg_amproc m "  # noqa: S608 - constant fragments
    "JOIN pg_catalog.pg_proc p ON p.oid = m.amproc "
    "JOIN pg_catalog.pg_namespace pn ON pn.oid = p.pronamespace WHERE m.oid >= 16384 AND "
    + f"NOT ({family_made_by_script('pg_amproc', 'amprocfamily')} AND {function_trusted('p')})"
    + " UNION SELECT pn.nspname::text || '.' || p.proname::text FROM pg_catalog.pg_amop m "
    "JOIN pg_catalog.pg_operator o ON o.oid = m.amopopr "
    "JOIN pg_catalog.pg_proc p ON p.oid = o.oprcode "
    "JOIN pg_catalog.pg_namespace pn ON pn.oid = p.pronamespace WHERE m.oid >= 16384 AND "
    + f"NOT ({family_made_by_script('pg_amop', 'amopfamily')} AND {function_trusted('p')})"
)


# Every row a CREATE, ALTER or RENAME of the objects above writes has a new xmin (its
# transaction's), so the count, sum and newest of the user rows' xmins change with any of
# them; a scan of the user oids only (index ranges), ~0.5 ms where catalog_calls takes ~10.
# Read before every statement, outside pg_catalog_only (three round trips less): every
# function, type and operator named by its schema, and xmin converted by the I/O functions
# themselves: xid -> text and text -> int8 have no cast in pg_cast, so a superuser may add
# one (CREATE CAST (xid AS text) WITH FUNCTION public.f(xid) ran f before every statement).
_XMIN = "pg_catalog.int8in(pg_catalog.xidout(xmin))"
_USER_OID = "OPERATOR(pg_catalog.>=) 16384::pg_catalog.oid"
VERSION = (
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
            "pg_statistic_ext",  # CREATE STATISTICS changes no row of its table
            # a view's query: CREATE OR REPLACE RULE "_RETURN" ... ON SELECT TO v replaces
            # it changing no row above (an open connection judged the old query)
            "pg_rewrite",
        )
    )
    # a field's type (ALTER TYPE holder ALTER ATTRIBUTE v TYPE a_domain) changes no row above
    + f" UNION ALL SELECT {_XMIN} FROM pg_catalog.pg_attribute"  # noqa: S608
    f" WHERE attrelid {_USER_OID}"
    # nor does ALTER FOREIGN TABLE kid INHERIT parent of column-less tables when the parent
    # has a child already: its one new row is pg_inherits'
    f" UNION ALL SELECT {_XMIN} FROM pg_catalog.pg_inherits WHERE inhrelid {_USER_OID}"
    # nor does ALTER ROLE ... SET (ROLE_SETTINGS): the shared catalog has no oid, few rows
    f" UNION ALL SELECT {_XMIN} FROM pg_catalog.pg_db_role_setting"
    # (a built-in replaced or re-pointed, keeping its oid: pg_rewritten.VERSION)
     + ") rows"
)
