"""Huge PostgreSQL values cut on the server, before they cross the wire.

Cutting a cell after ``fetchmany`` bounds what the agent keeps, not what it receives: libpq
holds the whole row first, and ``SELECT repeat('x', 50000000), repeat('y', 50000000)`` is a
100 MB row. So a query's columns are read first (``DECLARE`` plans it without running it,
and the cursor's description gives the types), and every column of a type whose values can
be large is selected through the query as a subquery, as its first ``HEAD_CHARS``
characters (``MAX_CELL`` bytes for ``bytea``) plus its full size in bytes:

    WITH m(o1, o2, o3) AS MATERIALIZED (
      SELECT q.c1, pg_catalog.left(q.c2, 8193), pg_catalog.octet_length(q.c2)
      FROM (<query>) AS q(c1, c2)) SELECT * FROM m

(materialized: ``pg_rows`` computes each batch of rows before it reads them, and a row
read again is never computed again)

(for a column not of a text type, ``q.c2`` there is its text: ``_as_text``)

Columns of bounded types (integers, floats, dates, booleans, uuids...) pass as they are;
other types (json, xml, arrays...) arrive as their text form, made by the type's output
function (never a cast, which may be a user's function). ``numeric`` is bounded only with a
precision (``numeric(10, 2)``: at most 1,000 digits); without one a value has up to 147,455
digits, and ``SELECT x, x, ...`` of ``9e131071::numeric`` was a 210 MB row, kept whole.
``fold`` turns the (head, size) pairs back into one cell each, a ``CutValue`` where the head
is not the whole value: a text is cut when its head holds the character past ``MAX_CELL``
(the size is counted in the server's encoding: in a ``LATIN1`` database ``é`` is one byte,
two in UTF-8, and comparing the two showed a cut value as whole). A query that cannot be a
subquery is refused, never run uncut; every query is wrapped, its columns cut or not
(``pg_rows``).
Every function and operator of the wrapper is named by ``pg_catalog``: resolved by name, a
user's ``public.num_nulls(json)`` (an exact match) ran for ``SELECT '{}'::json``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rho_adapters.db.results import MAX_CELL
from rho_domain.errors import DatabaseError
from rho_domain.ports.database import CutValue

# Type OIDs whose values are small whatever they hold (pg_type.typlen > 0, or numeric with
# a precision: see _NUMERIC).
BOUNDED_TYPES = frozenset(
    {
        16, 18, 19, 20, 21, 23, 26, 27, 28, 29,  # bool, char, name, int8/2/4, oid, tid, xid, cid
        650, 700, 701, 774, 790, 829, 869,  # cidr, float4/8, macaddr8, money, macaddr, inet
        1082, 1083, 1114, 1184, 1186, 1266, 1700,  # date/time types, interval, numeric
        2950, 3220,  # uuid, pg_lsn
    }
)  # fmt: skip
# numeric's text is bounded by its precision (at most 1,000) when the column has one; an
# expression's numeric (sum(x), 9e131071::numeric) has none, and up to 147,455 digits.
_NUMERIC = 1700
_TEXT_TYPES = frozenset({25, 1042, 1043})  # text, bpchar, varchar
_BYTEA = 17
# A text's head: one character past what a cell keeps, so that its coming says "cut" in
# characters, whatever the server's encoding counts in bytes (pg_explain's lines too).
HEAD_CHARS = MAX_CELL + 1


def cut_columns(description: Sequence[Any]) -> tuple[bool, ...]:
    """For each column of a cursor description: whether its values are selected cut."""
    return tuple(
        col.type_code not in BOUNDED_TYPES
        or (col.type_code == _NUMERIC and getattr(col, "precision", None) is None)
        for col in description
    )


def cut_query(sql: str, description: Sequence[Any], cuts: Sequence[bool]) -> str:
    """``sql`` wrapped so that each column in ``cuts`` arrives as (head, size in bytes)."""
    selected: list[str] = []
    for index, (col, cut) in enumerate(zip(description, cuts, strict=True), 1):
        ref = f"q.c{index}"
        if not cut:
            selected.append(ref)
        elif col.type_code == _BYTEA:
            selected += [
                f"pg_catalog.substring({ref}, 1, {MAX_CELL})",
                f"pg_catalog.octet_length({ref})",
            ]
        else:
            text = ref if col.type_code in _TEXT_TYPES else _as_text(ref)
            selected += [
                f"pg_catalog.left({text}, {HEAD_CHARS})",
                f"pg_catalog.octet_length({text})",
            ]
    # A query of no columns (SELECT FROM t: a row count) takes no column lists: "m()" and
    # "q()" are syntax errors.
    names = f"({', '.join(f'c{i}' for i in range(1, len(cuts) + 1))})" if cuts else ""
    outputs = f"({', '.join(f'o{i}' for i in range(1, len(selected) + 1))})" if cuts else ""
    # The query on lines of its own: a trailing -- comment must not swallow the ")". Every
    # trailing semicolon goes, blanks between them too ("SELECT ...; ;" is one statement).
    # (``pg_rows`` passes the statement without what follows its last token.)
    body = sql.rstrip()
    while body.endswith(";"):
        body = body[:-1].rstrip()
    return (
        f"WITH m{outputs} AS MATERIALIZED (SELECT {', '.join(selected)} "  # noqa: S608
        f"FROM (\n{body}\n) AS q{names}) SELECT * FROM m"
    )


def _as_text(ref: str) -> str:
    """``ref``'s text by its type's output function, as the wire would carry it. Never
    ``ref::text``: a cast to text may be a user's (``CREATE CAST (t AS text) WITH FUNCTION
    f``), which ran ``f`` for ``SELECT *`` of a table with a column of type ``t``; format's
    ``%s`` calls the output function only. NULL stays NULL (num_nulls, not IS NULL, which
    is true of a row whose fields are all NULL)."""
    return (
        f"CASE WHEN pg_catalog.num_nulls({ref}) OPERATOR(pg_catalog.=) 0 "
        f"THEN pg_catalog.format('%s', {ref}) END"
    )


def fold(row: Sequence[Any], cuts: Sequence[bool]) -> tuple[Any, ...]:
    """One cell per column again: a ``CutValue`` where the head is not the whole value."""
    out: list[Any] = []
    values = iter(row)
    for cut in cuts:
        value = next(values)
        if cut:
            size = next(values)
            value = head_or_cut(value, size if isinstance(size, int) else None)
        out.append(value)
    return tuple(out)


def head_or_cut(head: Any, size: int | None) -> Any:
    """``head`` as the cell: a text of ``HEAD_CHARS`` characters is a ``CutValue`` of its
    first ``MAX_CELL`` (``size``: the whole value's bytes, in the server's encoding), bytes
    are cut when ``size`` exceeds them; anything else, ``None`` included, is whole."""
    if isinstance(head, str):
        return CutValue(head[:MAX_CELL], size) if len(head) > MAX_CELL else head
    if isinstance(head, bytes | bytearray | memoryview) and size is not None and size > len(head):
        return CutValue(bytes(head), size)
    return head


def json_as_text(cursor: Any) -> None:
    """Have ``cursor`` load ``json`` and ``jsonb`` as their text, which ``fetch`` cuts like any
    text. For a statement not cut on the server (``SHOW``, an ``EXPLAIN`` with bound
    parameters): decoded, the plan of ``EXPLAIN (VERBOSE, FORMAT JSON)`` over folded
    constants was a 100 MB list, kept whole."""
    from psycopg.types.string import TextLoader  # the postgres extra: imported when used

    for name in ("json", "jsonb"):
        cursor.adapters.register_loader(name, TextLoader)


_NO_LANGUAGE = "42704"  # undefined_object: language "plpgsql" does not exist


def without_plpgsql(exc: Exception, alias: str, why: str) -> DatabaseError | None:
    """The error to raise for ``exc`` when it says the database has no PL/pgSQL, in which the
    cutting blocks run (``why``: what runs there and what arrives cut); else None."""
    if getattr(exc, "sqlstate", None) == _NO_LANGUAGE and "plpgsql" in str(exc):
        return DatabaseError(
            f"{alias}: {why}, and this database has no PL/pgSQL; an administrator can add "
            "it with CREATE EXTENSION plpgsql"
        )
    return None
