"""SQLite's full-text (FTS3/4/5) and R-Tree tables read in read-only mode, and stay unwritten.

Before, every such table in the file failed to open under the read-only authorizer
("vtable constructor failed: ft", "not authorized"): FTS reads ``PRAGMA data_version`` or
``page_size`` as it opens, an R-Tree prepares its inserts and deletes on its shadow tables
(``rt_node``...), and the auxiliary functions (``bm25``, ``highlight``, ``snippet``,
``offsets``, ``matchinfo``) and FTS3/4's ``match`` were off the allowlist. The authorizer now
grants those asks on ``main`` alone, which ``mode=ro`` opened read-only, so with the
statement check off a write to each table still fails and the file is unchanged.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from db_support import Server, adapter

from rho_domain.errors import StatementRefused

TABLES = """
CREATE VIRTUAL TABLE ft USING fts5(body);
INSERT INTO ft VALUES ('secret words');
CREATE VIRTUAL TABLE ftv USING fts5vocab(ft, 'row');
CREATE VIRTUAL TABLE f4 USING fts4(body);
INSERT INTO f4 VALUES ('x y');
CREATE VIRTUAL TABLE rt USING rtree(id, a, b);
INSERT INTO rt VALUES (1, 0, 1);
"""
READS = {
    "SELECT body, bm25(ft) < 0, highlight(ft, 0, '[', ']') FROM ft WHERE ft MATCH 'secret'": (
        "secret words",
        1,
        "[secret] words",
    ),
    "SELECT term FROM ftv ORDER BY term": ("secret",),
    "SELECT snippet(f4), offsets(f4) FROM f4 WHERE f4 MATCH 'x'": ("<b>x</b> y", "0 0 0 1"),
    "SELECT id, a, b FROM rt WHERE a > -1": (1, 0.0, 1.0),
}
WRITES = [
    "INSERT INTO ft VALUES ('more')",
    "INSERT INTO ft(ft) VALUES ('optimize')",
    "INSERT INTO rt VALUES (2, 0, 1)",
    "DELETE FROM rt",
    "INSERT INTO rt_node VALUES (9, x'00')",
    "DELETE FROM rt_rowid",
    "CREATE TEMP TABLE t_node (a)",
]


@pytest.fixture
def with_tables(sqlite_server: Server) -> Server:
    conn = sqlite_server.admin()
    conn.executescript(TABLES)
    conn.commit()
    conn.close()
    return sqlite_server


async def test_full_text_and_rtree_tables_read_and_stay_unwritten(with_tables: Server) -> None:
    path = Path(with_tables.config.path or "")
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    db = adapter(with_tables)
    unchecked = adapter(with_tables, check=False)
    try:
        for sql, first_row in READS.items():
            result = await db.query(sql, max_rows=5, timeout=5)
            assert result.rows[0] == first_row, sql
        for sql in WRITES:
            with pytest.raises(StatementRefused) as info:
                await unchecked.query(sql, max_rows=1, timeout=5)
            assert info.value.by != "check", sql  # the server's walls, not the statement check
    finally:
        await db.aclose()
        await unchecked.aclose()
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before
