"""The read-only statement check: deny by default, on tokens from the real lexer.

``classify(sql, dialect)`` accepts a statement only when, under *every* lexer reading of the
dialect:

1. the text is exactly one statement (trailing semicolons allowed);
2. it starts with a read statement kind of the dialect (SELECT, WITH, VALUES, TABLE, SHOW,
   DESCRIBE, EXPLAIN of an allowed statement, SQLite introspection PRAGMAs);
3. no keyword that writes or locks appears anywhere outside literals (data-modifying CTEs,
   ``SELECT INTO``, ``INTO OUTFILE``, ``FOR UPDATE/SHARE``, ``LOCK IN SHARE MODE``);
4. every function call names a function on the dialect's allowlist (``functions.py``), or
   one the alias's configuration allows. The name is judged as the engine resolves it: the
   lexer has decoded quoted and ``U&"..."`` spellings, the dialect folds case (ASCII only),
   PostgreSQL truncates to 63 bytes, and a schema qualifier must be a system schema
   (``pg_catalog.lower``); ``public.f()`` or ``"Lower"()`` is a user function and refused;
5. no name of a known side effect appears even without a call (PostgreSQL field notation
   ``(x).pg_read_file``, Oracle ``dbms_lock.sleep``); with the server's catalog known
   (``available_functions``), no built-in function outside the allowlist either (field
   notation ``('SELECT ...'::text).ts_stat`` runs a query), no system view that reads a
   server file when selected (``pg_file_settings``), ``OPERATOR(schema.op)`` names only
   ``pg_catalog``, and MySQL ``@var := ...`` assignments (state that would outlive the call)
   are refused;
6. no operator or type name that makes the server run a function off the allowlist without a
   call in the text (a user operator, cast or domain CHECK), the server's catalog known
   (``catalog_calls``: ``'x' ### path`` runs the operator's function).

Keywords inside string literals, quoted identifiers and comments are never seen, so
``SELECT 'drop table'`` is fine. This check is the second fence: the engine's read-only
transaction and a SELECT-only account are the others.

This module holds the statement's rules (1 and 2); the rules of the kinds that wrap or name
something else (EXPLAIN, PRAGMA, DESCRIBE, MySQL's SHOW) are ``statement_kinds.py``'s, the
token rules (3 to 5) ``token_rules.py``'s, and which ``word (`` is a call at all is
``call_syntax.py``'s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from rho_domain.config_checks import string_for_strings
from rho_domain.errors import ConfigError, StatementRefused
from rho_domain.sql.catalog_calls import hidden_call
from rho_domain.sql.catalog_values import CatalogCalls
from rho_domain.sql.dialect_values import Dialect
from rho_domain.sql.dialects import dialect
from rho_domain.sql.lexer import tokenize
from rho_domain.sql.statement_kinds import ROW_KINDS, check_kind
from rho_domain.sql.token_rules import check_tokens
from rho_domain.sql.tokens import Kind, Token
from rho_domain.value_methods import value_eq, value_hash, value_repr


@attrs.frozen(kw_only=True)
class Verdict:
    """The outcome for one statement. ``kind`` is its first keyword ("" if unknown)."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    kind: str
    read_only: bool
    reason: str = ""

    @property
    def returns_rows(self) -> bool:
        """A plain query (SELECT/WITH/VALUES/TABLE) that a server-side cursor can stream."""
        return self.read_only and self.kind in ROW_KINDS


def classify(
    sql: str,
    dialect_name: str,
    *,
    settings: frozenset[str] | None = None,
    allowed_functions: frozenset[str] = frozenset(),
    available_functions: frozenset[str] | None = None,
    catalog_calls: CatalogCalls | None = None,
) -> Verdict:
    """Judge ``sql`` for ``dialect_name``; never raises for bad SQL (a refusal is a value).

    ``settings`` are the server settings that change how text is read (for example
    ``sql_mode:NO_BACKSLASH_ESCAPES``); ``None`` means unknown, and then every reading of
    the dialect must pass. ``allowed_functions`` adds vetted functions (``schema.name`` or
    ``name``, as the catalog spells them) to the dialect's allowlist. ``available_functions``
    are the names the connected server builds in: allowlisted names outside it are refused,
    since the server would resolve them to a user function of the same name, and the others
    are refused in field notation as well (``x.name``, which PostgreSQL reads as ``name(x)``).
    ``catalog_calls``: the server's operators and types that run functions (rule 6)."""
    d = dialect(dialect_name)
    if available_functions is not None:
        d = attrs.evolve(
            d,
            functions=d.functions & available_functions,
            # x.name calls name(x) in PostgreSQL: a built-in outside the allowlist is
            # refused there too, not only the names of known side effects (ts_stat runs
            # the SQL text it is given, and is no pg_read_* or dblink*)
            field_calls_refused=available_functions - d.functions,
        )
    allowed = _fold_allowed(allowed_functions, d)
    first: Verdict | None = None
    judged: set[tuple[tuple[Kind, str, str], ...]] = set()
    for rules in d.reading_for(settings):
        try:
            tokens = tokenize(sql, rules)
            # Readings differ on a few characters (a CR in a comment, a backslash): one that
            # reads this text into the same tokens (raw spelling too) is judged once.
            seen = tuple((t.kind, t.text, t.raw) for t in tokens)
            if seen in judged:
                continue
            judged.add(seen)
            verdict = _classify(tokens, d, allowed, catalog_calls)
        except StatementRefused as exc:
            verdict = Verdict(kind=first.kind if first else "", read_only=False, reason=str(exc))
        if not verdict.read_only:
            return verdict
        first = first or verdict
    assert first is not None  # every dialect has at least one reading
    return first


