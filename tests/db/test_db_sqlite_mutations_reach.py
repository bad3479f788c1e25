"""The eval profile's SQLite (database: mutations, nothing asked) writes its own database and
no other file: ATTACH and VACUUM INTO name any path on the machine, and SQLite creates it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from rho_adapters.db.sqlite import SqliteDatabase
from rho_domain.config import DatabaseConfig
from rho_domain.errors import StatementRefused
from rho_domain.permissions import DatabaseMode

REFUSED = "ATTACH and VACUUM INTO open a file outside this database"


def _db(tmp_path: Path) -> SqliteDatabase:
    path = tmp_path / "app.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE t (x INTEGER)")
    config = DatabaseConfig(engine="sqlite", path=str(path))
    return SqliteDatabase("app", config, mode=DatabaseMode.MUTATIONS)


@pytest.mark.parametrize(
    "template",
    [
        "ATTACH DATABASE '{target}' AS o",
        "ATTACH '{target}' AS o",
        "VACUUM INTO '{target}'",
        "VACUUM main INTO '{target}'",
    ],
)
async def test_mutations_write_no_file_but_the_database(tmp_path: Path, template: str) -> None:
    # The target stands for ~/.bashrc's directory or another project: outside the database.
    outside = tmp_path / "outside"
    outside.mkdir()
    target = outside / "dropped.db"
    db = _db(tmp_path)
    try:
        with pytest.raises(StatementRefused, match=REFUSED):
            await db.query(template.format(target=target), max_rows=1, timeout=5)
        # the database itself still takes writes, and a plain VACUUM still runs
        await db.query("INSERT INTO t VALUES (1)", max_rows=1, timeout=5)
        await db.query("VACUUM", max_rows=1, timeout=5)
        result = await db.query("SELECT count(*) FROM t", max_rows=1, timeout=5)
    finally:
        await db.aclose()
    assert not target.exists()
    assert result.rows == ((1,),)


async def test_mutations_attach_reads_no_other_database(tmp_path: Path) -> None:
    # An existing SQLite file elsewhere (a browser's cookies, another project's data).
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE secret (v TEXT)")
        conn.execute("INSERT INTO secret VALUES ('hunter2')")
    db = _db(tmp_path)
    try:
        with pytest.raises(StatementRefused, match=REFUSED):
            await db.query(f"ATTACH DATABASE '{other}' AS o", max_rows=1, timeout=5)
    finally:
        await db.aclose()
