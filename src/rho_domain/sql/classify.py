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
   ``(x).pg_read_file``, Oracle ``dbms_lock.sleep``), ``OPERATOR(schema.op)`` names only
   ``pg_catalog``, and MySQL ``@var := ...`` assignments (state that would outlive the call)
   are refused.

Keywords inside string literals, quoted identifiers and comments are never seen, so
``SELECT 'drop table'`` is fine. This check is the second fence: the engine's read-only
transaction and a SELECT-only account are the others.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from rho_domain.errors import ConfigError, StatementRefused
from rho_domain.sql import functions as fn
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


def classify(
    sql: str,
    dialect_name: str,
    *,
    settings: frozenset[str] | None = None,
    allowed_functions: frozenset[str] = frozenset(),
    available_functions: frozenset[str] | None = None,
) -> Verdict:
    """Judge ``sql`` for ``dialect_name``; never raises for bad SQL (a refusal is a value).

    ``settings`` are the server settings that change how text is read (for example
    ``sql_mode:NO_BACKSLASH_ESCAPES``); ``None`` means unknown, and then every reading of
    the dialect must pass. ``allowed_functions`` adds vetted functions (``schema.name`` or
    ``name``, as the catalog spells them) to the dialect's allowlist. ``available_functions``
    are the names the connected server builds in: allowlisted names outside it are refused,
    since the server would resolve them to a user function of the same name."""
    d = dialect(dialect_name)
    if available_functions is not None:
        d = attrs.evolve(d, functions=d.functions & available_functions)
    allowed = _fold_allowed(allowed_functions, d)
    first: Verdict | None = None
    for rules in d.reading_for(settings):
        try:
            verdict = _classify(tokenize(sql, rules), d, allowed)
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
) -> Verdict:
    """Return the verdict of a read-only statement; raise ``StatementRefused`` otherwise."""
    verdict = classify(
        sql,
        dialect_name,
        settings=settings,
        allowed_functions=allowed_functions,
        available_functions=available_functions,
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
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise ConfigError(
            f"databases.{alias}.options.allowed_functions: expected a list of function names"
        )
    return frozenset(value)


def _fold_allowed(names: frozenset[str], d: Dialect) -> frozenset[str]:
    return frozenset(n.lower() for n in names) if d.folding == "insensitive" else names


def _classify(tokens: Sequence[Token], d: Dialect, allowed: frozenset[str]) -> Verdict:
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
        _check_kind(kind, stmt[start + 1 :], d)
        or _check_tokens(kind, stmt, start, d, allowed)
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
    """MySQL's ``DESCRIBE tbl_name [col_name | wild]``: ``table`` or ``schema.table``,
    then at most one column name or quoted wildcard (``'a%'``); nothing else."""
    idents = (Kind.WORD, Kind.QUOTED)
    if not tokens or tokens[0].kind not in idents:
        return False
    dotted = len(tokens) >= 3 and tokens[1].is_punct(".") and tokens[2].kind in idents
    rest = tokens[3 if dotted else 1 :]
    return not rest or (len(rest) == 1 and rest[0].kind in (*idents, Kind.STRING))


def _check_tokens(
    kind: str, stmt: Sequence[Token], head: int, d: Dialect, allowed: frozenset[str]
) -> str:
    """Keywords that write or lock, function calls, side-effect names, anywhere."""
    words = REFUSED_WORDS | d.refused_words
    shape = _shape(stmt)
    for i, token in enumerate(stmt):
        prev = stmt[i - 1] if i else None
        nxt = stmt[i + 1] if i + 1 < len(stmt) else None
        called = nxt is not None and nxt.is_punct("(")
        if d.assignments and token.is_punct(":") and nxt is not None and nxt.is_punct("="):
            return "assigning a user variable (:=) is not allowed: no state may outlive the call"
        if d.operator_syntax and token.is_word("OPERATOR") and called:
            reason = _check_operator(stmt, i + 1, d)
            if reason:
                return reason
            continue
        if called and i != head and kind != "PRAGMA" and not _not_a_call(stmt, i, d, shape):
            reason = _check_call(stmt, i, d, allowed)
            if reason:
                return reason
        if token.kind not in (Kind.WORD, Kind.QUOTED):
            continue
        qualified = prev is not None and prev.is_punct(".")
        qualifier = nxt is not None and nxt.is_punct(".")
        if qualified and not called and _side_effect(catalog_name(token, d), d):
            return f"{catalog_name(token, d)} names a function with side effects"
        if qualifier and d.denied_packages and token.text.lower().startswith(d.denied_packages):
            return f"the package {token.text.lower()} has side effects"
        if token.kind is not Kind.WORD or qualified:
            continue
        if kind == "SHOW" and i <= 2:
            continue  # SHOW CREATE TABLE, SHOW GRANTS: names, not actions
        if token.text in words and not (called and token.text in _FUNCTION_WORDS):
            return f"{token.text} is not allowed in a read-only statement"
        if token.text == "FOR" and nxt is not None and nxt.is_word(*_LOCKING_AFTER_FOR):
            return "locking clauses (FOR UPDATE/SHARE) are not allowed"
        if token.text == "NEXT" and nxt is not None and nxt.is_word("VALUE"):
            return "NEXT VALUE FOR advances a sequence"
    return ""


def catalog_name(token: Token, d: Dialect) -> str:
    """The name the engine looks up for an identifier token (ASCII-only case folding)."""
    if token.kind is Kind.QUOTED:
        name = _ascii_lower(token.text) if d.folding == "insensitive" else token.text
    elif d.folding == "upper":
        name = _ascii_upper(token.raw or token.text)
    else:
        name = _ascii_lower(token.raw or token.text)
    if d.max_identifier and len(name.encode()) > d.max_identifier:
        name = name.encode()[: d.max_identifier].decode(errors="ignore")
    return name


_LOWER = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}
_UPPER = {c + 32: c for c in range(ord("A"), ord("Z") + 1)}


