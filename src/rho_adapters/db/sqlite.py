"""SQLite through the standard library's ``sqlite3``.

Read-only mode: the file is opened ``mode=ro`` *and* an authorizer
allows only SELECT, READ, RECURSIVE, functions outside the denylist and the introspection
pragmas. ``mode=ro`` alone still runs ``VACUUM INTO`` and ``ATTACH`` (which write files) and
TEMP tables; the authorizer stops them. Which file is opened, and a WAL file nobody has open
read as immutable: ``sqlite_file`` (a secret file, or a link to one, is never opened).

Mutations mode (the eval profile: writes, nothing asked) writes the configured file and no
other: ``mutations_authorizer`` refuses ATTACH, which opens (and creates) any path on the
machine, and so VACUUM INTO, which attaches its target; a plain VACUUM's own attach (of the
name '') still runs.

Time and memory: a progress handler checks the deadline every ``_PROGRESS_STEPS`` VM steps,
and strings and blobs are capped at ``_MAX_LENGTH`` bytes, so no single step (``x || x`` on a
huge string) runs long between checks; the base adapter's watchdog interrupts the
connection (``sqlite3_interrupt``) if the deadline still passes. SQLite's heap in this
process is capped (``_HEAP_LIMIT``): a row is built whole, every column of it, before a cell
is cut. Temporary disk: the same
handler stops a statement whose temporary files (a sort that spills) pass
``options.temp_file_limit_mb`` (``sqlite_temp.py``; SQLite has no setting for it).
"""

from __future__ import annotations

import os
import sqlite3
import time
import urllib.parse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rho_adapters.db.base import ThreadedDatabase
from rho_adapters.db.results import fetch, format_description
from rho_adapters.db.sqlite_file import (
    Connection,
    judge_tables,
    judged_file,
    unopened_wal_file,
)
from rho_adapters.db.sqlite_temp import TempDisk
from rho_domain.errors import ConfigError, DatabaseError, StatementRefused
from rho_domain.ports.database import QueryResult
from rho_domain.sql import Verdict
from rho_domain.sql.dialects import SQLITE_PRAGMAS
from rho_domain.sql.functions import SQLITE_FUNCTIONS

# Authorizer action codes, compared by value: in Python 3.11 some of the names collide with
# result-code constants of the sqlite3 module.
_DELETE, _INSERT, _PRAGMA, _READ, _SELECT, _UPDATE, _ATTACH = 9, 18, 19, 20, 21, 23, 24
_FUNCTION, _RECURSIVE = 31, 33
# What a full-text (FTS3/4/5) or R-Tree table asks when a query opens it: FTS reads two
# pragmas, an R-Tree prepares (never runs, in a SELECT) its writes to its shadow tables.
# Without them every such table in the file failed to open ("vtable constructor failed").
# Granted in main only, which mode=ro opened read-only: a write there still fails.
_TABLE_PRAGMAS = frozenset({"data_version", "page_size"})
_RTREE_SHADOWS = ("_node", "_parent", "_rowid")
_OK, _DENY = 0, 1
_DENIED = ("not authorized", "authorization denied")  # an authorizer denial, in SQLite's words
_PROGRESS_STEPS = 100  # VM instructions between deadline checks
_MAX_LENGTH = 10_000_000  # largest string or blob a statement may build or read (bytes)
# What SQLite may hold in this process, all connections together (sqlite3_hard_heap_limit64,
# process-wide; it can only be lowered). A row is built whole before any cell is cut, each
# column up to _MAX_LENGTH: "SELECT x, x, ... FROM (SELECT zeroblob(10000000) AS x)" took
# 1.2 GB with 60 columns in 223 characters, and a statement may have 2,000.
_HEAP_LIMIT = 256 << 20


