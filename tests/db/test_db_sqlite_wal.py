"""A readonly read of a SQLite file in WAL mode leaves the file's directory as it was.

SQLite's reader of a WAL-mode file creates its ``-wal`` and ``-shm`` files beside it when
nobody has the file open, and a read-only connection cannot remove them when it closes: the
readonly agent left both in the user's directory (and, as a login that cannot write that
directory, could not read the file at all: "attempt to write a readonly database"). Such a
file's whole content is in the file itself, so the adapter reads it as immutable, one
statement per connection: an immutable connection never looks at the file again, and a
stamp of it (inode, size, mtime) missed a write in place that kept size and mtime. The next
statement opens the file anew, shared as soon as a writer's ``-wal`` is beside it.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest
from db_support import Server, adapter

from rho_domain.ports.database import Database


def _in_wal_mode(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.close()  # the last connection: SQLite checkpoints and removes -wal and -shm


async def _count(db: Database) -> object:
    return (await db.query("SELECT count(*) FROM users", max_rows=1, timeout=5)).rows[0][0]


@pytest.mark.asyncio
async def test_reading_a_wal_file_nobody_has_open_creates_no_file_beside_it(
    sqlite_server: Server,
) -> None:
    path = Path(str(sqlite_server.config.path))
    _in_wal_mode(path)
    assert sorted(p.name for p in path.parent.iterdir()) == ["app.db"]
    db = adapter(sqlite_server)
    try:
        assert await _count(db) == 20
        assert sorted(p.name for p in path.parent.iterdir()) == ["app.db"]
        # A writer that turns WAL off and writes in place leaves no -wal behind, only a
        # changed file: the next read sees its row.
        writer = sqlite3.connect(path)
        writer.execute("PRAGMA journal_mode = DELETE")
        writer.execute("INSERT INTO users (id, name) VALUES (21, 'in place')")
        writer.commit()
        writer.close()
        assert await _count(db) == 21
    finally:
        await db.aclose()
    _in_wal_mode(path)
    db = adapter(sqlite_server)
    try:
        assert await _count(db) == 21
        # The same, but the file keeps its size and its mtime (a writer within the same
        # clock tick, or one that puts the mtime back): the next read still sees the change.
        before = path.stat()
        writer = sqlite3.connect(path)
        writer.execute("PRAGMA journal_mode = DELETE")
        writer.execute("DELETE FROM users WHERE id = 21")
        writer.commit()
        writer.close()
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
        assert path.stat().st_size == before.st_size
        assert await _count(db) == 20
    finally:
        await db.aclose()
    _in_wal_mode(path)
    db = adapter(sqlite_server)
    try:
        assert await _count(db) == 20
        # A writer opens it now (its -wal appears) and commits, keeping its connection: the
        # next read is SQLite's shared one again, and sees the row the writer committed.
        writer = sqlite3.connect(path)
        try:
            writer.execute("INSERT INTO users (id, name) VALUES (22, 'late')")
            writer.commit()
            assert await _count(db) == 21
        finally:
            writer.close()
    finally:
        await db.aclose()
