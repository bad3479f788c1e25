"""``bench/bench_db_million_rows.py`` at its smallest size, on this process's database servers.

It sits here, not in tests/bench/test_bench_smoke.py with the other benchmarks, for the
MariaDB fixture: the database tests' servers are the ones it measures, so it starts none.
"""

from __future__ import annotations

import contextlib
import io
import re
import sys
from pathlib import Path

import pytest
from db_support import Server

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))


def url_of(server: Server) -> str:
    config = server.config
    scheme = {"postgres": "postgresql", "mysql": "mysql"}[server.engine]
    return f"{scheme}://{config.user}@{config.host}:{config.port}/{config.database}"


@pytest.mark.postgres
@pytest.mark.mariadb
def test_bench_db_million_rows(postgres_server: Server, mariadb_server: Server) -> None:
    import bench_db_million_rows

    args = ["--rows", "1000", "--classify-runs", "1", "--postgres", url_of(postgres_server)]
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        bench_db_million_rows.main([*args, "--mariadb", url_of(mariadb_server)])
    out = printed.getvalue()
    assert out.startswith("| engine | first 100 of 1,000 rows | peak Python memory |"), out
    for engine in ("sqlite", "postgres", "mysql"):
        row = rf"^\| {engine} \| \d+\.\d ms \| \d+ KiB \| \d+\.\d ms \|$"
        assert re.search(row, out, re.MULTILINE), out
    assert re.search(r"^classify\(\) of a 230-character MySQL query .*: \d+ µs$", out, re.M)
