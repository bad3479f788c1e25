"""Issue 32, item 7: database results are bounded in bytes, and statements in temporary disk.

On the real servers the fixtures start: two huge values cost the agent little (the agent's
memory is measured in a subprocess, ``ru_maxrss``) and arrive cut, with their size; many
medium rows stop at the byte budget, which the output states; a sort that spills past the
temporary-file limit is stopped with a message that says so. Legitimate queries keep their
values, types and order.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from typing import Any

import attrs
import pytest
from db_support import Server, adapter

from rho_adapters.db import ADAPTERS, StatementTimeout
from rho_adapters.db.mysql import caps_temp_space
from rho_adapters.db.results import FETCH_BATCH, MAX_RESULT_BYTES, cut, fetch
from rho_adapters.fakes import FakeClock, MemoryExecutor
from rho_domain.errors import ConfigError, DatabaseError
from rho_domain.permissions import readonly_profile
from rho_domain.ports.database import CutValue, Database
from rho_domain.tools.base import ToolContext
from rho_domain.tools.database import database_tools

GROWTH_LIMIT_KIB = 60 * 1024

MEASURE = """
import asyncio, json, resource, sys
from rho_adapters.db import ADAPTERS
from rho_adapters.fakes import FakeClock, MemoryExecutor
from rho_domain.config import DatabaseConfig
from rho_domain.permissions import readonly_profile
from rho_domain.tools.base import ToolContext
from rho_domain.tools.database import database_tools

config = DatabaseConfig(**json.loads(sys.argv[1]))

async def main():
    db = ADAPTERS[config.engine]("t", config)
    (tool,) = database_tools({"t": config}, readonly_profile())
    ctx = ToolContext(session_id="s", call_id="c", executor=MemoryExecutor(),
                      profile=readonly_profile(), clock=FakeClock(), databases={"t": db})
    await tool.handle({"operation": "query", "sql": "SELECT 1"}, ctx)  # connected, warm
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    out = await tool.handle({"operation": "query", "sql": sys.argv[2]}, ctx)
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    await db.aclose()
    print(json.dumps({"content": out.content, "growth_kib": after - before}))

asyncio.run(main())
"""


def measure(server: Server, sql: str) -> dict[str, Any]:
    """The tool's output for ``sql`` and how much the process grew, in a fresh process."""
    config = {k: v for k, v in attrs.asdict(server.config).items() if v not in (None, {})}
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, json.dumps(config), sql],
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def _ctx(db: Database) -> ToolContext:
    return ToolContext(
        session_id="s",
        call_id="c",
        executor=MemoryExecutor(),
        profile=readonly_profile(),
        clock=FakeClock(),
        databases={"t": db},
    )


def test_two_huge_postgres_values_arrive_cut_and_cost_little(postgres_server: Server) -> None:
    """Before: the agent grew by 1.1 GiB; the values are now cut on the server."""
    out = measure(postgres_server, "SELECT repeat('x', 50000000) AS a, repeat('y', 50000000) AS b")
    line = out["content"].splitlines()[2]
    assert line.count("[cut: 50,000,000 bytes]") == 2
    assert "x" * 199 + "…" in line
    assert len(out["content"]) < 1_500
    assert out["growth_kib"] < GROWTH_LIMIT_KIB


def test_two_large_mariadb_values_arrive_cut_and_cost_little(mariadb_server: Server) -> None:
    """MariaDB sends a row whole (at most max_allowed_packet, 16 MB by default; REPEAT
    gives NULL past it): what the agent keeps is cut, and the row is not kept twice."""
    out = measure(mariadb_server, "SELECT REPEAT('x', 8000000) AS a, REPEAT('y', 8000000) AS b")
    line = out["content"].splitlines()[2]
    assert line.count("[cut: 8,000,000 bytes]") == 2
    assert out["growth_kib"] < GROWTH_LIMIT_KIB