def read_only_authorizer(
    action: int, arg1: str | None, arg2: str | None, _db: str | None, _trigger: str | None
) -> int:
    """Allow reads and allowlisted functions only; everything else (ATTACH, VACUUM INTO,
    TEMP DDL, writes, load_extension, fts3_tokenizer) is denied."""
    if action in (_SELECT, _READ, _RECURSIVE):
        return _OK
    if action == _FUNCTION:
        # The same allowlist as the statement check: a function outside it never runs.
        return _OK if (arg2 or "").lower() in SQLITE_FUNCTIONS else _DENY
    if action == _PRAGMA and (arg1 or "").lower() in SQLITE_PRAGMAS:
        return _OK
    if _db == "main" and _opened_table_asks(action, arg1 or "", arg2):
        return _OK
    if action == _UPDATE and arg1 == "sqlite_master" and _db == "main":
        # Building an eponymous table-valued pragma (pragma_table_info) re-reads the schema,
        # which SQLite authorizes as an UPDATE of sqlite_master. A real UPDATE of it needs
        # PRAGMA writable_schema (denied) and a writable file (mode=ro).
        return _OK
    return _DENY


def _opened_table_asks(action: int, arg1: str, arg2: str | None) -> bool:
    """Whether ``action`` on main is what a full-text or R-Tree table asks as it opens: a
    pragma read without a value, an R-Tree shadow table's prepared insert or delete."""
    if action == _PRAGMA:
        return arg2 is None and arg1.lower() in _TABLE_PRAGMAS
    return action in (_INSERT, _DELETE) and arg1.lower().endswith(_RTREE_SHADOWS)


def mutations_authorizer(
    action: int, arg1: str | None, _arg2: str | None, _db: str | None, _trigger: str | None
) -> int:
    """Allow every statement on the database but ATTACH of a file (VACUUM INTO attaches its
    target first); a plain VACUUM attaches '' (a temporary database) and runs."""
    if action == _ATTACH and arg1:
        return _DENY
    return _OK