def _ascii_lower(text: str) -> str:
    return text.translate(_LOWER)


def _ascii_upper(text: str) -> str:
    return text.translate(_UPPER)


def _side_effect(name: str, d: Dialect) -> bool:
    return bool(d.side_effect_prefixes) and name.lower().startswith(d.side_effect_prefixes)


def _ends_operand(token: Token | None) -> bool:
    if token is None:
        return False
    if token.kind in (Kind.QUOTED, Kind.STRING, Kind.NUMBER, Kind.PARAM):
        return True
    if token.kind is Kind.PUNCT:
        return token.text in ")]"
    return token.text not in fn.EXPRESSION_STARTS


@attrs.frozen
class _Shape:
    """What the call rules ask of the whole statement, found once per statement (asking it
    for each token made the check quadratic: 4,000 calls in 40 KB took 18 s)."""

    ctes: frozenset[int]  # positions of CTE names followed by a column list
    in_case: tuple[bool, ...]  # per position: inside CASE ... END


def _shape(stmt: Sequence[Token]) -> _Shape:
    inside: list[bool] = []
    depth = 0
    for token in stmt:
        inside.append(depth > 0)
        if token.is_word("CASE"):
            depth += 1
        elif token.is_word("END") and depth:
            depth -= 1  # in a query, END closes only CASE
    return _Shape(ctes=_cte_names(stmt), in_case=tuple(inside))


def _not_a_call(stmt: Sequence[Token], i: int, d: Dialect, shape: _Shape) -> bool:
    """Whether ``stmt[i] (`` is syntax rather than a function call: a parenthesis opened
    after an operator, a comma or another parenthesis (grouping: ``a = (SELECT ...)``,
    ``((a), ())``), a keyword that takes a parenthesis, a type with a length, an alias or CTE
    column list."""
    token, prev = stmt[i], stmt[i - 1] if i else None
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
        if word in fn.AFTER_OPERAND and not after_operator and _ends_operand(prev):
            return True
        if prev is not None and _syntax_after(word, prev, stmt, i, shape):
            return True
    return i in shape.ctes


_BEFORE_BY = ("ORDER", "GROUP", "PARTITION", "CONNECT", "SIBLINGS")


def _syntax_after(word: str, prev: Token, stmt: Sequence[Token], i: int, shape: _Shape) -> bool:
    """Words that take a parenthesis as syntax in one place only (elsewhere, where the word
    is not reserved, ``word(`` calls a function of that name)."""
    if word in fn.TYPE_WORDS and (
        prev.is_punct(":") or (prev.kind is Kind.WORD and prev.text in fn.TYPE_WORDS)
    ):
        return True  # a::numeric(10, 2), DOUBLE PRECISION(5)
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
                close = _matching(stmt, j)
                if close is None:
                    break
                found.add(k)
                j = close + 1
            if j >= len(stmt) or not stmt[j].is_word("AS"):
                break
            j += 1
            while j < len(stmt) and stmt[j].is_word("NOT", "MATERIALIZED"):
                j += 1
            body = _matching(stmt, j) if j < len(stmt) and stmt[j].is_punct("(") else None
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


def _matching(stmt: Sequence[Token], open_at: int) -> int | None:
    depth = 0
    for j in range(open_at, len(stmt)):
        if stmt[j].is_punct("("):
            depth += 1
        elif stmt[j].is_punct(")"):
            depth -= 1
            if depth == 0:
                return j
    return None


def _check_call(stmt: Sequence[Token], i: int, d: Dialect, allowed: frozenset[str]) -> str:
    token = stmt[i]
    if token.kind not in (Kind.WORD, Kind.QUOTED):
        return f"{token.text}( is not a function call this check can judge"
    qualifiers: list[str] = []
    j = i
    while j >= 2 and stmt[j - 1].is_punct(".") and stmt[j - 2].kind in (Kind.WORD, Kind.QUOTED):
        qualifiers.insert(0, catalog_name(stmt[j - 2], d))
        j -= 2
    name = catalog_name(token, d)
    full = ".".join([*qualifiers, name])
    if full in allowed:
        return ""
    if not qualifiers and name in d.functions:
        return ""
    if len(qualifiers) == 1:
        schema = qualifiers[0]
        if schema in d.system_schemas and name in d.functions:
            return ""
        if name in d.qualified_functions.get(schema, frozenset()):
            return ""
    return (
        f"the function {full}() is not on the {d.name} list of read-only functions (a user "
        "function can write; an administrator can allow a vetted one with the alias's "
        "options.allowed_functions)"
    )


def _check_operator(stmt: Sequence[Token], open_at: int, d: Dialect) -> str:
    """PostgreSQL ``OPERATOR(schema.op)``: only built-in operators (pg_catalog)."""
    close = _matching(stmt, open_at)
    inside = stmt[open_at + 1 : close] if close is not None else ()
    names = [t for t in inside if t.kind in (Kind.WORD, Kind.QUOTED)]
    ops = [t for t in inside if t.kind is Kind.PUNCT and t.text != "."]
    if not ops or len(names) > 1:
        return "OPERATOR(...) must name one operator"
    if names and catalog_name(names[0], d) not in d.system_schemas:
        return (
            f"OPERATOR({catalog_name(names[0], d)}.…) names a user operator, which may run "
            "a user function"
        )
    return ""