MEDIUM_ROWS = {
    "sqlite": "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 3000) "
    "SELECT x, replace(hex(zeroblob(4000)), '0', 'x') FROM c",
    "postgres": "SELECT x, repeat('x', 8000) FROM generate_series(1, 3000) AS x",
    "mysql": "SELECT seq, REPEAT('x', 8000) FROM seq_1_to_3000",
}


async def test_many_medium_rows_stop_at_the_byte_budget(server: Server) -> None:
    db = adapter(server)
    try:
        result = await db.query(MEDIUM_ROWS[server.engine], max_rows=2000, timeout=60)
        assert result.byte_limit == MAX_RESULT_BYTES
        assert result.more_rows
        assert 900 < len(result.rows) < 1100  # 8,000-character cells: ~1,040 fit in 8 MiB
        assert [row[0] for row in result.rows[:3]] == [1, 2, 3]
        (tool,) = database_tools({"t": server.config}, readonly_profile())
        out = await tool.handle(
            {"operation": "query", "sql": MEDIUM_ROWS[server.engine], "row_limit": 1000},
            _ctx(db),
        )
        assert out.content.splitlines()[-1].endswith(
            "more rows not fetched: the rows reached 8,388,608 bytes, the limit of one result "
            "(select fewer or narrower columns, or aggregate)"
        )
        # The connection is usable after a result left unread.
        again = await db.query("SELECT 1", max_rows=5, timeout=10)
        assert again.rows == ((1,),)
    finally:
        await db.aclose()


async def test_a_long_cell_is_cut_with_its_size_on_every_engine(server: Server) -> None:
    sql = {
        "sqlite": "SELECT replace(hex(zeroblob(10000)), '0', 'é')",
        "postgres": "SELECT repeat('é', 20000)",
        "mysql": "SELECT REPEAT('é', 20000)",
    }[server.engine]
    db = adapter(server)
    try:
        result = await db.query(sql, max_rows=5, timeout=30)
        (cell,) = result.rows[0]
        assert cell == CutValue("é" * 8192, 40_000)
    finally:
        await db.aclose()


async def test_postgres_values_keep_their_types_and_order(postgres_server: Server) -> None:
    db = adapter(postgres_server)
    try:
        result = await db.query(
            "SELECT x AS n, x::text AS t, DATE '2024-01-02' + x AS d, '{\"a\": 1}'::jsonb AS j, "
            "ARRAY[x, 2] AS a, decode('ff00', 'hex') AS b FROM generate_series(1, 3) AS x "
            "ORDER BY x DESC",
            max_rows=10,
            timeout=30,
        )
        assert result.columns == ("n", "t", "d", "j", "a", "b")
        assert [row[:2] for row in result.rows] == [(3, "3"), (2, "2"), (1, "1")]
        assert str(result.rows[0][2]) == "2024-01-05"
        assert result.rows[0][3:5] == ('{"a": 1}', "{3,2}")  # their text form
        assert bytes(result.rows[0][5]) == b"\xff\x00"
        # Trailing semicolons, blanks between them too, leave a subquery (test_db_pg_cut_whole)
        tail = await db.query("SELECT repeat('z', 9000) AS z; ;", max_rows=5, timeout=30)
        assert tail.rows == ((CutValue("z" * 8192, 9000),),)
    finally:
        await db.aclose()


SPILL = "SELECT md5(x::text) AS h FROM generate_series(1, 2000000) AS x ORDER BY h"


async def test_a_postgres_sort_past_the_temp_limit_is_stopped(postgres_server: Server) -> None:
    config = attrs.evolve(postgres_server.config, options={"temp_file_limit_mb": 8})
    db = ADAPTERS["postgres"]("t", config)
    try:
        with pytest.raises(DatabaseError) as caught:
            await db.query(SPILL, max_rows=5, timeout=120)
        assert "needed more temporary disk space than one statement may use" in str(caught.value)
        # 18 quotes the setting's name: "temp_file_limit" (8192kB)
        assert "temp_file_limit (8192kB)" in str(caught.value).replace('"', "")
        again = await db.query("SHOW temp_file_limit", max_rows=5, timeout=10)
        assert again.rows == (("8MB",),)  # set for every statement, not left on the session
    finally:
        await db.aclose()


