"""Calls no call in the text names: a server's operators, casts and domains that run code.

PostgreSQL runs a function for ``a ### b`` (the operator's function), for ``x::t`` and
``CAST(x AS t)`` (a cast's function, a domain's CHECK), with no ``f(`` anywhere in the text.
Built-in operators and casts call built-ins; those an administrator or an extension created
may call any function: a user function, or ``pg_read_file`` behind a new operator name. So
the adapter reads them from the server's catalog (``CatalogCalls``: each operator and type
name with the functions it runs), and ``hidden_call`` refuses a statement naming one whose
functions are not all on the allowlist, as a call of each would be refused.

An operator is looked for in each run of operator characters, and in the words that call one
by name (``implied_names``: ``@ - @`` is refused with ``@-@``, ``LIKE`` as ``~~``). A type is
any word or quoted name folded as the catalog spells it, wherever it stands (a column named
like such a type is refused too). Views are judged by their queries where named (a MariaDB
stored function may ``SET GLOBAL``), and so are a table's row security policies (their
``USING`` expressions), virtual columns and what the planner computes for its read (an index's
expression); a foreign table (a ``file_fdw`` one runs a program or reads a server file, a
``postgres_fdw`` one a remote query), and a table above one, are refused where named.
Pure: the catalog arrives as data (``CatalogCalls``, in ``catalog_values.py``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

import attrs

from rho_domain.errors import StatementRefused
from rho_domain.sql.catalog_values import CatalogCalls
from rho_domain.sql.dialect_values import Dialect
from rho_domain.sql.implied_names import JSON_TYPES, TYPE_SPELLINGS, operator_runs
from rho_domain.sql.lexer import tokenize
from rho_domain.sql.name_folding import catalog_name, qualified_names, relation_name
from rho_domain.sql.token_rules import check_tokens
from rho_domain.sql.tokens import Kind, Token

_MAX_DEPTH = 8


def hidden_call(
    stmt: Sequence[Token],
    d: Dialect,
    allowed: frozenset[str],
    calls: CatalogCalls,
    depth: int = 0,
) -> str:
    """Why ``stmt`` is refused for an operator or type that runs a function off the dialect's
    allowlist and ``allowed`` (the alias's vetted ``schema.name`` functions), or "".
    ``depth`` counts the CHECKs being judged inside one another (domains can name each
    other in their CHECKs, around a loop)."""
    return (
        _anywhere(d, allowed, calls)
        or _shows_all(stmt, calls, d)
        or (_user_function(stmt, d, allowed, calls) if calls.functions else "")
        or (_operator(stmt, d, allowed, calls.operators) if calls.operators else "")
        or _types(stmt, d, allowed, calls, depth)
    )


def made_after_setup(calls: CatalogCalls) -> str:
    """Why nothing runs on this database, the harness's own reads too (listing tables,
    describing one), which name its built-in schemas: what ``calls.system_made`` lists was
    made or changed there after it was set up; "" when nothing was."""
    if not calls.system_made:
        return ""
    made = ", ".join(sorted(calls.system_made))
    return (
        f"this database's pg_catalog holds functions, operators or views made or "
        f"changed after it was set up ({made}): the reads this check relies on may run "
        "them, so no statement runs here until they are dropped or moved to a schema of "
        "their own (a built-in changed or re-pointed: its row stays newer than the "
        "set-up even with its values put back, so restore a dump of the database into a "
        "new one)"
    )


def _anywhere(d: Dialect, allowed: frozenset[str], calls: CatalogCalls) -> str:
    """Why any statement may meet a function off the list: an implicit or assignment cast,
    or a user operator class, which the server calls for values of a type no text names."""
    made = made_after_setup(calls)
    if made:
        return made
    implicit = calls.types.get("")
    if implicit:
        reason = _refused("an implicit cast", implicit, d, allowed)
        if reason:
            return reason
    if calls.comparisons:
        return _refused(
            "a user operator class",
            calls.comparisons,
            d,
            allowed,
            "sorting, grouping, DISTINCT and UNION call it with no operator written",
        )
    return ""


def _shows_all(stmt: Sequence[Token], calls: CatalogCalls, d: Dialect) -> str:
    """``SHOW ALL`` is ``pg_show_all_settings()`` by another spelling: refused with it. The
    server finds a name whatever its case, quoted too: ``SHOW "all"`` is ``SHOW ALL`` and
    ``SHOW "PRIMARY_CONNINFO"`` is ``SHOW primary_conninfo`` (each showed the password)."""
    show = bool(stmt) and stmt[0].is_word("SHOW")
    shown = [relation_name(t, d).lower() for t in stmt[1:]] if show else []
    names = ["pg_show_all_settings" if n == "all" else n for n in shown]
    return next((calls.refused_names[n] for n in names if n in calls.refused_names), "")


def _operator(
    stmt: Sequence[Token],
    d: Dialect,
    allowed: frozenset[str],
    operators: Mapping[str, frozenset[str]],
) -> str:
    for run in set(operator_runs(stmt)):
        for operator, functions in operators.items():
            if operator in run:
                reason = _refused(f"the operator {operator}", functions, d, allowed)
                if reason:
                    return reason
    return ""


def _types(
    stmt: Sequence[Token], d: Dialect, allowed: frozenset[str], calls: CatalogCalls, depth: int
) -> str:
    judged: set[str] = set()  # a name written 10,000 times is judged once
    for i, token in enumerate(stmt):
        if token.kind not in (Kind.WORD, Kind.QUOTED):
            continue
        written = relation_name(token, d)
        spellings = TYPE_SPELLINGS.get(written, ()) if token.kind is Kind.WORD else ()
        if "json" in written:  # to_json(t), json_agg, row_to_json, JSON_OBJECT ...
            spellings = (*spellings, *JSON_TYPES)
        for name in (written, *spellings, *qualified_names(stmt, i, d)):
            if name in judged:
                continue
            judged.add(name)
            if name in calls.refused_names:
                return calls.refused_names[name]
            cast_functions = calls.types.get(name)
            if cast_functions is not None:
                reason = _refused(f"the type {name}", cast_functions, d, allowed)
                if reason:
                    return reason
            for check in calls.checks.get(name, ()):
                expression = "SELECT " + check.removeprefix("CHECK ")
                reason = _check_refused(
                    f"the type {name}", check, expression, d, allowed, calls, depth
                )
                if reason:
                    return reason
            reason = _queries(name, d, allowed, calls, depth)
            if reason:
                return reason
    return ""


def _queries(
    name: str, d: Dialect, allowed: frozenset[str], calls: CatalogCalls, depth: int
) -> str:
    """Why reading ``name`` runs what its view query, row security policies, virtual columns
    or planned expressions call, judged without ``name`` (a query may name it again)."""
    kinds = ("views", "policies", "computed", "planned")
    unnamed = {k: {n: q for n, q in getattr(calls, k).items() if n != name} for k in kinds}
    inner = attrs.evolve(calls, **cast("dict[str, Any]", unnamed))
    for what, queries in (
        (f"the view {name}", calls.views.get(name, ())),
        (f"the row security policy of {name}", calls.policies.get(name, ())),
        (f"a virtual column of {name}", calls.computed.get(name, ())),
        (f"what the planner computes for a read of {name}", calls.planned.get(name, ())),
    ):
        for query in queries:
            reason = _check_refused(what, query, query, d, allowed, inner, depth)
            if reason:
                return reason
    return ""


def _user_function(
    stmt: Sequence[Token],
    d: Dialect,
    allowed: frozenset[str],
    calls: CatalogCalls,
) -> str:
    """Why a call or a field ``x.name`` may reach a user function off the list: the server
    picks a user's overload of an allowlisted name when its argument types match better."""
    for i, token in enumerate(stmt):
        if token.kind not in (Kind.WORD, Kind.QUOTED):
            continue
        called = i + 1 < len(stmt) and stmt[i + 1].is_punct("(")
        field = i > 0 and stmt[i - 1].is_punct(".") and not called
        if not (called or field):
            continue
        name = catalog_name(token, d)
        user = (calls.functions if called else calls.fields).get(name)
        if user:
            reason = _refused(
                f"{name}", user, d, allowed, "the server may pick a user's function by that name"
            )
            if reason:
                return reason
    return ""


