"""Which file a SQLite alias opens, and how: judged by the secrets policy, WAL read in place.

The configured path is resolved through its links and judged by the secrets policy
(``rho_domain.secrets``: its rules by name and location, without the executor's homes and
session directories, which the adapter is not given) before SQLite opens the resolved file:
browsers and cloud tools keep credentials in SQLite files (gcloud's ``credentials.db``,
Firefox's ``cookies.sqlite``, Chromium's ``Login Data``), and a repository's ``app.db`` may
be a link to one. What was judged is what is opened, in every mode.

A file in WAL mode that nobody has open (no ``-wal`` or ``-shm`` beside it: its whole
content is in the file) is read ``immutable=1`` in read-only mode: SQLite's shared reading
would create both files, and a read-only connection cannot remove them (the agent left them
in the user's directory; a login that cannot write there could not read the file at all,
"attempt to write a readonly database"). The connection carries what it was opened on
(``read_as``: the file's resolved path and its inode, size and mtime); before each statement
a ``-wal`` that appeared (a writer opened the file) or a file changed (a writer that turned
WAL off and wrote in place) replaces it with a shared one. A writer that starts within one
statement may still give that statement rows of two versions or a "malformed" error; the
next statement reads shared.
"""

from __future__ import annotations

import os
import sqlite3

from rho_domain.errors import SensitivePath
from rho_domain.secrets import DEFAULT_POLICY

_WAL_MODE = 2  # the header's write and read versions (bytes 18 and 19) in WAL mode


class Connection(sqlite3.Connection):
    """A connection that knows what its immutable read holds only while it stays
    (``read_as``: the file, whose ``-wal`` must not appear, and its stamp, which must not
    change; None: a shared read, nothing to watch)."""

    read_as: tuple[str, tuple[int, int, int]] | None = None


def judged_file(alias: str, path: str) -> str:
    """``path`` resolved through its links (``:memory:`` as it is), or ``SensitivePath``
    naming the file and the rule when the secrets policy names it."""
    if path == ":memory:":
        return path
    real = os.path.realpath(path)
    refusal = DEFAULT_POLICY.refusal(real)
    if refusal is not None:
        raise SensitivePath(
            f"database {alias!r}: {path} is {refusal}, which the agent never reads; point "
            "the alias's `path` at a file that holds no credentials (a copy of the tables "
            "it needs)"
        )
    return real


def unopened_wal_file(path: str) -> tuple[str, tuple[int, int, int]] | None:
    """For a SQLite file in WAL mode with no ``-wal`` or ``-shm`` beside it (no connection
    has it open, so its whole content is in the file), what an immutable read of it holds
    only while it stays (``Connection.read_as``); else None."""
    try:
        with open(path, "rb") as file:
            head = file.read(20)
            stamp = _stamp(os.fstat(file.fileno()))
    except OSError:  # :memory:, a file that is not there: SQLite says what is wrong
        return None
    in_wal = len(head) == 20 and head[18] == head[19] == _WAL_MODE
    if not in_wal or any(os.path.lexists(path + end) for end in ("-wal", "-shm")):
        return None
    return path, stamp


def written_since(conn: object) -> bool:
    """Whether ``conn`` reads its file as immutable and a writer has opened it (its ``-wal``
    appeared) or written it in place (its stamp changed) since."""
    read_as = getattr(conn, "read_as", None)
    if read_as is None:
        return False
    path, stamp = read_as
    try:
        now = _stamp(os.stat(path))
    except OSError:  # gone or replaced: a new connection says what is there now
        return True
    return os.path.lexists(path + "-wal") or now != stamp


def _stamp(stat: os.stat_result) -> tuple[int, int, int]:
    return stat.st_ino, stat.st_size, stat.st_mtime_ns
