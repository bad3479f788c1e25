"""The rules every token of one read-only statement meets, wherever it stands.

``check_tokens(kind, stmt, head, d, allowed)`` returns the reason the statement is refused, or
"" when none applies: no keyword that writes or locks (rule 3 of ``classify.py``), every
function call on the dialect's allowlist or ``allowed`` (rule 4, the name judged as the engine
resolves it: ``catalog_name``), no side-effect name even without a call (nor, the server's
catalog known, a built-in outside the allowlist: ``x.name`` is ``name(x)`` in PostgreSQL), no
system view that reads a server file (``pg_hba_file_rules``), no relation holding password
hashes or stored credentials (``pg_authid``, ``mysql.user``), the options a foreign-data
wrapper keeps a password in (``pg_foreign_server``), the settings stored for other roles
(``rolconfig``), other sessions' statement texts (``SHOW PROCESSLIST``) nor a server's
internal schema (Vertica's ``v_internal``), ``OPERATOR(...)`` naming a built-in operator
only, no MySQL ``:=`` assignment, no Oracle ``name@link`` (rule 5).
Which ``word (`` is a call at all is ``call_syntax.py``'s. Pure; nothing here raises.
"""

from __future__ import annotations

from collections.abc import Sequence

from rho_domain.sql.call_syntax import matching_paren, not_a_call, statement_shape
from rho_domain.sql.dialect_values import REFUSED_WORDS, Dialect
from rho_domain.sql.name_folding import catalog_name, relation_name
from rho_domain.sql.tokens import Kind, Token

_FUNCTION_WORDS = frozenset({"INSERT", "REPLACE"})  # also MySQL/SQL string functions
_LOCKING_AFTER_FOR = frozenset({"UPDATE", "SHARE", "KEY", "NO"})


def check_tokens(
    kind: str, stmt: Sequence[Token], head: int, d: Dialect, allowed: frozenset[str]
) -> str:
    """Keywords that write or lock, function calls, side-effect names, anywhere."""
    words = REFUSED_WORDS | d.refused_words
    shape = statement_shape(stmt, d)
    for i, token in enumerate(stmt):
        prev = stmt[i - 1] if i else None
        nxt = stmt[i + 1] if i + 1 < len(stmt) else None
        called = nxt is not None and nxt.is_punct("(")
        reason = _punctuation(token, nxt, d) if token.kind is Kind.PUNCT else ""
        if reason:
            return reason
        if d.operator_syntax and token.is_word("OPERATOR") and called:
            reason = _check_operator(stmt, i + 1, d)
            if reason:
                return reason
            continue
        if called and i != head and kind != "PRAGMA" and not not_a_call(stmt, i, d, shape):
            reason = _check_call(stmt, i, d, allowed)
            if reason:
                return reason
        if token.kind not in (Kind.WORD, Kind.QUOTED):
            continue
        qualified = prev is not None and prev.is_punct(".")
        qualifier = nxt is not None and nxt.is_punct(".")
        reason = _relation_refused(stmt, i, d)
        if reason:
            return reason
        reason = _dotted(token, d, allowed, field=qualified and not called, package=qualifier)
        if reason:
            return reason
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


def _punctuation(token: Token, nxt: Token | None, d: Dialect) -> str:
    """MySQL's ``:=`` (state that outlives the call) and Oracle's ``name@link``."""
    if d.assignments and token.is_punct(":") and nxt is not None and nxt.is_punct("="):
        return "assigning a user variable (:=) is not allowed: no state may outlive the call"
    if d.database_links and token.is_punct("@"):
        return (
            "name@link reads another database through a database link, logged in as the "
            "link's stored user: the agent reads this database only"
        )
    return ""


def _relation_refused(stmt: Sequence[Token], i: int, d: Dialect) -> str:
    """Why the relation ``stmt[i]`` names may not be read: a file view, a secret catalog."""
    if d.file_relations and catalog_name(stmt[i], d) in d.file_relations:
        return (
            f"{catalog_name(stmt[i], d)} reads a server file when selected from (its "
            "function is not on the list of read-only functions)"
        )
    for reason, relations in (
        (_CREDENTIALS, d.secret_relations),
        (_TEXTS, d.statement_relations),
        (_OPTIONS, d.option_relations),
        (_ROLE_SETTINGS, d.setting_relations),
    ):
        entry = _named(stmt, i, d, relations) if relations else ""
        if entry and "." in entry and not (i and stmt[i - 1].is_punct(".")):
            schema, name = entry.split(".", 1)  # found on the search path
            return (
                f"{reason.format(entry)}; {name} alone names it where no schema before "
                f"{schema} on the search path has one: name an application's {name} with "
                "its schema (public.name)"
            )
        if entry:
            return reason.format(entry)
    return _internal(stmt, i, d) if d.internal_schemas else ""


def _internal(stmt: Sequence[Token], i: int, d: Dialect) -> str:
    """Why ``stmt[i]`` names a relation of an internal schema (``Dialect.internal_schemas``):
    after the schema's name, whatever the relation, or alone by its prefix."""
    name = relation_name(stmt[i], d)
    if i and stmt[i - 1].is_punct("."):
        if i < 2 or stmt[i - 2].kind not in (Kind.WORD, Kind.QUOTED):
            return ""
        schema = relation_name(stmt[i - 2], d)
        return _INTERNAL.format(f"{schema}.{name}") if schema in d.internal_schemas else ""
    for schema, prefixes in d.internal_schemas.items():
        if name.startswith(prefixes):
            return (
                f"{_INTERNAL.format(name)}; {name} alone names {schema}.{name} on the search "
                f"path: name an application's {name} with its schema (public.{name})"
            )
    return ""


