"""Where a statement names a type, so that a type's length or precision is read as no call.

A type name stands where the server's grammar expects a type and nothing else: after ``::``,
after ``AS`` in ``CAST(x AS ...)``, ``TREAT`` and ``XMLSERIALIZE``, after ``RETURNING``
inside an SQL/JSON function's parenthesis (``JSON_VALUE(d, '$' RETURNING NUMBER(5,2))``),
after MySQL's ``CONVERT(x, ...)`` comma, and as a column's type in a definition list
(``f() AS t(a numeric(5,2))``, ``AS (a int)``; the table functions' ``COLUMNS`` lists are
``call_syntax``'s). There a type of several words takes its length after any of them
(``interval minute to second(3)``, ``national character(3)``, Oracle's ``INTERVAL DAY(3) TO
SECOND(2)``, ``timestamp(3) with time zone``), and PostgreSQL's qualified
``pg_catalog.bit(3)`` is the built-in type. ``type_lengths(stmt, d)`` gives the positions of
the words whose ``(`` opens such a length; everything else stays judged as a call (a
qualified type of another schema, whose length a user's function reads, above all).
PostgreSQL looks any other unqualified type name up on ``search_path`` (``'1'::number(3)``
runs ``public.number``'s typmod_in): there only the types its grammar names itself take a
length as no call, and ``looked_up`` gives the other names' positions, judged as calls by
name (``varbit(3)`` then passes as pg_catalog's ``varbit()``, ``number(3)`` is refused).
Pure; nothing here raises.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from rho_domain.sql.call_words import TYPE_WORDS
from rho_domain.sql.dialect_values import Dialect
from rho_domain.sql.functions import names
from rho_domain.sql.name_folding import catalog_name
from rho_domain.sql.tokens import Kind, Token
from rho_domain.value_methods import value_eq, value_hash, value_repr

# Words that continue a type of several words (each may take a length or a precision).
_CONTINUING = TYPE_WORDS | names(
    "NATIONAL WITH WITHOUT LOCAL YEAR MONTH DAY HOUR MINUTE SECOND TO VARYING PRECISION"
)
# The built-in types of pg_catalog that take a modifier, named with their schema: a type of
# any other schema may have a user's typmod_in function, which the length makes the server run.
_PG_CATALOG_TYPES = names("bpchar varchar numeric bit varbit timestamp timestamptz time timetz")
_CAST_LIKE = ("CAST", "TREAT", "XMLSERIALIZE", "XMLCAST")
# The unqualified type names that are pg_catalog's: those PostgreSQL's grammar names itself
# (SimpleTypename's keywords), and the built-ins above, found first on search_path as the
# allowlist's unqualified functions are. Any other name is looked up there (a user's type).
_PG_BUILT_IN_TYPES = _PG_CATALOG_TYPES | names(
    "bit char character varchar nchar national numeric decimal dec float real int "
    "integer smallint bigint boolean time timestamp interval"
)


@attrs.frozen
class TypeNames:
    """Where a statement's types take a length: ``lengths``, the type words whose ``(`` holds
    one (no call); ``looked_up``, PostgreSQL's unqualified type names its grammar does not
    build in, followed by ``(`` (judged as a call: the length runs the found type's
    typmod_in)."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    lengths: frozenset[int]
    looked_up: frozenset[int]


def type_lengths(
    stmt: Sequence[Token], d: Dialect, *, lists: frozenset[int], ctes: frozenset[int]
) -> TypeNames:
    """Positions of the type words in ``stmt`` followed by their length's ``(``: those of
    each type that starts after ``::`` or inside a parenthesis that expects one, and those
    of the column types at ``lists`` (the heads ``call_syntax`` found in ``COLUMNS`` lists).
    ``ctes``: the positions of CTE names with a column list, whose ``AS (`` holds a query.
    One pass, each parenthesis matched once (a statement of 40 KB may hold thousands)."""
    closes, opens = _pairs(stmt)
    found: set[int] = set()
    looked_up: set[int] = set()
    openers: list[str] = []  # per open parenthesis: the word before it, "" if none
    defining: list[bool] = []  # per open parenthesis: whether it is a definition list
    for i, token in enumerate(stmt):
        prev = stmt[i - 1] if i else None
        if token.is_punct("("):
            openers.append(prev.text if prev is not None and prev.kind is Kind.WORD else "")
            defining.append(_definition_list(stmt, i, ctes, opens))
            continue
        if token.is_punct(")"):
            if openers:
                openers.pop()
                defining.pop()
            continue
        opener = openers[-1] if openers else ""
        if prev is None:
            continue
        if (
            defining
            and defining[-1]
            and (prev.is_punct("(") or prev.is_punct(","))
            and token.kind in (Kind.WORD, Kind.QUOTED)
            and not token.is_word(*d.reserved_parens)
        ):
            found.update(_typed(stmt, i + 1, d, closes, looked_up))  # a column's name, then type
        if (
            (prev.is_punct(":") and i >= 2 and stmt[i - 2].is_punct(":"))
            or (prev.is_word("AS") and opener in _CAST_LIKE)
            or (prev.is_word("RETURNING") and opener[:5] == "JSON_")
            or (d.name == "mysql" and opener == "CONVERT" and prev.is_punct(","))
            or i in lists
        ):
            found.update(_typed(stmt, i, d, closes, looked_up))
    return TypeNames(lengths=frozenset(found), looked_up=frozenset(looked_up))


def _pairs(stmt: Sequence[Token]) -> tuple[dict[int, int], dict[int, int]]:
    """Each parenthesis's match: closes by opening position, opens by closing position."""
    closes: dict[int, int] = {}
    opens: dict[int, int] = {}
    stack: list[int] = []
    for i, token in enumerate(stmt):
        if token.is_punct("("):
            stack.append(i)
        elif token.is_punct(")") and stack:
            opened = stack.pop()
            closes[opened] = i
            opens[i] = opened
    return closes, opens


def _definition_list(
    stmt: Sequence[Token], open_at: int, ctes: frozenset[int], opens: dict[int, int]
) -> bool:
    """Whether the ``(`` at ``open_at`` opens a column definition list: ``AS alias (`` or a
    call's ``) AS (`` (a CTE's ``AS (`` holds a query, a window's a specification, MariaDB's
    ``AS OF (`` an expression)."""
    if open_at < 2:
        return False
    before, alias = stmt[open_at - 2], stmt[open_at - 1]
    if alias.is_word("AS"):
        called = opens.get(open_at - 2)
        return called is not None and called > 0 and called - 1 not in ctes
    return (
        before.is_word("AS")
        and alias.kind in (Kind.WORD, Kind.QUOTED)
        and not alias.is_word("OF", *TYPE_WORDS)
    )


def _typed(
    stmt: Sequence[Token], start: int, d: Dialect, closes: dict[int, int], looked_up: set[int]
) -> set[int]:
    """The words of the type starting at ``start`` whose ``(`` opens a length: its first
    word (a known type word, or a built-in of ``pg_catalog`` so qualified) and each word
    continuing it, a length's parenthesis skipped between them. A PostgreSQL type name found
    on search_path, with a length, goes to ``looked_up`` instead."""
    found: set[int] = set()
    i = start
    if _pg_catalog_type(stmt, i, d):
        i += 2
    elif d.name == "postgres" and _searched(stmt, i, d):
        looked_up.add(i)
        return found
    elif i >= len(stmt) or not stmt[i].is_word(*_CONTINUING):
        return found
    while i < len(stmt):
        if i + 1 < len(stmt) and stmt[i + 1].is_punct("("):
            found.add(i)
            close = closes.get(i + 1)
            if close is None:
                break
            i = close + 1
        else:
            i += 1
        if i >= len(stmt) or not stmt[i].is_word(*_CONTINUING):
            break
    return found


def _searched(stmt: Sequence[Token], i: int, d: Dialect) -> bool:
    """Whether ``stmt[i] (`` is an unqualified type name pg_catalog does not hold (looked up
    on search_path: a user's type), with a length."""
    return (
        i + 1 < len(stmt)
        and stmt[i + 1].is_punct("(")
        and stmt[i].kind in (Kind.WORD, Kind.QUOTED)
        and catalog_name(stmt[i], d) not in _PG_BUILT_IN_TYPES
        and not (i and stmt[i - 1].is_punct("."))
    )


def _pg_catalog_type(stmt: Sequence[Token], i: int, d: Dialect) -> bool:
    return (
        d.name == "postgres"
        and i + 2 < len(stmt)
        and stmt[i].kind in (Kind.WORD, Kind.QUOTED)
        and catalog_name(stmt[i], d) == "pg_catalog"
        and stmt[i + 1].is_punct(".")
        and stmt[i + 2].kind in (Kind.WORD, Kind.QUOTED)
        and catalog_name(stmt[i + 2], d) in _PG_CATALOG_TYPES
    )
