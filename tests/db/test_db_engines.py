"""The Database port on the three real engines: query, list_tables, describe, explain
through the tool, timeouts, a 1,000,000-row result, connection reuse and mutations mode."""

from __future__ import annotations

import tracemalloc

import pytest
from db_support import Server, adapter, checksum

from rho_adapters.db import StatementTimeout
from rho_adapters.fakes import FakeClock, MemoryExecutor
from rho_domain.errors import DatabaseError, StatementRefused
from rho_domain.permissions import DatabaseMode, eval_profile, readonly_profile
from rho_domain.tools.base import ToolContext
from rho_domain.tools.database import database_tools

SLOW = {
    "sqlite": "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
    "SELECT count(*) FROM c",
    "postgres": "SELECT count(*) FROM generate_series(1, 1000000000)",
    "mysql": "SELECT count(*) FROM seq_1_to_100000 a, seq_1_to_100000 b WHERE a.seq + b.seq = 7",
}
MILLION = {
    "sqlite": "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 1000000) "
    "SELECT x, 'row ' || x FROM c",
    "postgres": "SELECT x, 'row ' || x FROM generate_series(1, 1000000) AS x",
    "mysql": "SELECT seq, CONCAT('row ', seq) FROM seq_1_to_1000000",
}


def _ctx(server: Server, db: object) -> ToolContext:
    return ToolContext(
        session_id="s",
        call_id="c",
        executor=MemoryExecutor(),
        profile=readonly_profile(),
        clock=FakeClock(),
        databases={"t": db},  # type: ignore[dict-item]
    )


async def test_query_list_describe_explain_through_the_tool(server: Server) -> None:
    db = adapter(server)
    (tool,) = database_tools({"t": server.config}, readonly_profile())
    ctx = _ctx(server, db)
    try:
        out = await tool.handle(
            {"operation": "query", "sql": "SELECT id, name FROM users ORDER BY id", "row_limit": 3},
            ctx,
        )
        lines = out.content.splitlines()
        assert lines[0].split(" | ")[0].strip() == "id"
        assert "user1" in lines[2]
        assert lines[-1].startswith("... 17 more rows not shown")
        out = await tool.handle({"operation": "list_tables"}, ctx)
        assert {"users", "orders", "big_orders"} <= set(out.content.split())
        assert "view" in out.content
        out = await tool.handle({"operation": "list_tables", "table_pattern": "ord%"}, ctx)
        assert "orders" in out.content
        assert "users" not in out.content
        out = await tool.handle({"operation": "describe", "table_name": "orders"}, ctx)
        assert "user_id" in out.content
        assert "NOT NULL" in out.content
        assert "Primary key: (id)" in out.content
        assert "ix_orders_user" in out.content
        out = await tool.handle({"operation": "describe", "table_name": "nope"}, ctx)
        assert out.is_error
        out = await tool.handle(
            {"operation": "explain", "sql": "SELECT * FROM users WHERE id = 1;"}, ctx
        )
        assert not out.is_error
        assert out.content.strip()
        with pytest.raises(StatementRefused):
            await tool.handle({"operation": "explain", "sql": "DELETE FROM users"}, ctx)
    finally:
        await db.aclose()


async def test_slow_query_times_out_and_the_connection_recovers(server: Server) -> None:
    db = adapter(server)
    try:
        with pytest.raises(StatementTimeout, match="timed out"):
            await db.query(SLOW[server.engine], max_rows=1, timeout=0.5)
        result = await db.query("SELECT count(*) FROM users", max_rows=1, timeout=5)
        assert result.rows == ((20,),)
    finally:
        await db.aclose()


async def test_million_rows_return_the_first_rows_with_bounded_memory(server: Server) -> None:
    db = adapter(server)
    try:
        await db.query("SELECT 1", max_rows=1, timeout=5)  # connect outside the measurement
        tracemalloc.start()
        result = await db.query(MILLION[server.engine], max_rows=100, timeout=60)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        assert len(result.rows) == 100
        assert result.more_rows
        assert result.rows[0][0] == 1
        # 1,000,000 rows of ~20 bytes would need tens of MB fetched; 101 rows need far less.
        assert peak < 5_000_000, f"peak Python allocation {peak:,} bytes"
        again = await db.query("SELECT count(*) FROM users", max_rows=1, timeout=5)
        assert again.rows == ((20,),)
    finally:
        await db.aclose()


async def test_connection_is_reused_and_replaced_when_broken(server: Server) -> None:
    db = adapter(server)
    try:
        await db.query("SELECT 1", max_rows=1, timeout=5)
        first = db.slot.conn  # type: ignore[attr-defined]
        await db.query("SELECT 2", max_rows=1, timeout=5)
        assert db.slot.conn is first  # type: ignore[attr-defined]
        first.close()
        result = await db.query("SELECT 3", max_rows=1, timeout=5)
        assert result.rows == ((3,),)
        assert db.slot.conn is not first  # type: ignore[attr-defined]
    finally:
        await db.aclose()
        await db.aclose()  # idempotent


async def test_driver_errors_become_database_errors(server: Server) -> None:
    db = adapter(server)
    try:
        with pytest.raises(DatabaseError, match="t: "):
            await db.query("SELECT * FROM no_such_table", max_rows=1, timeout=5)
        with pytest.raises(StatementRefused, match="more than one statement"):
            await db.query("SELECT 1; SELECT 2", max_rows=1, timeout=5)
    finally:
        await db.aclose()


async def test_mutations_mode_writes_and_the_tool_marks_them_dangerous(server: Server) -> None:
    (tool,) = database_tools({"t": server.config}, eval_profile())
    assert tool.policy_for({"operation": "query", "sql": "UPDATE users SET score = 0"}).dangerous
    assert not tool.policy_for({"operation": "query", "sql": "SELECT 1"}).dangerous
    db = adapter(server, mode=DatabaseMode.MUTATIONS)
    before = checksum(server)
    try:
        result = await db.query(
            "UPDATE users SET score = score WHERE id = 1", max_rows=1, timeout=5
        )
        assert result.columns == ()
        await db.query("CREATE TABLE scratch_mut (x INTEGER)", max_rows=1, timeout=5)
        await db.query("DROP TABLE scratch_mut", max_rows=1, timeout=5)
    finally:
        await db.aclose()
    assert checksum(server) == before
