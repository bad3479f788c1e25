"""Which of a PostgreSQL database's objects its extensions' scripts made, as constant SQL.

The catalog reads (``pg_catalog_queries``, ``pg_catalog_calls.SYSTEM_MADE``) trust an
extension's objects as its installer's, as they trust its functions. Membership alone is not
that: ``ALTER EXTENSION plpgsql ADD FUNCTION public.lower(integer)`` (a superuser's) made a
user function a member, and the owner of a trusted extension (``CREATE EXTENSION pg_trgm``
needs only ``CREATE`` on the database) may add any function of their own to it; and a
member's body may be replaced after its script ran (``CREATE OR REPLACE FUNCTION
fetchval(hstore, text)``, hstore's ``->``). Either way it ran for a read, unjudged.

So an object is trusted as an extension's only when (``made_by_script``):

- it is a member (a ``pg_depend`` row of kind ``e``);
- every catalog row that says what it runs (its own; a view's rewrite rule, not its
  ``pg_class`` row, which a ``GRANT SELECT`` rewrites; a C function's none) was written
  by the transaction that wrote its membership (``CREATE EXTENSION``, an update script's new
  objects), by the one that last wrote the extension's own row (``ALTER EXTENSION
  UPDATE``, which rewrites objects it changes) or by one between them (an earlier update:
  each rewrites the extension's row): an ``ALTER EXTENSION ADD`` of an existing object, or
  a replacement after the last script, writes them in another;
- where the object has an owner, a superuser owns it: a trusted extension's script runs as
  the bootstrap superuser, who owns what it makes, so a function its non-superuser owner
  made and added in one transaction is not trusted.

Measured on PostgreSQL 15 (``tests/db/test_db_pg_extension_members.py``; ``pg_upgrade``
by hand, the catalog queries then listing nothing in the upgraded databases): hstore, citext
and pg_trgm made by ``CREATE EXTENSION`` (pg_trgm by a non-superuser), hstore and citext
made at 1.4 then updated, all trusted, the one member replaced after an update not; after
``pg_upgrade`` (15 to 15), which re-creates every member with a new oid and adds it in the
transaction that creates it, every member is still trusted. What a superuser makes and adds
in one transaction looked like that restore: it is told apart by the extension's other
memberships (``_added_by_script``), except in an extension ``pg_upgrade`` restored and no
update rewrote since; and ``pg_upgrade`` itself makes a member replaced or added before it
look made by the script (docs/security.md).

Every comparison is exact (``OPERATOR(pg_catalog.=)``, typed literals): these run in the
adapter's own reads, where a user's operator must not.
"""

from __future__ import annotations

_EQ = "OPERATOR(pg_catalog.=)"


def _int8(xmin: str) -> str:
    return f"pg_catalog.int8in(pg_catalog.xidout({xmin}))"


def _scripts(xmin: str) -> str:
    """SQL true where ``xmin`` is a transaction of the extension's scripts: the one that wrote
    the membership ``e`` or last wrote the extension ``x``, or one between them, an earlier
    ``ALTER EXTENSION UPDATE`` (each update rewrites ``x``: a member the first of two
    updates changed was refused after the second). A row written before the membership
    (``ALTER EXTENSION ADD`` of an existing object) or after the extension's last update
    (a replacement) is not."""
    between = (
        f"{_int8(xmin)} OPERATOR(pg_catalog.>) {_int8('e.xmin')}"
        f" AND {_int8(xmin)} OPERATOR(pg_catalog.<) {_int8('x.xmin')}"
    )
    return f"({xmin} {_EQ} e.xmin OR {xmin} {_EQ} x.xmin OR ({between}))"


def _added_by_script() -> str:
    """SQL true where the membership ``e`` of the extension ``x`` was written by one of its
    scripts: not newer than the extension's row (``CREATE EXTENSION`` writes both, each
    ``ALTER EXTENSION UPDATE`` rewrites the row), or the extension has no membership that
    old, which is ``pg_upgrade``'s shape (measured on PostgreSQL 15: its restore makes the
    extension empty, then adds each member in a later transaction; a made extension has
    every membership as old as its row or older). An ``ALTER EXTENSION ADD`` after the
    last script (a superuser's function made and added in one transaction) is neither."""
    same_or_older = f"{_int8('{m}.xmin')} OPERATOR(pg_catalog.<=) {_int8('x.xmin')}"
    return (
        f"({same_or_older.format(m='e')} OR NOT EXISTS (SELECT FROM pg_catalog.pg_depend o"
        f" WHERE o.refclassid {_EQ} 'pg_catalog.pg_extension'::pg_catalog.regclass::pg_catalog.oid"
        f" AND o.refobjid {_EQ} x.oid AND o.deptype {_EQ} 'e'::pg_catalog.\"char\""
        f" AND {same_or_older.format(m='o')}))"
    )


