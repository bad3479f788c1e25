"""The one place where database driver exceptions become rho-agent errors.

Every adapter runs its driver calls inside ``map_driver_errors``. A write the engine refused
(read-only transaction, missing privilege, SQLite authorizer) becomes ``StatementRefused``;
a statement timeout and every other driver or socket failure become ``DatabaseError``. The
message keeps the server's own words (first lines), so the model can correct its query,
less the connection's secrets (``hide_secrets``): libpq quotes a connection string it cannot
parse, password and all, and the message is a tool result the model and the trace read.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import unquote, urlsplit

from rho_domain.errors import DatabaseError, RhoError, StatementRefused
from rho_domain.url_logins import hide_url_logins

# SQLSTATE / error numbers / message fragments per engine.
_PG_REFUSED = {"25006", "42501"}  # read_only_sql_transaction, insufficient_privilege
_PG_TIMEOUT = {"57014"}  # query_canceled (statement_timeout)
_MYSQL_REFUSED = {1792, 1142, 1044, 1045, 1227, 1370, 1290}  # read-only txn, access denied
_MYSQL_TIMEOUT = {1969, 3024, 1317}  # max_statement_time, max_execution_time, killed
_REFUSED_TEXT = (
    "not authorized",  # SQLite authorizer
    "authorization denied",  # SQLite authorizer (VACUUM INTO)
    "readonly database",  # SQLite mode=ro
    "read-only transaction",
    "read only transaction",
    "ora-01456",  # insert/delete/update in a READ ONLY transaction
    "ora-01031",  # insufficient privileges
    "permission denied",
)
_TIMEOUT_TEXT = (
    "interrupted",
    "statement timeout",
    "max_statement_time",
    "run time cap",
    "dpy-4024",  # oracledb call timeout
    "ora-03156",
)


# Temporary space over the statement's limit: PostgreSQL's temp_file_limit
# (configuration_limit_exceeded), MariaDB's tmp_disk_table_size ("The table ... is full").
_PG_TEMP_FULL = "53400"
_MYSQL_TABLE_FULL = 1114


class StatementTimeout(DatabaseError):
    """The engine cancelled a statement that ran past its timeout."""


def hide_secrets(text: str, secrets: Iterable[str]) -> str:
    """``text`` with each of ``secrets`` and any URL's password replaced by ``***``."""
    for secret in sorted({s for s in secrets if s}, key=len, reverse=True):
        text = text.replace(secret, "***")
    return hide_url_logins(text)


# A keyword/value dsn's password (libpq's password=..., ODBC's PWD=...), quoted or bare.
_KEYWORD_PASSWORD = re.compile(r"(?i)\b(?:password|pwd)\s*=\s*(?:'((?:[^'\\]|\\.)*)'|([^\s;]+))")


def dsn_passwords(dsn: str) -> list[str]:
    """The passwords ``dsn`` holds: a URL's (as written and decoded) and keyword ones."""
    found = [m.group(1) or m.group(2) or "" for m in _KEYWORD_PASSWORD.finditer(dsn)]
    try:
        password = urlsplit(dsn).password if "://" in dsn else None
    except ValueError:  # a URL urlsplit refuses (a bracket unclosed): the pattern's turn
        password = None
    if password:
        found += [password, unquote(password)]
    return found


@contextmanager
def map_driver_errors(
    alias: str,
    driver_errors: tuple[type[Exception], ...],
    secrets: Callable[[], Iterable[str]] = tuple,
) -> Iterator[None]:
    """Translate driver exceptions (and ``OSError``) raised inside the block; the text of
    ``secrets()`` (the connection's password, ...) is hidden from the message."""
    caught: tuple[type[Exception], ...] = (*driver_errors, OSError)
    try:
        yield
    except RhoError:
        raise
    except caught as exc:
        raise translate(alias, exc, secrets()) from exc


