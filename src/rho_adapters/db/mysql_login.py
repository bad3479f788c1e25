"""What a MariaDB/MySQL server ran at the agent's login: its ``init_connect``.

The server runs ``init_connect``'s statements at each login of an account without ``SUPER``
or ``CONNECTION ADMIN`` (MySQL: ``CONNECTION_ADMIN``), before the adapter's first statement
and outside any read-only transaction, and no client setting comes before it: one writing an
audit row (``INSERT INTO rho.ic_log VALUES (CURRENT_USER())``) wrote at the readonly agent's
connection (MariaDB 10.11), and one calling a procedure runs its definer's code, ``SET
GLOBAL`` too. So the adapter reads it once logged in: one that only sets this session's
variables (``SET NAMES utf8mb4``, ``SET sql_mode = '...'``) is let be; any other fails the
connection, and the adapter logs in no more (each login runs it again). It reads it again
before each statement (``mysql_catalog``), so one changed while a connection is
open stops the next login. One changed after that read and before the next login runs once,
unjudged, as at the alias's first login: the server runs it as it completes the handshake,
before the client's first command, and nothing the client sends there (capabilities,
connection attributes, the database) changes what it runs or makes it read-only.
"""

from __future__ import annotations

import re

# ``init_connect`` as the server gives it, and whether this login is one it skips (a direct
# grant of either privilege; one held through a role is not seen, on the refusing side).
INIT_CONNECT = (
    "SELECT @@GLOBAL.init_connect, EXISTS (SELECT 1 FROM information_schema.USER_PRIVILEGES "
    "WHERE PRIVILEGE_TYPE IN ('SUPER', 'CONNECTION ADMIN', 'CONNECTION_ADMIN') "
    "AND GRANTEE = CONCAT('''', SUBSTRING_INDEX(CURRENT_USER(), '@', 1), '''@''', "
    "SUBSTRING_INDEX(CURRENT_USER(), '@', -1), ''''))"
)
# A SET of this session's variables to plain values: names, numbers, quoted strings, = and ,
# (no call, no comment, no backslash), and none of the words that reach further: the server's
# settings (GLOBAL, PERSIST), an account (PASSWORD, ROLE, DEFAULT ROLE), another statement
# (SET STATEMENT ... FOR), the transaction. Judged as the server's lexer reads the whole text
# (a ``;`` or ``.`` inside a string is the string's), with every quoted token emptied.
_CHARACTERS = re.compile(r"[\w\s@.'\"`=,:+;-]*")
_SESSION_SET = re.compile(r"\s*SET\s+[\w\s@'\"`=,:+-]+", re.IGNORECASE)
_FURTHER = re.compile(
    r"\b(?:GLOBAL|PERSIST|PERSIST_ONLY|PASSWORD|ROLE|DEFAULT|STATEMENT|FOR|TRANSACTION)\b",
    re.IGNORECASE,
)
# The server's quoted tokens, the same in every sql_mode (ANSI_QUOTES makes "x" a name).
_QUOTED = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|`(?:[^`]|``)*`")
# The dots a plain value holds: @@SESSION.name, and a number's (0.5, 1.5e3; not r1.2s).
_PLAIN_DOTS = re.compile(r"@@(?:SESSION|LOCAL)\.|(?<![\w.])\d+\.\d*(?:e[+-]?\d+)?(?![\w.])", re.I)
_SHOWN = 200


def init_connect_refusal(alias: str, init_connect: str, *, skipped: bool, ran: bool = True) -> str:
    """Why the alias's login may not be used ("": it may): the server ran ``init_connect``
    at it (``ran``; else: the next login would run it, as it is now; ``skipped``: this
    login is one it skips), and it does more than set this session's variables
    (``_session_settings``)."""
    if skipped or _session_settings(init_connect):
        return ""
    shown = init_connect if len(init_connect) <= _SHOWN else init_connect[:_SHOWN] + "..."
    what = (
        f"the server ran its init_connect ({shown!r}) when the agent logged in"
        if ran
        else f"the server's init_connect is now {shown!r}, which the agent's next login runs"
    )
    return (
        f"{alias}: {what}, "
        "outside any read-only transaction (it may write, or call a procedure that does), so "
        "the adapter connects no more: ask the database's administrator to keep init_connect "
        "to SET NAMES or session variables, or to make it skip this login (init_connect "
        f"skips an account granted CONNECTION ADMIN), or point databases.{alias} at a server "
        "without it"
    )


def _session_settings(init_connect: str) -> bool:
    """Whether ``init_connect`` only sets this session's variables to plain values. A dot
    outside a quoted token is refused but in ``@@SESSION.name`` and a number: under
    ``sql_mode = ORACLE`` (a session variable) ``SET @a = rho.s.nextval`` advances a
    sequence (MariaDB 10.11). ``--`` is refused wherever it stands: a comment the server
    skips may hold a quote that would make the check read a value as a string."""
    if not _CHARACTERS.fullmatch(init_connect) or "--" in init_connect:
        return False
    if _FURTHER.search(init_connect):
        return False
    emptied = _PLAIN_DOTS.sub(_plain, _QUOTED.sub("''", init_connect))
    if re.search(r"['\"`]", emptied.replace("''", "")) or "." in emptied:  # (unterminated)
        return False
    return all(_SESSION_SET.fullmatch(part) for part in emptied.split(";") if part.strip())


def _plain(dot: re.Match[str]) -> str:
    return "@@" if dot[0].startswith("@") else "0"