def check_read_only(
    sql: str,
    dialect_name: str,
    *,
    settings: frozenset[str] | None = None,
    allowed_functions: frozenset[str] = frozenset(),
    available_functions: frozenset[str] | None = None,
    catalog_calls: CatalogCalls | None = None,
) -> Verdict:
    """Return the verdict of a read-only statement; raise ``StatementRefused`` otherwise."""
    verdict = classify(
        sql,
        dialect_name,
        settings=settings,
        allowed_functions=allowed_functions,
        available_functions=available_functions,
        catalog_calls=catalog_calls,
    )
    if not verdict.read_only:
        raise StatementRefused(
            f"{verdict.reason}. Only single read-only statements run here "
            f"({_allowed(dialect(dialect_name))}); quote identifiers that look like keywords."
        )
    return verdict


def _allowed(d: Dialect) -> str:
    return ", ".join(sorted(d.read_kinds))


def allowed_functions(options: Mapping[str, Any], *, alias: str) -> frozenset[str]:
    """The vetted extra functions of one alias: ``options.allowed_functions``, a list of
    names (``schema.name`` or ``name``, as the catalog spells them). Raises ``ConfigError``
    for anything but a list of strings."""
    value = options.get("allowed_functions", ())
    if isinstance(value, str):
        raise ConfigError(string_for_strings(f"databases.{alias}.options.allowed_functions", value))
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise ConfigError(
            f"databases.{alias}.options.allowed_functions: expected a list of function names"
        )
    return frozenset(value)


def _fold_allowed(names: frozenset[str], d: Dialect) -> frozenset[str]:
    """The allowlist as calls are compared with it: where a schema is told apart by case
    (``d.schema_case``), ``RHO.f`` allows the database ``RHO``'s function, not ``rho``'s."""
    if d.folding != "insensitive":
        return names
    if d.schema_case:
        return frozenset(
            f"{schema}{dot}{name.lower()}"
            for schema, dot, name in (n.rpartition(".") for n in names)
        )
    return frozenset(n.lower() for n in names)


def _classify(
    tokens: Sequence[Token],
    d: Dialect,
    allowed: frozenset[str],
    calls: CatalogCalls | None = None,
) -> Verdict:
    statements = _split(tokens)
    if not statements:
        return Verdict(kind="", read_only=False, reason="empty statement")
    if len(statements) > 1:
        return Verdict(
            kind="", read_only=False, reason="more than one statement (exactly one is allowed)"
        )
    stmt = statements[0]
    start = 0
    while start < len(stmt) and stmt[start] == Token(Kind.PUNCT, "("):
        start += 1
    head = stmt[start] if start < len(stmt) else None
    if head is None or head.kind is not Kind.WORD:
        return Verdict(
            kind="", read_only=False, reason="the statement does not start with a keyword"
        )
    kind = head.text
    if kind not in d.read_kinds:
        return Verdict(kind=kind, read_only=False, reason=f"{kind} statements are not read-only")
    reason = (
        check_kind(kind, stmt[start + 1 :], d)
        or check_tokens(kind, stmt, start, d, allowed)
        or (hidden_call(stmt, d, allowed, calls) if calls else "")
        or _unbalanced(stmt)
    )
    return Verdict(kind=kind, read_only=not reason, reason=reason)


def _unbalanced(stmt: Sequence[Token]) -> str:
    """Parentheses that do not pair up: the server rejects the text, and the rules that look
    for the ``(`` of a ``)`` may have judged a statement no engine reads (checked last, so a
    more precise reason comes first)."""
    depth = 0
    for token in stmt:
        if token.is_punct("("):
            depth += 1
        elif token.is_punct(")"):
            depth -= 1
            if depth < 0:
                return "a ) closes no ("
    return "a ( is never closed" if depth else ""


def _split(tokens: Sequence[Token]) -> list[list[Token]]:
    statements: list[list[Token]] = [[]]
    for token in tokens:
        if token == Token(Kind.PUNCT, ";"):
            statements.append([])
        else:
            statements[-1].append(token)
    return [s for s in statements if s]