def translate(alias: str, exc: BaseException, secrets: Iterable[str] = ()) -> RhoError:
    """The rho-agent error for one driver exception, without ``secrets``."""
    message = _first_lines(exc, secrets)
    lowered = message.lower()
    code = _code(exc)
    if code in _PG_TIMEOUT or code in _MYSQL_TIMEOUT or any(t in lowered for t in _TIMEOUT_TEXT):
        return StatementTimeout(f"{alias}: the statement timed out and was cancelled ({message})")
    args = getattr(exc, "args", ())
    errno = args[0] if args and isinstance(args[0], int) else None  # PyMySQL sets sqlstate too
    if (code == _PG_TEMP_FULL and "temp_file_limit" in lowered) or errno == _MYSQL_TABLE_FULL:
        return DatabaseError(
            f"{alias}: the statement needed more temporary disk space than one statement may "
            f"use, and was stopped ({message}); sort, group or join fewer rows, or set "
            "options.temp_file_limit_mb"
        )
    if code in _PG_REFUSED or code in _MYSQL_REFUSED or any(t in lowered for t in _REFUSED_TEXT):
        return StatementRefused(
            f"{alias}: the database refused it in read-only mode: {message}", by="engine"
        )
    return DatabaseError(f"{alias}: {type(exc).__name__}: {message}")


def _code(exc: BaseException) -> object:
    sqlstate = getattr(exc, "sqlstate", None)  # psycopg
    if sqlstate:
        return sqlstate
    args = getattr(exc, "args", ())
    if args and isinstance(args[0], int):  # pymysql (errno, message)
        return args[0]
    return None


def _first_lines(exc: BaseException, secrets: Iterable[str]) -> str:
    args: tuple[Any, ...] = tuple(getattr(exc, "args", ()))
    if len(args) >= 2 and isinstance(args[0], int):
        text = str(args[1])
    else:
        text = str(exc) or type(exc).__name__
    text = hide_secrets(text, secrets)  # before the cut, which could leave part of one
    lines = [line for line in text.strip().splitlines() if line.strip()][:3]
    joined = " ".join(line.strip() for line in lines)
    return joined if len(joined) <= 500 else joined[:500] + "..."


# What a failed connect says, and the alias's keys that fix it (lower-cased fragments of
# libpq's, PyMySQL's, python-oracledb's and vertica-python's messages).
_CONNECT_KEYS = (
    (
        (
            "password authentication failed",
            "access denied for user",
            'role "',
            "ora-01017",
            "invalid username or password",
            "no password supplied",
        ),
        "user, password_env",
    ),
    (('database "', "unknown database", "ora-12514"), "database"),
    (
        (
            "failed to resolve host",
            "name or service not known",
            "nodename nor servname",
            "connection refused",
            "no route to host",
            "can't connect to",
            "greeting within",
        ),
        "host, port",
    ),
)


def connect_failure(
    alias: str, exc: BaseException, secrets: Iterable[str], password_env: str | None
) -> RhoError:
    """The error of a connection that could not be opened: ``translate``'s, then the alias's
    keys that fix it (``databases.ALIAS: host, port``), naming the variable the password is
    read from, since a typo'd host, database or password is the usual cause."""
    error = translate(alias, exc, secrets)
    lowered = str(error).lower()
    if "read-only transaction" in lowered:
        return DatabaseError(
            f"{error}; the server ran a write while the agent logged in (a PostgreSQL login "
            "event trigger), which its read-only session refuses: ask the database's "
            "administrator to let the trigger skip read-only sessions "
            "(current_setting('transaction_read_only') = 'on'), or point databases."
            f"{alias} at a database without it"
        )
    for fragments, keys in _CONNECT_KEYS:
        if any(fragment in lowered for fragment in fragments):
            if keys.endswith("password_env"):
                keys += (
                    f" (the password is ${password_env}'s value)"
                    if password_env
                    else (" (none is set: the login sends no password)")
                )
            return DatabaseError(f"{error}; check databases.{alias}: {keys}")
    return error
