"""Whether ``word (`` in a statement is a function call or syntax.

The read-only check (``classify.py``) judges every call by its name; a parenthesis that is
grammar, not a call, must not be judged as one. ``not_a_call(stmt, i, d, shape)`` is True
when ``stmt[i] (`` is syntax: grouping after an operator, a comma or another parenthesis, a
keyword that takes a parenthesis (``EXISTS (SELECT``, ``GROUP BY ROLLUP(``), a type with a
length (``a::numeric(10, 2)``, a table function's column ``x int(11) PATH '$'``), an alias or
CTE column list (``AS t(a, b)``, ``WITH a(x) AS``).
``statement_shape(stmt, d)`` is what these rules ask of the whole statement, found once per
statement. Pure functions over the lexer's tokens; nothing here raises.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from rho_domain.sql import call_words
from rho_domain.sql.dialect_values import Dialect
from rho_domain.sql.tokens import Kind, Token
from rho_domain.sql.type_names import type_lengths
from rho_domain.value_methods import value_eq, value_hash, value_repr


def _ends_operand(token: Token | None) -> bool:
    if token is None:
        return False
    if token.kind in (Kind.QUOTED, Kind.STRING, Kind.NUMBER, Kind.PARAM):
        return True
    if token.kind is Kind.PUNCT:
        return token.text in ")]"
    return token.text not in call_words.EXPRESSION_STARTS


@attrs.frozen
class StatementShape:
    """What the call rules ask of the whole statement, found once per statement (asking it
    for each token made the check quadratic: 4,000 calls in 40 KB took 18 s)."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    ctes: frozenset[int]  # positions of CTE names followed by a column list
    in_case: tuple[bool, ...]  # per position: inside CASE ... END
    column_types: frozenset[int] = frozenset()  # positions of the types in COLUMNS (...)
    type_lengths: frozenset[int] = frozenset()  # type words whose "(" holds a length
    looked_up: frozenset[int] = frozenset()  # PostgreSQL type names found on search_path


def statement_shape(stmt: Sequence[Token], d: Dialect) -> StatementShape:
    """The CTE column lists, CASE nesting and type names of ``stmt``, for ``not_a_call``."""
    inside: list[bool] = []
    depth = 0
    for token in stmt:
        inside.append(depth > 0)
        if token.is_word("CASE"):
            depth += 1
        elif token.is_word("END") and depth:
            depth -= 1  # in a query, END closes only CASE
    ctes, columns = _cte_names(stmt), _column_types(stmt)
    types = type_lengths(stmt, d, lists=columns, ctes=ctes)
    return StatementShape(
        ctes=ctes,
        in_case=tuple(inside),
        column_types=columns,
        type_lengths=types.lengths,
        looked_up=types.looked_up,
    )


def _column_types(stmt: Sequence[Token]) -> frozenset[int]:
    """Positions of the type of each column defined in a table function's ``COLUMNS``
    list: ``JSON_TABLE(doc, '$[*]' COLUMNS (x int(11) PATH '$', NESTED PATH '$.a' COLUMNS
    (y decimal(10,2) PATH '$')))``, and XMLTABLE's, unparenthesized, to the call's end
    (``XMLTABLE('/r' PASSING doc COLUMNS a char(2) PATH 'a', b decimal(5,2))``): a
    definition is a name, then its type, where no call can stand. MariaDB writes every
    JSON_TABLE column's type with its length, so each view over one was refused as calling
    ``int()``; PostgreSQL's XMLTABLE with a ``char(2)`` column as calling ``char()``."""
    found: set[int] = set()
    # per open parenthesis: whether it holds a COLUMNS list (JSON_TABLE's opens one; in
    # XMLTABLE's the word COLUMNS starts one that runs to the call's end)
    lists: list[bool] = []
    xml: list[bool] = []  # per open parenthesis: whether it is XMLTABLE's
    for i, token in enumerate(stmt):
        if token.is_punct("("):
            lists.append(i >= 2 and stmt[i - 1].is_word("COLUMNS") and _ends_operand(stmt[i - 2]))
            xml.append(i >= 1 and stmt[i - 1].is_word("XMLTABLE"))
        elif token.is_punct(")"):
            if lists:
                lists.pop()
                xml.pop()
        elif token.is_word("COLUMNS") and xml and xml[-1]:
            lists[-1] = True
        elif (
            lists
            and lists[-1]
            and token.kind is Kind.WORD
            and stmt[i - 1].kind in (Kind.WORD, Kind.QUOTED)
            and (
                stmt[i - 2].is_punct("(")
                or stmt[i - 2].is_punct(",")
                or (xml[-1] and stmt[i - 2].is_word("COLUMNS"))
            )
        ):
            found.add(i)
    return frozenset(found)


