"""Benchmark: a 1,000,000-row result through the read-only adapters.

For SQLite, PostgreSQL and MariaDB (the latter two started like the tests do, in temporary
directories), measures the time until the first 100 rows are back, the peak Python memory
allocated during the call (tracemalloc) and the time of the next small query on the same
adapter (the connection is recovered after a truncated result). Also times the statement
check alone. ``--postgres URL`` / ``--mariadb URL`` use a running server seeded as tests/db
seeds it instead of starting one; ``--rows`` and ``--classify-runs`` set the sizes.

Usage: python bench/bench_db_million_rows.py [--rows N] [--classify-runs N]
    [--postgres URL] [--mariadb URL]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import sqlite3
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[1]
# The tests' database helpers; our sources from PYTHONPATH or the install, as every bench
# takes them (so --against-style runs measure the tree asked for), else this checkout's.
sys.path.insert(0, str(ROOT / "tests" / "db"))
if importlib.util.find_spec("rho_domain") is None:
    sys.path.insert(0, str(ROOT / "src"))

from db_servers import running_mariadb, running_postgres  # noqa: E402
from db_support import Server, seed  # noqa: E402

from rho_adapters.db import ADAPTERS  # noqa: E402
from rho_domain.config import DatabaseConfig  # noqa: E402
from rho_domain.permissions import DatabaseMode  # noqa: E402
from rho_domain.sql import classify  # noqa: E402


def million_rows(engine: str, rows: int) -> str:
    """A query of ``rows`` generated rows of two columns in ``engine``'s dialect."""
    return {
        "sqlite": "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c "
        f"LIMIT {rows}) SELECT x, 'row ' || x FROM c",
        "postgres": f"SELECT x, 'row ' || x FROM generate_series(1, {rows}) AS x",
        "mysql": f"SELECT seq, CONCAT('row ', seq) FROM seq_1_to_{rows}",
    }[engine]


def config_of(url: str) -> DatabaseConfig:
    """A running server's adapter settings from ``postgresql://USER@HOST:PORT/DB`` or
    ``mysql://USER@HOST:PORT/DB`` (no password: the tests' servers have none)."""
    parts = urlsplit(url)
    engines = {"postgresql": "postgres", "postgres": "postgres", "mysql": "mysql"}
    if parts.scheme not in engines:
        raise SystemExit(f"{url}: expected a postgresql:// or mysql:// URL")
    return DatabaseConfig(
        engine=engines[parts.scheme],
        host=parts.hostname,
        port=parts.port,
        user=parts.username,
        database=parts.path.lstrip("/"),
    )


@contextlib.contextmanager
def running_sqlite() -> Iterator[DatabaseConfig]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "app.db"
        conn = sqlite3.connect(path)
        seed(conn, "sqlite")
        conn.close()
        yield DatabaseConfig(engine="sqlite", path=str(path))


@contextlib.contextmanager
def server_config(
    url: str | None, start: Callable[[], AbstractContextManager[Server]]
) -> Iterator[DatabaseConfig]:
    """The server ``url`` names (seeded as tests/db seeds it), else one started by ``start``."""
    if url is not None:
        yield config_of(url)
        return
    with start() as server:
        yield server.config


async def measure(config: DatabaseConfig, rows: int) -> str:
    db = ADAPTERS[config.engine]("t", config, mode=DatabaseMode.READONLY, check_statements=True)
    try:
        await db.query("SELECT 1", max_rows=1, timeout=5)
        tracemalloc.start()
        start = time.perf_counter()
        result = await db.query(million_rows(config.engine, rows), max_rows=100, timeout=120)
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
        f"| {config.engine} | {first * 1000:.1f} ms | {peak / 1024:.0f} KiB | "
        f"{after * 1000:.1f} ms |"
    )


def bench_classifier(runs: int) -> str:
    sql = (
        "WITH t AS (SELECT u.id, u.name, count(o.id) AS n FROM users u LEFT JOIN orders o "
        "ON o.user_id = u.id WHERE u.name <> 'drop table' GROUP BY u.id, u.name) "
        "SELECT * FROM t WHERE n > 2 ORDER BY n DESC"
    )
    start = time.perf_counter()
    for _ in range(runs):
        classify(sql, "mysql")  # three lexer readings
    per_call = (time.perf_counter() - start) / runs
    return f"classify() of a 230-character MySQL query (3 readings): {per_call * 1e6:.0f} µs"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows the query makes")
    parser.add_argument("--postgres", metavar="URL", help="a running, seeded server to use")
    parser.add_argument("--mariadb", metavar="URL", help="a running, seeded server to use")
    parser.add_argument("--classify-runs", type=int, default=2_000)
    args = parser.parse_args(argv)
    engines: dict[str, Callable[[], AbstractContextManager[DatabaseConfig]]] = {
        "sqlite": running_sqlite,
        "postgres": lambda: server_config(args.postgres, running_postgres),
        "mysql": lambda: server_config(args.mariadb, running_mariadb),
    }
    print(f"| engine | first 100 of {args.rows:,} rows | peak Python memory | next query |")
    print("|---|---|---|---|")
    for engine, start in engines.items():
        try:
            with start() as config:
                print(asyncio.run(measure(config, args.rows)))
        except BaseException as exc:
            if isinstance(exc, KeyboardInterrupt):
                raise
            print(f"| {engine} | skipped: {exc} | | |")
    print()
    print(bench_classifier(args.classify_runs))


if __name__ == "__main__":
    main()
