"""The read-only statement check: deny by default, on tokens from the real lexer.

``classify(sql, dialect)`` accepts a statement only when, under *every* lexer reading of the
dialect:

1. the text is exactly one statement (trailing semicolons allowed);
2. it starts with a read statement kind of the dialect (SELECT, WITH, VALUES, TABLE, SHOW,
   DESCRIBE, EXPLAIN of an allowed statement, SQLite introspection PRAGMAs);
3. no keyword that writes or locks appears anywhere outside literals (data-modifying CTEs,
   ``SELECT INTO``, ``INTO OUTFILE``, ``FOR UPDATE/SHARE``, ``LOCK IN SHARE MODE``);
4. no side-effecting function or package is called (``pg_sleep``, ``lo_export``,
   ``LOAD_FILE``, ``DBMS_*``, Vertica meta-functions, ...).

Keywords inside string literals, quoted identifiers and comments are never seen, so
``SELECT 'drop table'`` is fine. This check is the second fence: the engine's read-only
transaction and a SELECT-only account are the others.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from rho_domain.errors import StatementRefused
from rho_domain.sql.dialects import REFUSED_WORDS, Dialect, dialect
from rho_domain.sql.lexer import Kind, Token, tokenize

ROW_KINDS = frozenset({"SELECT", "WITH", "VALUES", "TABLE"})
_FUNCTION_WORDS = frozenset({"INSERT", "REPLACE"})  # also MySQL/SQL string functions
_LOCKING_AFTER_FOR = frozenset({"UPDATE", "SHARE", "KEY", "NO"})


@attrs.frozen(kw_only=True)
class Verdict:
    """The outcome for one statement. ``kind`` is its first keyword ("" if unknown)."""

    kind: str
    read_only: bool
    reason: str = ""

    @property
    def returns_rows(self) -> bool:
        """A plain query (SELECT/WITH/VALUES/TABLE) that a server-side cursor can stream."""
        return self.read_only and self.kind in ROW_KINDS


def classify(sql: str, dialect_name: str) -> Verdict:
    """Judge ``sql`` for ``dialect_name``; never raises for bad SQL (a refusal is a value)."""
    d = dialect(dialect_name)
    first: Verdict | None = None
    for rules in d.readings:
        try:
            verdict = _classify(tokenize(sql, rules), d)
        except StatementRefused as exc:
            verdict = Verdict(kind=first.kind if first else "", read_only=False, reason=str(exc))
        if not verdict.read_only:
            return verdict
        first = first or verdict
    assert first is not None  # every dialect has at least one reading
    return first


def check_read_only(sql: str, dialect_name: str) -> Verdict:
    """Return the verdict of a read-only statement; raise ``StatementRefused`` otherwise."""
    verdict = classify(sql, dialect_name)
    if not verdict.read_only:
        raise StatementRefused(
            f"{verdict.reason}. Only single read-only statements run here "
            f"({_allowed(dialect(dialect_name))}); quote identifiers that look like keywords."
        )
    return verdict


def _allowed(d: Dialect) -> str:
    return ", ".join(sorted(d.read_kinds))


def _classify(tokens: Sequence[Token], d: Dialect) -> Verdict:
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
    reason = _check_kind(kind, stmt[start + 1 :], d) or _check_tokens(kind, stmt, d)
    return Verdict(kind=kind, read_only=not reason, reason=reason)


def _split(tokens: Sequence[Token]) -> list[list[Token]]:
    statements: list[list[Token]] = [[]]
    for token in tokens:
        if token == Token(Kind.PUNCT, ";"):
            statements.append([])
        else:
            statements[-1].append(token)
    return [s for s in statements if s]


def _check_kind(kind: str, rest: Sequence[Token], d: Dialect) -> str:
    """Rules for statement kinds that wrap or name something else."""
    if kind == "EXPLAIN":
        return _check_explain(rest, d)
    if kind == "PRAGMA":
        return _check_pragma(rest, d)
    if kind in ("DESCRIBE", "DESC"):
        return "" if _is_name(rest) else f"{kind} takes a table name"
    return ""


def _check_explain(rest: Sequence[Token], d: Dialect) -> str:
    i = 0
    while i < len(rest) and (
        (rest[i].kind is Kind.WORD and rest[i].text in d.explain_options)
        or (rest[i].kind is Kind.PUNCT and rest[i].text in "(),=")
        or rest[i].kind in (Kind.NUMBER, Kind.STRING)
    ):
        i += 1
    inner = rest[i:]
    if inner and inner[0].kind is Kind.WORD and inner[0].text in ROW_KINDS & d.read_kinds:
        return ""
    if d.name == "mysql" and _is_name(inner):  # EXPLAIN tbl is DESCRIBE tbl in MySQL
        return ""
    what = inner[0].text if inner else "nothing"
    return f"EXPLAIN is only allowed for a read query, not for {what}"


def _check_pragma(rest: Sequence[Token], d: Dialect) -> str:
    names = [t for t in rest[:3] if t.kind in (Kind.WORD, Kind.QUOTED)]
    dotted = len(rest) >= 3 and rest[1] == Token(Kind.PUNCT, ".")
    name_token = names[1] if dotted and len(names) > 1 else (names[0] if names else None)
    if name_token is None or name_token.text.lower() not in d.pragmas:
        shown = name_token.text.lower() if name_token else "?"
        allowed = ", ".join(sorted(d.pragmas))
        return f"PRAGMA {shown} is not allowed (only {allowed})"
    tail = rest[3 if dotted else 1 :]
    operand = (Kind.WORD, Kind.QUOTED, Kind.STRING, Kind.NUMBER)
    if not tail:
        return ""
    if len(tail) == 3 and tail[0].text == "(" and tail[2].text == ")" and tail[1].kind in operand:
        return ""
    if len(tail) == 2 and tail[0].text == "=" and tail[1].kind in operand:
        return ""
    return "PRAGMA takes at most one table or index name"


def _is_name(tokens: Sequence[Token]) -> bool:
    """``name``, ``schema.name`` or ``name column`` (MySQL DESCRIBE tbl col)."""
    idents = (Kind.WORD, Kind.QUOTED)
    if not tokens or tokens[0].kind not in idents or len(tokens) > 4:
        return False
    for i, token in enumerate(tokens):
        if token.kind not in idents and not (token.text == "." and i % 2 == 1):
            return False
    return True


def _check_tokens(kind: str, stmt: Sequence[Token], d: Dialect) -> str:
    """Keywords that write or lock, and functions with side effects, anywhere."""
    words = REFUSED_WORDS | d.refused_words
    for i, token in enumerate(stmt):
        if token.kind not in (Kind.WORD, Kind.QUOTED):
            continue
        prev = stmt[i - 1] if i else None
        nxt = stmt[i + 1] if i + 1 < len(stmt) else None
        called = nxt is not None and nxt.text == "(" and nxt.kind is Kind.PUNCT
        qualified = prev is not None and prev.text == "." and prev.kind is Kind.PUNCT
        qualifier = nxt is not None and nxt.text == "." and nxt.kind is Kind.PUNCT
        name = token.text.lower()
        if (called and _denied_function(name, d)) or (qualified and name in d.denied_functions):
            return f"the function {name}() has side effects"
        if qualifier and d.denied_packages and name.startswith(d.denied_packages):
            return f"the package {name} has side effects"
        if token.kind is not Kind.WORD or qualified:
            continue
        if kind == "SHOW" and i <= 2:
            continue  # SHOW CREATE TABLE, SHOW GRANTS: names, not actions
        if token.text in words and not (called and token.text in _FUNCTION_WORDS):
            return f"{token.text} is not allowed in a read-only statement"
        if token.text == "FOR" and nxt is not None and nxt.is_word(*_LOCKING_AFTER_FOR):
            return "locking clauses (FOR UPDATE/SHARE) are not allowed"
    return ""


def _denied_function(name: str, d: Dialect) -> bool:
    return name in d.denied_functions or (
        bool(d.denied_prefixes) and name.startswith(d.denied_prefixes)
    )