def not_a_call(stmt: Sequence[Token], i: int, d: Dialect, shape: StatementShape) -> bool:
    """Whether ``stmt[i] (`` is syntax rather than a function call: a parenthesis opened
    after an operator, a comma or another parenthesis (grouping: ``a = (SELECT ...)``,
    ``((a), ())``), a keyword that takes a parenthesis, a type with a length, an alias or CTE
    column list."""
    token, prev = stmt[i], stmt[i - 1] if i else None
    if i in shape.looked_up:
        return False  # '1'::number(3): the length runs the typmod_in search_path finds
    if token.kind is Kind.PUNCT:
        # Nothing is called through punctuation; after ")" only OPERATOR(...) is followed
        # by an operand, and "](" or ".(" is nothing any dialect reads.
        if token.text == ")":
            return _closes_operator(stmt, i)
        return token.text not in ("]", ".", ":")
    after_operator = prev is not None and prev.is_punct(")") and _closes_operator(stmt, i - 1)
    if prev is not None and not after_operator and (prev.is_punct(")") or prev.is_word("AS")):
        return True  # "AS t(a, b)", "generate_series(1, 3) g(x)", "count(*) OVER (...)"
    after = stmt[i + 2] if i + 2 < len(stmt) else None
    if token.kind is Kind.WORD and after is not None and after.is_word("SELECT", "WITH"):
        return (
            True  # EXISTS (SELECT ...), x IN (SELECT ...), ANY (SELECT ...): f(SELECT) is no call
        )
    if token.kind is Kind.WORD:
        word = token.text
        if word in d.reserved_parens:
            return True
        if word in call_words.AFTER_OPERAND and not after_operator and _ends_operand(prev):
            return True
        if prev is not None and _syntax_after(word, prev, stmt, i, shape):
            return True
    return i in shape.ctes or i in shape.column_types or i in shape.type_lengths


_BEFORE_BY = ("ORDER", "GROUP", "PARTITION", "CONNECT", "SIBLINGS")


def _syntax_after(
    word: str, prev: Token, stmt: Sequence[Token], i: int, shape: StatementShape
) -> bool:
    """Words that take a parenthesis as syntax in one place only (elsewhere, where the word
    is not reserved, ``word(`` calls a function of that name)."""
    if word in call_words.TYPE_WORDS and (
        prev.is_punct(":") or (prev.kind is Kind.WORD and prev.text in call_words.TYPE_WORDS)
    ):
        return True  # a::numeric(10, 2), DOUBLE PRECISION(5)
    if word in ("REF", "VALUE") and prev.is_word("BY"):
        return i >= 2 and stmt[i - 2].is_word("PASSING")  # XMLEXISTS('/a' PASSING BY VALUE (d))
    if word in ("ROLLUP", "CUBE") and prev.is_word("BY"):
        return i >= 2 and stmt[i - 2].is_word("GROUP")  # ORDER BY cube(...) calls a function
    if word == "WHEN" and (prev.is_word("CASE") or _ends_operand(prev)):
        return shape.in_case[i]  # CASE WHEN (a > 1) THEN 1 WHEN (b) ...
    # (GROUPING SETS ( is AFTER_OPERAND's: GROUPING ends an operand.)
    return (word == "BY" and prev.is_word(*_BEFORE_BY)) or (  # ORDER BY (a + b), GROUP BY (a)
        word == "MATERIALIZED" and prev.is_word("NOT")
    )


def _cte_names(stmt: Sequence[Token]) -> frozenset[int]:
    """Positions of CTE names followed by a column list: ``WITH [RECURSIVE] a(x) AS (...),
    b(y) AS [NOT] [MATERIALIZED] (...)``, walked from each WITH (``f() AS (x int)`` in FROM
    is a call with a column definition list, not a CTE)."""
    found: set[int] = set()
    for w, token in enumerate(stmt):
        if not token.is_word("WITH"):
            continue
        k = w + 1 + (w + 1 < len(stmt) and stmt[w + 1].is_word("RECURSIVE"))
        while k + 1 < len(stmt) and stmt[k].kind in (Kind.WORD, Kind.QUOTED):
            j = k + 1
            if stmt[j].is_punct("("):
                close = matching_paren(stmt, j)
                if close is None:
                    break
                found.add(k)
                j = close + 1
            if j >= len(stmt) or not stmt[j].is_word("AS"):
                break
            j += 1
            while j < len(stmt) and stmt[j].is_word("NOT", "MATERIALIZED"):
                j += 1
            body = matching_paren(stmt, j) if j < len(stmt) and stmt[j].is_punct("(") else None
            if body is None or body + 1 >= len(stmt) or not stmt[body + 1].is_punct(","):
                break
            k = body + 2
    return frozenset(found)


def _closes_operator(stmt: Sequence[Token], close_at: int) -> bool:
    """Whether the ``)`` at ``close_at`` ends PostgreSQL ``OPERATOR(...)``, after which an
    operand (possibly a call) follows, not an alias."""
    depth = 0
    for j in range(close_at, -1, -1):
        if stmt[j].is_punct(")"):
            depth += 1
        elif stmt[j].is_punct("("):
            depth -= 1
            if depth == 0:
                return j > 0 and stmt[j - 1].is_word("OPERATOR")
    return False


def matching_paren(stmt: Sequence[Token], open_at: int) -> int | None:
    """The position of the ``)`` that closes the ``(`` at ``open_at``; None if none does."""
    depth = 0
    for j in range(open_at, len(stmt)):
        if stmt[j].is_punct("("):
            depth += 1
        elif stmt[j].is_punct(")"):
            depth -= 1
            if depth == 0:
                return j
    return None