def _check_refused(
    what: str,
    check: str,
    expression: str,
    d: Dialect,
    allowed: frozenset[str],
    calls: CatalogCalls,
    depth: int,
) -> str:
    """Why ``what`` (a type, a view) may not run ``check`` (a CHECK, a view's query): what
    the rules find in ``expression``, its text as a statement, read as a statement would be
    (every reading of the dialect)."""
    if depth >= _MAX_DEPTH:
        return f"{what} runs CHECKs or views nested too deep to judge"
    for rules in d.readings:
        try:
            tokens = tokenize(expression, rules)
        except StatementRefused as exc:
            return f"{what} runs {check}, which this check cannot read ({exc})"
        reason = check_tokens("SELECT", tokens, 0, d, allowed) or hidden_call(
            tokens, d, allowed, calls, depth + 1
        )
        if reason:
            return f"{what} runs {check} on this server: {reason}"
    return ""


_RUNS = "a user operator, cast or domain runs its function as a call would"


def _refused(
    what: str, functions: frozenset[str], d: Dialect, allowed: frozenset[str], why: str = _RUNS
) -> str:
    off = sorted(f for f in functions if not _may_run(f, d, allowed))
    if not off:
        return ""
    return (
        f"{what} calls {', '.join(f + '()' for f in off)} on this server ({why}), "
        "which is not on the "
        f"{d.name} list of read-only functions; an administrator can allow a vetted one "
        "with the alias's options.allowed_functions"
    )


def _may_run(qualified: str, d: Dialect, allowed: frozenset[str]) -> bool:
    schema, _, name = qualified.rpartition(".")
    return (
        qualified in allowed
        or name in allowed
        or (schema in d.system_schemas and name in d.functions)
    )
