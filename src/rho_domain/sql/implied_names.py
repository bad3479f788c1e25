"""The catalog names a statement reaches without writing them whole, for ``catalog_calls``.

The lexer keeps no blanks, so an operator is looked for in each run of operator characters
with the blanks between them removed (``operator_runs``): ``@ - @`` is read as ``@-@`` (an
over-reading, on the safe side). The server also calls operators no character spells: ``!=``
is ``<>``, ``IN`` compares with ``=``, ``LIKE`` is ``~~`` (``IMPLIED_OPERATORS``). A type
is written in the grammar's words, not the catalog's (``TYPE_SPELLINGS``: ``::integer`` is
``int4``), and a word naming JSON reaches the casts to ``json`` and ``jsonb``
(``JSON_TYPES``). Pure data and one pure function; nothing here raises.
"""

from __future__ import annotations

from collections.abc import Sequence

from rho_domain.sql.tokens import Kind, Token

# PostgreSQL's operator characters (scan.l "self" and "op_chars"); "," "(" ";" end a run.
OPERATOR_CHARS = frozenset("~!@#^&|`?+-*/%<>=")
# Operators the server looks up by name where the text writes a word or another spelling
# (parse_expr.c, parse_clause.c): "!=" is "<>"; IN, CASE x WHEN, NULLIF, IS DISTINCT FROM,
# JOIN ... USING and NATURAL JOIN compare with "=" (NOT IN with "<>"); BETWEEN with ">=" and
# "<="; LIKE is "~~", ILIKE "~~*", SIMILAR TO "~", each with its NOT form.
IMPLIED_OPERATORS = {
    "IN": ("=", "<>"),
    "CASE": ("=",),
    "NULLIF": ("=",),
    "DISTINCT": ("=",),
    "USING": ("=",),
    "NATURAL": ("=",),
    "BETWEEN": (">=", "<="),
    "LIKE": ("~~", "!~~"),
    "ILIKE": ("~~*", "!~~*"),
    "SIMILAR": ("~", "!~"),
}
# The JSON builders call a user type's cast to json, named or not (json.c and jsonb.c look
# one up for every type made after initdb): a word naming JSON names these casts' targets.
JSON_TYPES = ("json", "jsonb")
# The grammar's names of built-in types, which are not their catalog names (gram.y's
# SimpleTypename, parse_type.c): a cast to int4 is written ::integer or ::int. Where a word
# may begin several types (TIMESTAMP [WITH TIME ZONE]), it stands for each of them.
TYPE_SPELLINGS: dict[str, tuple[str, ...]] = {
    "int": ("int4",),
    "integer": ("int4",),
    "smallint": ("int2",),
    "bigint": ("int8",),
    "real": ("float4",),
    "float": ("float4", "float8"),
    "double": ("float8",),
    "decimal": ("numeric",),
    "dec": ("numeric",),
    "boolean": ("bool",),
    "character": ("bpchar", "varchar"),
    "char": ("bpchar", "varchar"),
    "nchar": ("bpchar", "varchar"),
    "national": ("bpchar", "varchar"),
    "varying": ("varchar", "varbit"),
    "bit": ("varbit",),
    "timestamp": ("timestamptz",),
    "time": ("timetz",),
    "zone": ("timestamptz", "timetz"),
}


def operator_runs(stmt: Sequence[Token]) -> list[str]:
    """The operator names ``stmt`` may call: each run of operator characters (blanks between
    them dropped; with "<>" for "!="), and those its words call by name (``IMPLIED_OPERATORS``)."""
    runs: list[str] = []
    current = ""
    for token in [*stmt, Token(Kind.WORD, "")]:
        if token.kind is Kind.PUNCT and token.text in OPERATOR_CHARS:
            current += token.text
            continue
        if current:
            runs += [current, current.replace("!=", "<>")] if "!=" in current else [current]
        current = ""
        if token.kind is Kind.WORD:
            runs += IMPLIED_OPERATORS.get(token.text, ())
    return runs