_CREDENTIALS = (
    "{} holds password hashes or stored credentials: the agent does not read them (a login "
    "that may is an administrator's)"
)
_OPTIONS = (
    "{} shows the options of foreign-data wrappers, servers, tables, columns or user "
    "mappings, where "
    "a wrapper keeps a login's password: the agent does not read them; "
    "information_schema.foreign_servers, foreign_tables and user_mappings name them without "
    "their options"
)
_ROLE_SETTINGS = (
    "{} shows the settings stored for every role and database (ALTER ROLE ... SET), where "
    "an application's setting may hold a password: the agent does not read them; "
    "current_setting('name') gives this session's own"
)
_INTERNAL = (
    "{} is the server's internal table (the Data Collector's keep every user's statement "
    "texts): the agent does not read them; the v_monitor and v_catalog views show what is "
    "meant to be read"
)
_TEXTS = (
    "{} shows other sessions' statement texts, passwords in ALTER USER ... IDENTIFIED BY "
    "among them, or the values in rows of tables it may not read (the keys of the rows "
    "other sessions lock, the words of a full-text index): the agent does not read them"
)


def default_schema_refusals(d: Dialect, schema: str) -> dict[str, str]:
    """The refusals (``CatalogCalls.refused_names``) of a connection whose default schema is
    ``schema``: each relation listed as ``schema.name`` is then named by ``name`` alone (an
    alias whose database is ``mysql`` read ``SELECT Password FROM servers``)."""
    prefix = schema.lower() + "."
    refused: dict[str, str] = {}
    for reason, relations in ((_TEXTS, d.statement_relations), (_CREDENTIALS, d.secret_relations)):
        for entry in relations:
            if entry.startswith(prefix):
                name = entry.removeprefix(prefix)
                refused[name] = (
                    f"{reason.format(entry)}; this alias's database is {schema}, so {name} "
                    "alone names it, wherever it stands"
                )
    return refused


def _named(stmt: Sequence[Token], i: int, d: Dialect, relations: frozenset[str]) -> str:
    """The entry of ``relations`` that ``stmt[i]`` names, or "": an entry ``name`` wherever
    the name stands, ``schema.name`` where the name follows ``schema.`` (MySQL's ``user``
    is an application's table as often as ``mysql.user``), or stands alone when ``schema``
    is on the dialect's search path (``path_schemas``)."""
    name = relation_name(stmt[i], d)
    if name in relations:
        return name
    if i >= 2 and stmt[i - 1].is_punct(".") and stmt[i - 2].kind in (Kind.WORD, Kind.QUOTED):
        dotted = f"{relation_name(stmt[i - 2], d)}.{name}"
        return dotted if dotted in relations else ""
    if i and stmt[i - 1].is_punct("."):
        return ""
    # unqualified: a relation of a system schema on the search path (Vertica's v_catalog)
    return next((f"{s}.{name}" for s in d.path_schemas if f"{s}.{name}" in relations), "")


def _dotted(
    token: Token, d: Dialect, allowed: frozenset[str], *, field: bool, package: bool
) -> str:
    """The rules of a name beside a dot: ``x.name`` without a call (``field``), and an Oracle
    package before one (``package``)."""
    if field:
        reason = _field_call(catalog_name(token, d), d, allowed)
        if reason:
            return reason
    if package and d.denied_packages and token.text.lower().startswith(d.denied_packages):
        return f"the package {token.text.lower()} has side effects"
    return ""


def _field_call(name: str, d: Dialect, allowed: frozenset[str]) -> str:
    """Why ``x.name`` is refused: a known side effect, or (the server's catalog known) a
    built-in function outside the allowlist, which field notation would call as name(x)."""
    if d.side_effect_prefixes and name.lower().startswith(d.side_effect_prefixes):
        return f"{name} names a function with side effects"
    if name in d.field_calls_refused and name not in allowed:
        return (
            f".{name} calls the built-in function {name}() (field notation: x.{name} is "
            f"{name}(x)), which is not on the {d.name} list of read-only functions; select "
            "a column of that name without the table qualifier"
        )
    return ""


def _check_call(stmt: Sequence[Token], i: int, d: Dialect, allowed: frozenset[str]) -> str:
    token = stmt[i]
    if token.kind not in (Kind.WORD, Kind.QUOTED):
        return f"{token.text}( is not a function call this check can judge"
    qualifiers: list[str] = []
    j = i
    while j >= 2 and stmt[j - 1].is_punct(".") and stmt[j - 2].kind in (Kind.WORD, Kind.QUOTED):
        qualifiers.insert(0, _schema_name(stmt[j - 2], d))
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
    return (
        f"the function {full}() is not on the {d.name} list of read-only functions (a user "
        "function can write; an administrator can allow a vetted one with the alias's "
        "options.allowed_functions)"
    )


def _schema_name(token: Token, d: Dialect) -> str:
    """A call's qualifier as the allowlist compares it: as written where the server tells a
    schema's case apart (``d.schema_case``), else as the engine folds it."""
    if d.schema_case:
        return token.text if token.kind is Kind.QUOTED else token.raw or token.text
    return catalog_name(token, d)


def _check_operator(stmt: Sequence[Token], open_at: int, d: Dialect) -> str:
    """PostgreSQL ``OPERATOR(schema.op)``: only built-in operators (pg_catalog)."""
    close = matching_paren(stmt, open_at)
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
