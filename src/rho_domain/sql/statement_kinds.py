"""The rules of the read statement kinds that wrap or name something else.

``check_kind(kind, rest, dialect)`` judges what follows a statement's first keyword once
``classify`` has found that keyword among the dialect's read kinds, and returns the reason
to refuse it, or "":

* ``EXPLAIN`` explains only a read query (``ROW_KINDS``), after its options; in MySQL
  ``EXPLAIN tbl`` is ``DESCRIBE tbl``;
* ``PRAGMA`` names one of the dialect's introspection pragmas (``schema.`` before it allowed),
  with at most one table or index name (``PRAGMA table_info(t)``);
* ``DESCRIBE``/``DESC`` take a table name, then at most one column name or wildcard;
* MySQL's ``SHOW`` refuses what prints secrets or other sessions' statements
  (``SHOW GRANTS``, ``SHOW CREATE USER``, ``SHOW ENGINE``, ``SHOW EXPLAIN``, ``SHOW ANALYZE``,
  ``SHOW CREATE SERVER``, ``SHOW BINLOG/RELAYLOG EVENTS``); Vertica's ``SHOW`` of configuration
  parameters refuses ``ALL`` and those holding a key or a credential.

Pure: tokens in, a reason out; it never raises for bad SQL.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rho_domain.sql.dialect_values import Dialect
from rho_domain.sql.tokens import Kind, Token

ROW_KINDS = frozenset({"SELECT", "WITH", "VALUES", "TABLE"})
"""The plain queries: what ``EXPLAIN`` may explain, and what a server-side cursor streams."""


def check_kind(kind: str, rest: Sequence[Token], d: Dialect) -> str:
    """Rules for statement kinds that wrap or name something else."""
    if kind == "EXPLAIN":
        return _check_explain(rest, d)
    if kind == "PRAGMA":
        return _check_pragma(rest, d)
    if kind in ("DESCRIBE", "DESC"):
        return "" if _is_name(rest) else f"{kind} takes a table name"
    words = [t.text for t in rest[:2] if t.kind is Kind.WORD]
    shown = "GRANTS" if words[:1] == ["GRANTS"] else " ".join(words)
    if d.name == "mysql" and kind == "SHOW" and shown in ("GRANTS", "CREATE USER"):
        # both print an account's IDENTIFIED BY PASSWORD '<hash>'
        return (
            f"SHOW {shown} shows password hashes; read information_schema.USER_PRIVILEGES, "
            "SCHEMA_PRIVILEGES or TABLE_PRIVILEGES"
        )
    if d.name == "mysql" and kind == "SHOW" and words[:1] in (["ENGINE"], ["EXPLAIN"], ["ANALYZE"]):
        # the InnoDB monitor prints each open transaction's running statement; SHOW EXPLAIN
        # and SHOW ANALYZE FOR a thread its plan, the statement's literals in its conditions
        return f"SHOW {words[0]} shows other sessions' statements"
    if d.name == "mysql" and kind == "SHOW" and shown == "CREATE SERVER":
        # MariaDB 11.7+: the CREATE SERVER statement, its OPTIONS (PASSWORD '...') included
        return "SHOW CREATE SERVER shows the server's login and password, as mysql.servers does"
    if d.name == "vertica" and kind == "SHOW":
        return _vertica_show(rest)
    log = words[:1] == ["BINLOG"] or words[:1] == ["RELAYLOG"]
    if d.name == "mysql" and kind == "SHOW" and log and any(t.is_word("EVENTS") for t in rest):
        # MariaDB names a replica's connection between the words: SHOW RELAYLOG '' EVENTS
        return f"SHOW {words[0]} EVENTS shows the logged statements, ALTER USER ... among them"
    return ""


# A Vertica configuration parameter whose value is a key, a password or a credential
# (DataSSLParams, SSLPrivateKey, AWSAuth, GCSAuth, AzureStorageCredentials,
# LDAPLinkBindPswd, a session's kafka_SSL_PrivateKey_secret), by a part of its name.
_VERTICA_SECRET_PARAMETER = re.compile(
    r"sslparams|privatekey|auth|credential|pswd|passw|secret|token|key", re.IGNORECASE
)


def _vertica_show(rest: Sequence[Token]) -> str:
    """Why a Vertica ``SHOW`` (``CURRENT``, ``DATABASE``, ``NODE``, ``USER``, ``SESSION``:
    configuration parameters' values) is refused: ``ALL`` of them, or one holding a secret
    (``SHOW CURRENT DataSSLParams`` printed the server's TLS private key)."""
    for token in rest:
        if token.kind not in (Kind.WORD, Kind.QUOTED):
            continue
        if token.is_word("ALL"):
            return (
                "SHOW ... ALL shows every configuration parameter's value, the TLS private "
                "key (DataSSLParams, SSLPrivateKey) and stored credentials (AWSAuth, "
                "LDAPLinkBindPswd) among them: name the parameters to show"
            )
        if _VERTICA_SECRET_PARAMETER.search(token.text):
            return (
                f"SHOW {token.text} shows a parameter holding a key or a credential: the "
                "agent does not read it"
            )
    return ""


def _check_explain(rest: Sequence[Token], d: Dialect) -> str:
    i = 0
    while i < len(rest) and (
        (rest[i].kind is Kind.WORD and rest[i].text in d.explain_options)
        or (rest[i].kind is Kind.PUNCT and rest[i].text in "(),=")
        or rest[i].kind is Kind.NUMBER
        or (rest[i].kind is Kind.STRING and _formats(rest[:i]))
    ):
        i += 1
    inner = rest[i:]
    if inner and inner[0].kind is Kind.STRING:
        return (
            "an EXPLAIN option's value is a word (SERIALIZE TEXT), not a string: the server "
            "reads 'binary' as BINARY, which runs each column type's send function, an "
            "administrator's PL/pgSQL one too; only FORMAT's value may be a string"
        )
    if inner and inner[0].kind is Kind.WORD and inner[0].text in ROW_KINDS & d.read_kinds:
        return ""
    if d.name == "mysql" and _is_name(inner):  # EXPLAIN tbl is DESCRIBE tbl in MySQL
        return ""
    what = inner[0].text if inner else "nothing"
    return f"EXPLAIN is only allowed for a read query, not for {what}"


def _formats(before: Sequence[Token]) -> bool:
    """Whether the option a string follows (``FORMAT 'json'``, ``FORMAT='json'``) is
    ``FORMAT``, whose values only print the plan another way."""
    words = [t for t in before if not t.is_punct("=")]
    return bool(words) and words[-1].is_word("FORMAT")


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