def made_by_script(table: str, row: str, owner: str | None, *written: str) -> str:
    """SQL true where ``row`` (the alias of a row of ``pg_catalog.<table>``) is a member an
    extension's script made: ``owner`` (an SQL expression for the owner's oid, or None for
    an object without one) a superuser, and each of ``written`` (SQL expressions of the
    ``xmin`` of the rows saying what it runs; ``row``'s own when none is given) that of its
    membership's or its extension's row."""
    same = " AND ".join(_scripts(xmin) for xmin in written or (f"{row}.xmin",))
    owned = (
        ""
        if owner is None
        else f" AND EXISTS (SELECT FROM pg_catalog.pg_roles s WHERE s.oid {_EQ} {owner}"
        " AND s.rolsuper)"
    )
    return (
        f"EXISTS (SELECT FROM pg_catalog.pg_depend e JOIN pg_catalog.pg_extension x"
        f" ON x.oid {_EQ} e.refobjid"
        f" WHERE e.classid {_EQ} 'pg_catalog.{table}'::pg_catalog.regclass::pg_catalog.oid"
        f" AND e.objid {_EQ} {row}.oid AND e.deptype {_EQ} 'e'::pg_catalog.\"char\""
        f" AND {same} AND {_added_by_script()}{owned})"
    )


def function_trusted(row: str) -> str:
    """SQL true where the function ``row`` (a ``pg_proc`` alias) is a built-in (a changed one
    is refused outright, ``SYSTEM_MADE``) or one an extension's script made: what a trusted
    operator, cast or comparison calls must be trusted too (hstore's ``->`` ran a
    ``fetchval`` replaced after the script)."""
    built_in = f"{row}.oid OPERATOR(pg_catalog.<) '16384'::pg_catalog.oid"
    return f"({built_in} OR {function_made_by_script(row)})"


def function_made_by_script(row: str) -> str:
    """``made_by_script`` for the function ``row`` (a ``pg_proc`` alias). An internal or C
    function's row is not required to be the script's: a ``GRANT EXECUTE`` or ``REVOKE``
    rewrites the row (a ``REVOKE ... FROM PUBLIC`` of hstore's ``fetchval`` made its ``->``
    judged), while what it runs is C, a superuser's, as a C function is; one replaced by SQL
    or PL/pgSQL is no longer either."""
    c = f"{row}.prolang {_EQ} '13'::pg_catalog.oid OR {row}.prolang {_EQ} '12'::pg_catalog.oid"
    written = f"CASE WHEN {c} THEN e.xmin ELSE {row}.xmin END"
    return made_by_script("pg_proc", row, f"{row}.proowner", written)


def operator_trusted(row: str) -> str:
    """SQL true where the operator ``row`` (a ``pg_operator`` alias) is a built-in or one an
    extension's script made (its function is judged apart: ``function_trusted``)."""
    built_in = f"{row}.oid OPERATOR(pg_catalog.<) '16384'::pg_catalog.oid"
    return f"({built_in} OR {made_by_script('pg_operator', row, f'{row}.oprowner')})"


def family_made_by_script(table: str, family: str) -> str:
    """SQL true where the operator family member ``m`` (a row of ``pg_catalog.<table>``,
    ``pg_amop`` or ``pg_amproc``; ``family`` its family column) was written by the script
    that made it, its family or an operator class of its family a member: ``ALTER OPERATOR
    FAMILY ... ADD FUNCTION`` to an extension's family later writes it in another
    transaction."""
    return (
        "EXISTS (SELECT FROM pg_catalog.pg_depend e JOIN pg_catalog.pg_extension x"  # noqa: S608 - constant fragments
        f" ON x.oid {_EQ} e.refobjid WHERE e.deptype {_EQ} 'e'::pg_catalog.\"char\""
        f" AND {_scripts('m.xmin')} AND {_added_by_script()} AND ("
        f"(e.classid {_EQ} 'pg_catalog.{table}'::pg_catalog.regclass::pg_catalog.oid"
        f" AND e.objid {_EQ} m.oid)"
        f" OR (e.classid {_EQ} 'pg_catalog.pg_opfamily'::pg_catalog.regclass::pg_catalog.oid"
        f" AND e.objid {_EQ} m.{family})"
        f" OR (e.classid {_EQ} 'pg_catalog.pg_opclass'::pg_catalog.regclass::pg_catalog.oid"
        f" AND e.objid IN (SELECT c.oid FROM pg_catalog.pg_opclass c"
        f" WHERE c.opcfamily {_EQ} m.{family}))))"
    )
