"""Benchmark: a 1,000,000-row result through the read-only adapters.

For SQLite, PostgreSQL and MariaDB (the latter two started like the tests do, in temporary
directories), measures the time until the first 100 rows are back, the peak Python memory
allocated during the call (tracemalloc) and the time of the next small query on the same
adapter (the connection is recovered after a truncated result). Also times the statement
check alone. Run: ``.venv/bin/python bench/bench_db_million_rows.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests" / "db")]

from db_servers import running_mariadb, running_postgres  # noqa: E402
from db_support import Server, adapter, seed  # noqa: E402

from rho_domain.config import DatabaseConfig  # noqa: E402
from rho_domain.sql import classify  # noqa: E402

MILLION = {
    "sqlite": "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 1000000) "
    "SELECT x, 'row ' || x FROM c",
    "postgres": "SELECT x, 'row ' || x FROM generate_series(1, 1000000) AS x",
    "mysql": "SELECT seq, CONCAT('row ', seq) FROM seq_1_to_1000000",
}


@contextlib.contextmanager
def running_sqlite() -> Iterator[Server]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "app.db"
        conn = sqlite3.connect(path)
        seed(conn, "sqlite")
        conn.close()
        config = DatabaseConfig(engine="sqlite", path=str(path))
        yield Server("sqlite", config, lambda: sqlite3.connect(path), Path(tmp))


async def measure(server: Server) -> str:
    db = adapter(server)
    try:
        await db.query("SELECT 1", max_rows=1, timeout=5)
        tracemalloc.start()
        start = time.perf_counter()
        result = await db.query(MILLION[server.engine], max_rows=100, timeout=120)
        first = time.perf_counter() - start
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        start = time.perf_counter()
        await db.query("SELECT count(*) FROM users", max_rows=1, timeout=5)
        after = time.perf_counter() - start
        assert len(result.rows) == 100
        assert result.more_rows
    finally:
        await db.aclose()
    return (
        f"| {server.engine} | {first * 1000:.1f} ms | {peak / 1024:.0f} KiB | "
        f"{after * 1000:.1f} ms |"
    )


def bench_classifier() -> str:
    sql = (
        "WITH t AS (SELECT u.id, u.name, count(o.id) AS n FROM users u LEFT JOIN orders o "
        "ON o.user_id = u.id WHERE u.name <> 'drop table' GROUP BY u.id, u.name) "
        "SELECT * FROM t WHERE n > 2 ORDER BY n DESC"
    )
    runs = 2_000
    start = time.perf_counter()
    for _ in range(runs):
        classify(sql, "mysql")  # three lexer readings
    per_call = (time.perf_counter() - start) / runs
    return f"classify() of a 230-character MySQL query (3 readings): {per_call * 1e6:.0f} µs"


def main() -> None:
    print("| engine | first 100 of 1,000,000 rows | peak Python memory | next query |")
    print("|---|---|---|---|")
    for start in (running_sqlite, running_postgres, running_mariadb):
        try:
            with start() as server:
                print(asyncio.run(measure(server)))
        except BaseException as exc:
            if isinstance(exc, KeyboardInterrupt):
                raise
            print(f"| {start.__name__} | skipped: {exc} | | |")
    print()
    print(bench_classifier())


if __name__ == "__main__":
    main()
