"""SQL clients in the destructive-command check (``shell.destructive_code``): psql,
mysql/mariadb and sqlite3, and the other clients of ``_OTHER_CLIENTS`` (duckdb,
clickhouse-client, cqlsh, sqlcmd, snowsql, usql, trino, spark-sql, hive, beeline,
impala-shell, vsql), whose SQL is judged as PostgreSQL reads it.

SQL given inline (``-c``/``--command``, ``-e``/``--execute``, glued ``-cSQL``, sqlite3's
``-cmd`` and the operands after its database file) or in a here-document asks unless the SQL
check (``rho_domain.sql.classify``) finds one read-only statement; SQL from a file (``-f``,
``--file``, sqlite3's ``-init``) or a pipe asks, as do sqlite3's dot-commands but a few that
only show things. A glob or generated word asks: fail closed.

Contract: ``SQL_CLIENTS`` names the clients; ``sql_reason(name, args, stdin) -> str`` is the
reason to ask again or "".
"""

from __future__ import annotations

from collections.abc import Sequence

from rho_domain.shell.destructive_words import Arg
from rho_domain.sql import classify

# The other clients' SQL is judged as PostgreSQL reads it: one read-only statement there, or
# the client's own words (CQL, a dialect's writes) asks, never the other way round
_OTHER_CLIENTS = {
    "duckdb": (("-c", "-cmd"), ("-init", "-f")),
    "clickhouse-client": (("-q", "--query"), ("--queries-file",)),
    "cqlsh": (("-e", "--execute"), ("-f", "--file")),
    "sqlcmd": (("-Q", "-q", "--query"), ("-i", "--input-file")),
    "snowsql": (("-q", "--query"), ("-f", "--filename")),
    "usql": (("-c", "--command"), ("-f", "--file")),
    "trino": (("-e", "--execute"), ("-f", "--file")),
    "spark-sql": (("-e",), ("-f",)),
    "hive": (("-e",), ("-f", "-i")),
    "beeline": (("-e",), ("-f", "-i")),
    "impala-shell": (("-q", "--query"), ("-f", "--query_file")),
    "vsql": (("-c", "--command"), ("-f", "--file")),
}
_SQL_DIALECT = {
    "psql": "postgres",
    "mysql": "mysql",
    "mariadb": "mysql",
    "sqlite3": "sqlite",
    **dict.fromkeys(_OTHER_CLIENTS, "postgres"),
}
SQL_CLIENTS = frozenset(_SQL_DIALECT)
_SQL_INLINE = {
    "psql": ("-c", "--command"),
    "mysql": ("-e", "--execute"),
    "mariadb": ("-e", "--execute"),
    **{name: inline for name, (inline, _) in _OTHER_CLIENTS.items()},
}
_SQL_FILE = {
    "psql": ("-f", "--file"),
    "sqlite3": ("-init",),
    **{name: files for name, (_, files) in _OTHER_CLIENTS.items()},
}
_DATABASE_FILE_FIRST = frozenset(["sqlite3", "duckdb"])  # SQL may follow the database file
_SQLITE_VALUED = frozenset(["-separator", "-nullvalue", "-newline", "-cmd", "-init"])
_SQLITE_SHOWS = frozenset(
    [".tables", ".schema", ".indexes", ".headers", ".mode", ".databases", ".dump", ".help"]
)


def sql_reason(name: str, args: Sequence[Arg], stdin: str) -> str:
    """Why SQL client ``name`` run with ``args`` asks again after "always", or "". ``stdin``
    is "" (nothing), "pipe", "file", or a here-document's text."""
    found = _sql_statements(name, args)
    if isinstance(found, str):
        return found
    if not found and stdin in ("pipe", "file"):
        return f"{name} runs SQL from a {stdin} the approval check cannot read"
    for sql in found or ([stdin] if stdin else []):
        verdict = classify(sql, _SQL_DIALECT[name])
        if not verdict.read_only:
            return f"{name} runs SQL that is not one read-only statement ({verdict.reason})"
    return ""


def _sql_statements(name: str, args: Sequence[Arg]) -> list[str] | str:
    """The SQL given on the command line, or the reason to ask."""
    inline, files = _SQL_INLINE.get(name, ()), _SQL_FILE.get(name, ())
    statements: list[str] = []
    operands: list[str] = []
    words = list(args)
    while words:
        arg = words.pop(0)
        if arg is None:
            return f"{name} with a glob or generated word"
        option, eq, value = arg.partition("=")
        if option in files:
            return f"{name} {option}: runs SQL from a file the approval check cannot read"
        if option in inline or (name in _DATABASE_FILE_FIRST and option == "-cmd"):
            statements.append(value if eq else str(words.pop(0) if words else ""))
        elif inline and arg[:2] == inline[0] and len(arg) > 2:
            statements.append(arg[2:])  # -cSQL, -eSQL
        elif name == "sqlite3" and arg in _SQLITE_VALUED:
            words = words[1:]
        elif not arg.startswith("-"):
            operands.append(arg)
    if name in _DATABASE_FILE_FIRST:  # after the database file: SQL or dot-commands
        for operand in operands[1:]:
            command = operand.split()[0] if operand.split() else ""
            if command.startswith(".") and command not in _SQLITE_SHOWS:
                return f"{name} {command}: a dot-command that may run or write"
            if not command.startswith("."):
                statements.append(operand)
    return statements