async def test_a_postgres_login_that_may_not_set_the_limit_still_queries(
    postgres_server: Server,
) -> None:
    admin = postgres_server.admin()
    admin.autocommit = True
    try:
        admin.execute("DROP ROLE IF EXISTS rho_budget")
        admin.execute("CREATE ROLE rho_budget LOGIN NOSUPERUSER")
        config = attrs.evolve(postgres_server.config, user="rho_budget")
        db = ADAPTERS["postgres"]("t", config)
        try:
            shown = await db.query("SHOW temp_file_limit", max_rows=5, timeout=10)
            assert shown.rows == (("-1",),)  # the server's default: the role must set it
        finally:
            await db.aclose()
        admin.execute("GRANT SET ON PARAMETER temp_file_limit TO rho_budget")
        db = ADAPTERS["postgres"]("t", config)
        try:
            shown = await db.query("SHOW temp_file_limit", max_rows=5, timeout=10)
            assert shown.rows == (("1GB",),)
        finally:
            await db.aclose()
    finally:
        admin.execute("REVOKE SET ON PARAMETER temp_file_limit FROM rho_budget")
        admin.execute("DROP ROLE rho_budget")
        admin.close()


async def test_a_mariadb_temporary_table_past_the_limit_is_stopped(
    mariadb_server: Server,
) -> None:
    config = attrs.evolve(mariadb_server.config, options={"temp_file_limit_mb": 4})
    db = ADAPTERS["mysql"]("t", config)
    try:
        with pytest.raises(DatabaseError) as caught:
            await db.query(
                "SELECT DISTINCT CONCAT(seq, REPEAT('x', 400)) FROM seq_1_to_200000",
                max_rows=5,
                timeout=120,
            )
        assert "needed more temporary disk space than one statement may use" in str(caught.value)
        assert "is full" in str(caught.value)
        fine = await db.query(
            "SELECT COUNT(DISTINCT seq % 7) FROM seq_1_to_1000", max_rows=5, timeout=30
        )
        assert fine.rows == ((7,),)
    finally:
        await db.aclose()


def _open_temp_bytes(server: Server) -> int:
    """The bytes of the files MariaDB holds open in its tmpdir (``db_servers`` gives it the
    work directory): a sort's merge files are unlinked as they are made, so only the server's
    open descriptors show them."""
    pid = (server.workdir / "pid").read_text().strip()
    total = 0
    for fd in os.scandir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(fd.path)
            if target.startswith(f"{server.workdir}/#") and target.endswith("(deleted)"):
                total += os.stat(fd.path).st_size
        except OSError:
            continue  # closed meanwhile
    return total


async def test_a_mariadb_sort_s_files_last_no_longer_than_its_statement(
    mariadb_server: Server,
) -> None:
    """MariaDB before 11.5 bounds no session's sort files (``max_tmp_session_space_usage``,
    which the adapter sets from 11.5 with ``tmp_disk_table_size``): a sort of
    ``seq_1_to_100000000`` by a 180-character key wrote 706 MB of them in 10 s. The bound
    decided is the statement's time limit: the sort spills, is ended at its limit, and
    the server frees its files."""
    admin = mariadb_server.admin()
    cursor = admin.cursor()
    cursor.execute("SELECT VERSION()")
    if caps_temp_space(str(cursor.fetchone()[0])):
        pytest.skip("this MariaDB bounds sort files itself (max_tmp_session_space_usage)")
    status = "SHOW GLOBAL STATUS LIKE 'Created_tmp_files'"
    cursor.execute(status)
    files_before, idle = int(cursor.fetchone()[1]), _open_temp_bytes(mariadb_server)
    db = adapter(mariadb_server)
    sort = "SELECT seq FROM seq_1_to_100000000 ORDER BY REPEAT(seq, 20)"
    try:
        with pytest.raises(StatementTimeout):
            await db.query(sort, max_rows=5, timeout=0.5)
        cursor.execute(status)
        assert int(cursor.fetchone()[1]) > files_before, "the sort spilled to files"
        deadline = time.monotonic() + 60  # a bound about hanging only
        while _open_temp_bytes(mariadb_server) > idle + (1 << 20):
            assert time.monotonic() < deadline, "the sort's files outlived its statement"
            await asyncio.sleep(0.05)
    finally:
        await db.aclose()
        admin.close()


