"""A PostgreSQL ``EXPLAIN`` arrives cut: the plan's huge lines never cross the wire whole.

An ``EXPLAIN`` cannot be a subquery, so the server-side cut (``pg_cut``) never applied to
it, and the planner folds immutable calls into constants the plan prints whole:
``EXPLAIN SELECT * FROM users WHERE name = repeat('x', 1000000)`` sent its 1 MB line to the
agent, which libpq held whole before any cut (50 MB for ``repeat('x', 50000000)``, a 100 MB
JSON plan for two such calls, up to PostgreSQL's 1 GB a value). Now the plan is read inside
the server (``pg_explain``: a ``DO`` block over a cursor) and sent a cut line at a time.
The bytes the server sends are counted by a relay between the adapter and the server.

A query's errors likewise (``pg_rows``): an input function's error quotes the whole value it
refused, at ``DECLARE`` (a folded constant) or at ``FETCH``, and arrived whole (a 100 MB
message grew the agent from 41 MB to 820 MB); both are planned and run in a ``DO`` block
that raises the error again cut.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from typing import Any

import attrs
import pytest
from db_support import Server, adapter

from rho_domain.errors import DatabaseError
from rho_domain.ports.database import CutValue

HUGE = 1_000_000  # a plan line this long crossed the wire whole


@attrs.define
class Relay:
    """A loopback TCP relay to a server that counts the bytes the server sends."""

    port: int
    received: int = 0


def _pump(src: socket.socket, dst: socket.socket, relay: Relay | None) -> None:
    try:
        while chunk := src.recv(65536):
            if relay is not None:
                relay.received += len(chunk)
            dst.sendall(chunk)
    except OSError:
        pass
    finally:
        for end in (src, dst):
            end.close()


@pytest.fixture
def counted(postgres_server: Server) -> Iterator[tuple[Server, Relay]]:
    """``postgres_server`` reached through a ``Relay``."""
    listener = socket.create_server(("127.0.0.1", 0))
    relay = Relay(port=listener.getsockname()[1])

    def serve() -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", postgres_server.config.port))
            for args in ((client, upstream, None), (upstream, client, relay)):
                threading.Thread(target=_pump, args=args, daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    config = attrs.evolve(postgres_server.config, host="127.0.0.1", port=relay.port)
    try:
        yield attrs.evolve(postgres_server, config=config), relay
    finally:
        listener.close()


async def test_an_explain_plan_is_cut_before_it_crosses_the_wire(
    counted: tuple[Server, Relay],
) -> None:
    server, relay = counted
    db = adapter(server)
    try:
        await db.query("SELECT 1", max_rows=1, timeout=30)  # connected, catalog read
        for sql in (
            f"EXPLAIN SELECT * FROM users WHERE name = repeat('x', {HUGE})",
            f"EXPLAIN (VERBOSE, FORMAT JSON) SELECT repeat('x', {HUGE}), repeat('y', {HUGE})",
        ):
            before = relay.received
            result = await db.query(sql, max_rows=50, timeout=30)
            sent = relay.received - before
            assert sent < 100_000, (sql, sent)
            cut = [cell for (cell,) in result.rows if isinstance(cell, CutValue)]
            assert cut, (sql, result.rows)
            assert all((c.size or 0) > HUGE and len(c.head) == 8192 for c in cut), cut
        # an error of planning quotes the folded value whole: its message is cut in the block
        before = relay.received
        with pytest.raises(DatabaseError, match="invalid input syntax for type integer"):
            await db.query(
                f"EXPLAIN SELECT ('1' || repeat('x', {HUGE}))::int", max_rows=5, timeout=30
            )
        assert relay.received - before < 100_000
        # a plan of many lines stops at max_rows; a plain plan reads as before
        many = " UNION ALL ".join(f"SELECT {i} FROM users" for i in range(20))
        result = await db.query(f"EXPLAIN {many}", max_rows=5, timeout=30)
        assert len(result.rows) == 5
        assert result.more_rows
        (line,) = (await db.query("EXPLAIN SELECT 1", max_rows=5, timeout=30)).rows[0]
        assert line.startswith("Result  (cost=")
    finally:
        await db.aclose()


async def test_a_query_error_is_cut_before_it_crosses_the_wire(
    counted: tuple[Server, Relay],
) -> None:
    server, relay = counted
    db = adapter(server)
    bad = f"('1' || repeat('x', {HUGE}))"
    try:
        await db.query("SELECT 1", max_rows=1, timeout=30)  # connected, catalog read
        for sql in (
            f"SELECT {bad}::int",  # folded by the planner: fails at DECLARE
            f"SELECT ({bad} || g)::int FROM generate_series(1, 1) g",  # fails at FETCH
            # the 120th row fails, past the first batch of rows computed (FETCH_BATCH)
            f"SELECT CASE WHEN g = 120 THEN ({bad} || g)::int END FROM generate_series(1, 150) g",
        ):
            before = relay.received
            with pytest.raises(DatabaseError, match="invalid input syntax for type integer"):
                await db.query(sql, max_rows=200, timeout=30)
            assert relay.received - before < 100_000, sql
        # rows before a failing one, and a row read again, are computed once
        sql = "SELECT g, pg_catalog.random() FROM generate_series(1, 3) g"
        result = await db.query(sql, max_rows=2, timeout=30)
        assert [row[0] for row in result.rows] == [1, 2]
        assert result.more_rows
    finally:
        await db.aclose()


async def test_the_block_runs_no_user_operator_and_needs_plpgsql(postgres_server: Server) -> None:
    """The block names every operator by its schema: a user's ``||(text, integer)``, an
    exact match the server preferred to the built-in, ran inside it (the harness's text,
    which no check reads). The plan is read by PL/pgSQL; where an administrator dropped it,
    EXPLAIN is refused with what to do, never run the old way (its lines whole on the
    wire)."""
    import psycopg

    admin = postgres_server.admin()
    admin.autocommit = True
    admin.execute("DROP DATABASE IF EXISTS rho_no_plpgsql")
    admin.execute("CREATE DATABASE rho_no_plpgsql")
    config = attrs.evolve(postgres_server.config, database="rho_no_plpgsql")
    with psycopg.connect(
        host=config.host, port=config.port, user=config.user, dbname=config.database
    ) as conn:
        conn.execute(
            "CREATE FUNCTION public.cat(text, integer) RETURNS text LANGUAGE sql "
            "AS $$ SELECT 'a user operator ran' $$"
        )
        conn.execute("CREATE OPERATOR public.|| (LEFTARG = text, RIGHTARG = int4, FUNCTION = cat)")
        conn.commit()
    db = adapter(attrs.evolve(postgres_server, config=config))
    try:
        (line,) = (await db.query("EXPLAIN SELECT 1", max_rows=5, timeout=30)).rows[0]
        assert line.startswith("Result  (cost="), line
        with psycopg.connect(
            host=config.host, port=config.port, user=config.user, dbname=config.database
        ) as conn:
            conn.execute("DROP EXTENSION plpgsql")
        with pytest.raises(DatabaseError, match="CREATE EXTENSION plpgsql"):
            await db.query("EXPLAIN SELECT 1", max_rows=5, timeout=30)
        # a query is planned and run in PL/pgSQL too (pg_rows): refused the same way
        with pytest.raises(DatabaseError, match="CREATE EXTENSION plpgsql"):
            await db.query("SELECT 1 AS one", max_rows=5, timeout=30)
    finally:
        await db.aclose()
        admin.execute("DROP DATABASE IF EXISTS rho_no_plpgsql WITH (FORCE)")
        admin.close()


async def test_rows_are_read_whole_across_batches_in_as_few_blocks_as_they_need(
    postgres_server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every row arrives once and in order on either side of a batch's edge (FETCH_BATCH,
    100), and the blocks stop at the rows' end: a query of 20 rows took four PL/pgSQL blocks
    (its columns, the cut query's opening, a batch computed, then one more that found the
    end), a compile and a round trip each; now two, the opening computing the first batch."""
    import psycopg

    blocks: list[str] = []
    execute = psycopg.Connection.execute

    def counted(conn: psycopg.Connection[Any], query: Any, *args: Any, **kw: Any) -> Any:
        if str(query).startswith("DO $rho_agent$"):
            blocks.append(str(query))
        return execute(conn, query, *args, **kw)

    db = adapter(postgres_server)
    try:
        await db.query("SELECT 1", max_rows=1, timeout=30)  # connected, catalog read
        monkeypatch.setattr(psycopg.Connection, "execute", counted)
        for count, most, spent in ((0, 50, 2), (20, 50, 2), (100, 500, 3), (250, 500, 4)):
            blocks.clear()
            sql = f"SELECT g FROM generate_series(1, {count}) g"
            result = await db.query(sql, max_rows=most, timeout=30)
            assert [row[0] for row in result.rows] == list(range(1, count + 1)), count
            assert not result.more_rows
            assert len(blocks) == spent, (count, blocks)
        result = await db.query("SELECT g FROM generate_series(1, 250) g", max_rows=150, timeout=30)
        assert [row[0] for row in result.rows] == list(range(1, 151))
        assert result.more_rows
    finally:
        await db.aclose()
