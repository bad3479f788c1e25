"""Which calls of a stored expression PostgreSQL's planner runs while planning a read.

The planner folds (``eval_const_expressions``) the expressions of a table's indexes, partial
indexes' predicates, partition key, extended statistics and CHECKs: it runs a call whose
arguments all fold to constants (``simplify_function``: an IMMUTABLE user function, whatever
it does), and inlines a SQL-language function (``inline_function``), whose body it then
folds whatever its arguments are (``sql_ran(x)`` with body ``$1 + probe_ran(1)`` ran
``probe_ran``). A call over a column (``f_unaccent(name)`` in PL/pgSQL) runs at writes only.

An I/O conversion (``COERCEVIAIO``: ``jsonb::text``, ``text::some_enum``) folds as a call of
its argument type's output function and its result type's input function, which run the
functions of every type a value of it holds (``record_in`` each field's, ``array_in`` the
element's): a user's (C: a superuser's) are judged as calls, PostgreSQL's own read at
most (``enum_in``, ``date_in``: STABLE, none VOLATILE), and a type holding a domain, whose
input function runs the domain's CHECKs, leaves the tree unread.

``planned_calls`` reads the server's stored tree (``nodeToString``: ``{FUNCEXPR :funcid 16384
:args ({VAR ...} {CONST ...})}``), bounded in size and depth, and answers the functions it
may run, erring towards more: a node it does not know, a function it cannot name, a tree too
big or malformed, gives ``None`` (the caller then judges every call, as the text says).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import NamedTuple

MAX_CHARS = 200_000
MAX_DEPTH = 100
# Nodes that hold expressions and call nothing of their own, or whose calls are named by a
# ``*funcid`` field; any other node (a domain coercion, a row comparison, GREATEST, JSON)
# makes the tree unread.
_PLAIN = frozenset(
    [
        "VAR",
        "CONST",
        "RELABELTYPE",
        "BOOLEXPR",
        "CASE",
        "CASEWHEN",
        "CASETESTEXPR",
        "COALESCEEXPR",
        "NULLTEST",
        "BOOLEANTEST",
        "ARRAYEXPR",
        "ARRAYCOERCEEXPR",
        "COLLATEEXPR",
        "ROW",
    ]
)
_CALLS = frozenset(["FUNCEXPR", "OPEXPR", "DISTINCTEXPR", "NULLIFEXPR", "SCALARARRAYOPEXPR"])
_FUNCID = re.compile(r"(?:func|opfunc|hashfunc|negfunc)id")
# The fields naming a node's type (``consttype``, ``funcresulttype``, ``array_typeid``...):
# one of them, within an I/O conversion's argument, is the type it converts from.
TYPE_FIELD = re.compile(r"[a-z_]*type(?:id)?|typeId")
_TOKEN = re.compile(r"[{}()]|(?:\\.|[^\s{}()\\])+")


class Function(NamedTuple):
    """A function a tree may call: ``name`` as the check reads it (schema-qualified),
    ``user`` unless PostgreSQL defined it, ``sql`` when the planner may put its body or its
    argument defaults into the call (a SQL function, inlined; one with defaults, which the
    tree leaves out and the planner adds, then folds), ``immutable`` when ``provolatile``
    is ``i``."""

    name: str
    user: bool
    sql: bool
    immutable: bool


class Type(NamedTuple):
    """A type an I/O conversion converts from or to: ``io``, the oids of the input and
    output functions of it and of every type its values hold (a domain's base, an array's
    element, a composite's fields, a range's subtype); ``domain`` when one of those is a
    domain, whose input runs its CHECKs."""

    io: tuple[int, ...]
    domain: bool


class _Unread(Exception):
    """The tree is not one this reader knows: judge every call."""


def planned_calls(
    tree: str, functions: Mapping[int, Function], types: Mapping[int, Type] | None = None
) -> frozenset[str] | None:
    """The names of the functions the planner may run folding ``tree`` (``None``: unread).

    A user function runs where its arguments may fold to constants, or where it is SQL
    (inlined); a user operator's function is judged wherever it stands (a predicate proof
    may call it on constants); a built-in runs folded only when IMMUTABLE, which is pure,
    and is judged otherwise. An I/O conversion whose argument may fold runs the ``io`` of
    its result type and of every type named within its argument (``types``; one missing, or
    holding a domain: unread): the user's among them are judged."""
    if len(tree) > MAX_CHARS:
        return None
    tokens = _TOKEN.findall(tree)
    try:
        node, end = _parse(tokens, 0, 0)
        if end != len(tokens):
            raise _Unread
        found: set[str] = set()
        _may_fold(node, _Catalog(functions, types or {}), found)
    except (_Unread, IndexError, ValueError, TypeError, RecursionError):
        return None
    return frozenset(found)


# A node: (its type, {field: value}); a list: a Python list; a scalar: its token.
_Value = object


