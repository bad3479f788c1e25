"""Which file a SQLite alias opens, and how: judged by the secrets policy, WAL read in place.

The configured path is resolved through its links and judged by the secrets policy
(``rho_domain.secrets``: the local executor's, with its homes, whose hidden entries are
secret, and the agent's own directories; the wiring gives it, ``open_databases`` makes one
with this machine's homes otherwise) before SQLite opens the resolved file:
browsers and cloud tools keep credentials in SQLite files (gcloud's ``credentials.db``,
Firefox's ``cookies.sqlite``, Chromium's ``Login Data``), and a repository's ``app.db`` may
be a link to one. What was judged is what is opened, in every mode. The file opened is judged
again by its tables (``rho_domain.sql.credential_tables``): the same content under a name
the policy does not know (a hard link, a copy, an Electron application's ``Cookies``) is
refused too.

A file in WAL mode that nobody has open (no ``-wal`` or ``-shm`` beside it: its whole
content is in the file) is read ``immutable=1`` in read-only mode: SQLite's shared reading
would create both files, and a read-only connection cannot remove them (the agent left them
in the user's directory; a login that cannot write there could not read the file at all,
"attempt to write a readonly database"). An immutable connection keeps the pages it read
and never looks at the file again, so it serves one statement (``Connection.immutable``):
the next one opens the file anew, immutable again while no ``-wal`` is beside it, else
shared. A stamp of the file (inode, size, mtime) kept a connection across statements, and
missed a writer that turned WAL off and wrote in place within the mtime's clock tick, or
put the mtime back: the agent read the old rows. A writer that starts within one
statement may still give that statement rows of two versions or a "malformed" error.
"""

from __future__ import annotations

import os
import sqlite3

from rho_domain.errors import SensitivePath
from rho_domain.secrets import SecretPolicy
from rho_domain.sql.credential_tables import CANDIDATE_NAMES, credential_store

_WAL_MODE = 2  # the header's write and read versions (bytes 18 and 19) in WAL mode


class Connection(sqlite3.Connection):
    """A connection that knows whether it reads its file as immutable (``immutable``): such
    a one sees no later write, and serves one statement only."""

    immutable = False


def judged_file(alias: str, path: str, policy: SecretPolicy) -> str:
    """``path`` resolved through its links (``:memory:`` as it is), or ``SensitivePath``
    naming the file and the rule when ``policy`` names it."""
    if path == ":memory:":
        return path
    real = os.path.realpath(path)
    refusal = policy.refusal(real)
    if refusal is not None:  # a sentence naming ``real``: "'/x/cookies.sqlite' is a ..."
        # before, "{path} is {refusal}" read "./cookies.sqlite is '/x/cookies.sqlite' is a ..."
        said = refusal if "never reads" in refusal else f"{refusal}, which the agent never reads"
        raise _refused(alias, f"`path` {path!r}: {said}")
    return real


def judge_tables(alias: str, path: str, conn: sqlite3.Connection) -> None:
    """``SensitivePath`` naming ``path`` and what it is when the file ``conn`` opened holds a
    credential store's table (``credential_store``), whatever its name. Two reads that run
    nothing of the file's (its schema, and the columns of the few tables named as a store's
    are), before the connection is given any statement."""
    names = [
        str(row[0])
        for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        if str(row[0]).lower() in CANDIDATE_NAMES
    ]
    tables = {
        name.lower(): frozenset(
            str(row[0]).lower()
            for row in conn.execute("SELECT name FROM pragma_table_info(?)", (name,))
        )
        for name in names
    }
    what = credential_store(tables)
    if what is not None:
        raise _refused(alias, f"{path} is {what}, which the agent never reads")


def _refused(alias: str, why: str) -> SensitivePath:
    return SensitivePath(
        f"database {alias!r}: {why}; point the alias's `path` at a file that holds no "
        "credentials (a copy of the tables it needs)"
    )


def unopened_wal_file(path: str) -> bool:
    """Whether ``path`` is a SQLite file in WAL mode with no ``-wal`` or ``-shm`` beside it
    (no connection has it open, so its whole content is in the file)."""
    try:
        with open(path, "rb") as file:
            head = file.read(20)
    except OSError:  # :memory:, a file that is not there: SQLite says what is wrong
        return False
    in_wal = len(head) == 20 and head[18] == head[19] == _WAL_MODE
    return in_wal and not any(os.path.lexists(path + end) for end in ("-wal", "-shm"))