def test_only_mariadb_11_5_and_later_bound_a_session_s_sort_files() -> None:
    assert not caps_temp_space("10.11.19-MariaDB-0+deb12u1")
    assert not caps_temp_space("11.4.5-MariaDB")
    assert caps_temp_space("11.5.2-MariaDB-ubu2404")
    assert caps_temp_space("12.0.1-MariaDB")
    # the greeting PyMySQL reports keeps MariaDB's 5.5.5- prefix: read as 5.5, never capped
    assert caps_temp_space("5.5.5-11.5.2-MariaDB-ubu2404")
    assert not caps_temp_space("5.5.5-10.11.19-MariaDB-0+deb12u1")


@pytest.mark.parametrize("value", [0, -5, "8", True, 1.5])
async def test_the_temp_limit_option_is_checked(postgres_server: Server, value: Any) -> None:
    config = attrs.evolve(postgres_server.config, options={"temp_file_limit_mb": value})
    db = ADAPTERS["postgres"]("t", config)
    try:
        with pytest.raises(ConfigError, match=r"options\.temp_file_limit_mb: a whole number"):
            await db.query("SELECT 1", max_rows=5, timeout=10)
    finally:
        await db.aclose()


class CountingCursor:
    """A DB-API cursor over an endless result of 1 MB cells, counting the rows handed out."""

    description = (("big",),)

    def __init__(self) -> None:
        self.handed = 0
        self.asked: list[int] = []

    def fetchmany(self, size: int) -> list[tuple[str]]:
        self.asked.append(size)
        self.handed += size
        return [("x" * 1_000_000,)] * size


def test_fetching_stops_at_the_budget_and_never_asks_for_everything() -> None:
    """Rows of 1 MB: one at a time (a batch of 100 would be 100 MB), until 8 times the
    budget was received."""
    cursor = CountingCursor()
    result = fetch(cursor, 100_000, max_bytes=1 << 20, max_cell=100)
    assert cursor.asked == [1] * len(cursor.asked)
    assert len(result.rows) == cursor.handed == 9  # 9 MB received > 8 x 1 MiB
    assert result.byte_limit == 1 << 20
    assert result.more_rows
    assert result.rows[0] == (CutValue("x" * 100, 1_000_000),)


def test_small_rows_are_fetched_in_batches_until_the_budget() -> None:
    class SmallRows(CountingCursor):
        def fetchmany(self, size: int) -> list[tuple[str]]:
            self.asked.append(size)
            self.handed += size
            return [("x" * 84,)] * size  # 100 bytes a row as counted

    cursor = SmallRows()
    result = fetch(cursor, 100_000, max_bytes=1 << 20)
    assert cursor.asked[:2] == [1, FETCH_BATCH]
    assert max(cursor.asked) == FETCH_BATCH
    assert result.byte_limit == 1 << 20
    assert (1 << 20) // 100 < len(result.rows) <= (1 << 20) // 100 + FETCH_BATCH


def test_cut_keeps_short_values_and_measures_long_ones() -> None:
    assert cut("abc", 3) == "abc"
    assert cut("é" * 5, 3) == CutValue("ééé", 10)
    assert cut(b"\x00" * 5, 3) == CutValue(b"\x00" * 3, 5)
    assert cut(12345678901234567890, 3) == 12345678901234567890