def _parse(tokens: list[str], i: int, depth: int) -> tuple[_Value, int]:
    if depth > MAX_DEPTH:
        raise _Unread
    head = tokens[i]
    if head == "{":
        kind, fields, i = tokens[i + 1], {}, i + 2
        while tokens[i] != "}":
            field = tokens[i]
            if not field.startswith(":"):
                raise _Unread
            i += 1
            values: list[_Value] = []
            while not tokens[i].startswith(":") and tokens[i] != "}":
                value, i = _parse(tokens, i, depth + 1)
                values.append(value)
            fields[field[1:]] = values
        return (kind, fields), i + 1
    if head == "(":
        items: list[_Value] = []
        i += 1
        while tokens[i] != ")":
            item, i = _parse(tokens, i, depth + 1)
            items.append(item)
        return items, i + 1
    if head in ("}", ")"):
        raise _Unread
    return head, i + 1


def _children(value: _Value) -> list[tuple[str, dict[str, list[_Value]]]]:
    """The nodes ``value`` holds (itself, or a list's, or a field's values)."""
    if isinstance(value, tuple):
        return [value]
    if isinstance(value, list):
        return [node for item in value for node in _children(item)]
    return []


class _Catalog(NamedTuple):
    functions: Mapping[int, Function]
    types: Mapping[int, Type]


def _may_fold(value: _Value, catalog: _Catalog, found: set[str]) -> bool:
    """Whether ``value`` may fold to a constant (a list: every item may); the functions its
    folding may run are added to ``found``."""
    functions = catalog.functions
    if isinstance(value, list):
        items = [_may_fold(item, catalog, found) for item in value]  # each: calls found
        return all(items)
    if not isinstance(value, tuple):
        return True
    kind, fields = value
    if kind == "VAR":
        return False
    if kind == "CONST":
        return True
    inner = [n for name, vs in fields.items() for n in _children(vs) if name != "args"]
    args = _children(fields.get("args", []))
    folds = [_may_fold(node, catalog, found) for node in args]
    nested = [_may_fold(node, catalog, found) for node in inner]
    if kind == "COERCEVIAIO":
        if all(nested):  # a constant converted: its type's output, the result's input run
            _conversion(fields, catalog, found)
        return all(nested)
    if kind in ("NULLTEST", "BOOLEANTEST"):
        # 17+ folds ``x IS NULL`` on a NOT NULL column (a CHECK's, with the planner's root)
        return True
    if kind in _PLAIN:
        # CASE, COALESCE, AND, OR drop a branch on a constant: folds unless all are columns
        return any(folds + nested) or not (args or inner)
    if kind not in _CALLS:
        raise _Unread
    called = [int(vs[0]) for name, vs in fields.items() if _FUNCID.fullmatch(name) and vs]
    if not called or not called[0]:  # funcid or opfuncid comes first: unset, unknown
        raise _Unread
    sql = False
    for oid in (oid for oid in called if oid):
        function = functions.get(oid)
        if function is None:
            raise _Unread
        sql = sql or function.sql
        runs = all(folds) or function.sql or (kind != "FUNCEXPR" and function.user)
        if runs and (function.user or not function.immutable):
            found.add(function.name)
    if sql or all(folds):
        return True
    # a strict call with a NULL argument folds to NULL whatever the others are: a column
    # stays only beside constants known not NULL
    return not all(f is False or _non_null_const(n) for f, n in zip(folds, args, strict=True))


def _conversion(fields: dict[str, list[_Value]], catalog: _Catalog, found: set[str]) -> None:
    """Adds what an I/O conversion (its ``fields``) of a constant runs to ``found``."""
    named = [int(v) for v in fields.get("resulttype", []) if isinstance(v, str)]
    named += _types_within(fields.get("arg", []))
    if not named:
        raise _Unread
    for oid in named:
        held = catalog.types.get(oid)
        if held is None or held.domain:
            raise _Unread
        for io in held.io:
            function = catalog.functions.get(io)
            if function is None:
                raise _Unread
            # PostgreSQL's own I/O functions are IMMUTABLE or STABLE (15: 138 and 57, none
            # VOLATILE): at most they read a setting or the catalog (enum_in, date_in), and
            # what a value holds calls the held types' functions, judged here each
            if function.user:
                found.add(function.name)


def _types_within(value: _Value) -> list[int]:
    """The type oids every node within ``value`` names."""
    if isinstance(value, list):
        return [oid for item in value for oid in _types_within(item)]
    if not isinstance(value, tuple):
        return []
    oids = [int(v) for name, vs in value[1].items() if TYPE_FIELD.fullmatch(name) for v in vs]
    return oids + [oid for vs in value[1].values() for oid in _types_within(vs)]


def _non_null_const(node: tuple[str, dict[str, list[_Value]]]) -> bool:
    return node[0] == "CONST" and node[1].get("constisnull") == ["false"]