class SqliteDatabase(ThreadedDatabase):
    """SQLite over the standard library's ``sqlite3``; see ``ThreadedDatabase``."""

    dialect_name = "sqlite"

    def _error_types(self) -> tuple[type[Exception], ...]:
        return (sqlite3.Error,)

    def _load_driver(self) -> Any:
        return sqlite3  # the standard library's: always there

    def problems(self) -> list[str]:
        """See ``ThreadedDatabase.problems``; also a database file that does not exist, or a
        ``file:`` URI given as the path."""
        found = super().problems()
        try:
            path = self._path()
        except ConfigError as exc:
            return [*found, str(exc)]
        if path != ":memory:" and not Path(path).is_file():
            found.append(f"database {self.alias!r}: no SQLite file at {path}")
        return found

    def _path(self) -> str:
        """The configured file, ``~`` expanded as ``problems`` and ``_open`` both read it (the
        open read a ``~`` directory of the working directory, ``problems`` the home)."""
        path = self.config.path or self.config.dsn
        if not path:
            raise ConfigError(f"database {self.alias!r}: sqlite needs `path`")
        if path.startswith("file:"):
            raise ConfigError(
                f"database {self.alias!r}: `path` is {path!r}, a URI; give the file's path "
                "(the adapter opens it with the options its mode needs)"
            )
        return os.path.expanduser(path)

    def _open(self) -> Any:
        access = "ro" if self.read_only else "rw"  # rw never creates a missing file
        path = judged_file(self.alias, self._path(), self.file_policy)
        uri = f"file:{urllib.parse.quote(path)}?mode={access}"
        immutable = self.read_only and unopened_wal_file(path)
        if immutable:
            uri += "&immutable=1"
        try:
            conn = sqlite3.connect(
                uri, uri=True, check_same_thread=False, isolation_level=None, factory=Connection
            )
        except sqlite3.OperationalError as exc:  # "unable to open database file": say which
            raise sqlite3.OperationalError(f"{exc}: {path}") from exc
        conn.immutable = immutable
        try:
            judge_tables(self.alias, path, conn)
        except BaseException:
            conn.close()
            raise
        return conn

    def _prepare(self, conn: Any) -> None:
        if hasattr(conn, "enable_load_extension"):
            conn.enable_load_extension(False)
        if hasattr(conn, "setlimit"):
            conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, _MAX_LENGTH)
        # lowers the limit only (a lower one set elsewhere in the process stays)
        conn.execute(f"PRAGMA hard_heap_limit = {_HEAP_LIMIT}")
        if self.read_only:
            conn.execute("PRAGMA query_only = ON")  # a convenience on top; not the boundary
            conn.set_authorizer(read_only_authorizer)
        else:
            conn.set_authorizer(mutations_authorizer)

    def _usable(self, conn: Any) -> bool:
        if conn.immutable:  # it would not see a write made since: one statement each
            return False
        try:
            conn.execute("SELECT 1").fetchone()
        except sqlite3.Error:
            return False
        return True

    def _interrupt(self, conn: Any) -> None:
        conn.interrupt()

    def _run(
        self,
        conn: Any,
        sql: str,
        params: Sequence[Any] | None,
        verdict: Verdict,
        max_rows: int,
        timeout: float,
    ) -> QueryResult:
        start = time.monotonic()
        deadline = start + timeout
        temp = TempDisk(self.temp_mb() << 20, start)

        def progress() -> int:
            now = time.monotonic()
            return int(now > deadline or (now >= temp.next_look and temp.over(now)))

        conn.set_progress_handler(progress, _PROGRESS_STEPS)
        cursor = conn.cursor()
        try:
            # execute(), never executescript(): sqlite3 refuses a second statement.
            cursor.execute(sql, tuple(params or ()))
            return fetch(cursor, max_rows)
        except MemoryError as exc:  # SQLITE_NOMEM: past _HEAP_LIMIT
            raise DatabaseError(
                f"{self.alias}: the statement needed more memory than SQLite may use here "
                f"({_HEAP_LIMIT >> 20} MB), and was stopped; select fewer or shorter columns "
                "(substr(x, 1, 1000)) or fewer rows at once"
            ) from exc
        except sqlite3.DatabaseError as exc:
            if temp.exceeded:
                raise DatabaseError(
                    f"{self.alias}: the statement needed more temporary disk space than one "
                    f"statement may use ({self.temp_mb()} MB of SQLite temporary files), and "
                    "was stopped; sort, group or join fewer rows, or set "
                    "options.temp_file_limit_mb"
                ) from exc
            if not self.read_only and any(t in str(exc) for t in _DENIED):
                raise StatementRefused(
                    f"{self.alias}: ATTACH and VACUUM INTO open a file outside this database "
                    f"(SQLite says: {exc}); statements here read and write {self.alias} only",
                    by="engine",
                ) from exc
            raise
        finally:
            cursor.close()
            conn.set_progress_handler(None, 0)

    def _list_tables_sql(self, pattern: str, schema: str | None) -> tuple[str, Sequence[Any]]:
        return (
            "SELECT 'main', name, type FROM sqlite_master WHERE type IN ('table', 'view') "
            "AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name LIKE ? ORDER BY name",
            (pattern,),
        )

    async def describe(self, table: str, *, schema: str | None = None) -> str:
        """See ``Database.describe``."""
        cols = await self.internal(
            'SELECT name, type, "notnull" = 0, dflt_value, pk FROM pragma_table_info(?)',
            (table,),
            max_rows=10_000,
        )
        indexes = await self.internal(
            "SELECT il.name, il.\"unique\", (SELECT group_concat(ii.name, ', ') "
            "FROM pragma_index_info(il.name) AS ii) FROM pragma_index_list(?) AS il",
            (table,),
            max_rows=1_000,
        )
        pk = [str(r[0]) for r in sorted((r for r in cols.rows if r[4]), key=lambda r: r[4])]
        return format_description(
            table,
            [r[:4] for r in cols.rows],
            pk,
            [(str(n), bool(u), str(c or "")) for n, u, c in indexes.rows],
        )
