"""A cut PostgreSQL value shown as whole, in a database whose encoding is not UTF-8.

The server cuts a large text to its first ``MAX_CELL`` characters and sends its size,
``octet_length``, in the *server's* encoding; the adapter marked a cell cut when that size
exceeded the head's length in UTF-8. In a ``LATIN1`` database ``é`` is one byte there and
two in UTF-8: ``SELECT repeat('é', 10000)`` arrived as a plain 8,192-character string, the
agent told the value was whole (an ``EXPLAIN``'s lines alike, ``pg_explain``); in
``EUC_JP`` every Japanese text did the same. Now the server sends one character more than it
keeps, and a cell is cut when that character came (whatever either encoding counts).
"""

from __future__ import annotations

from collections.abc import Iterator

import attrs
import pytest
from db_support import Server, adapter

from rho_adapters.db.results import MAX_CELL
from rho_domain.ports.database import CutValue

DB = "rho_pg_latin1"


@pytest.fixture(scope="module")
def latin1(postgres_server: Server) -> Iterator[Server]:
    """``postgres_server``'s database of this file, encoded LATIN1."""
    admin = postgres_server.admin()
    admin.autocommit = True
    admin.execute(f"DROP DATABASE IF EXISTS {DB}")
    admin.execute(
        f"CREATE DATABASE {DB} ENCODING 'LATIN1' TEMPLATE template0 LC_COLLATE 'C' LC_CTYPE 'C'"
    )
    try:
        yield attrs.evolve(
            postgres_server, config=attrs.evolve(postgres_server.config, database=DB)
        )
    finally:
        admin.execute(f"DROP DATABASE IF EXISTS {DB} WITH (FORCE)")
        admin.close()


async def test_a_cut_value_is_marked_cut_whatever_the_server_encoding(latin1: Server) -> None:
    db = adapter(latin1)
    try:
        sql = f"SELECT repeat('é', 10000) AS long, repeat('é', {MAX_CELL}) AS exact"
        ((long, exact),) = (await db.query(sql, max_rows=5, timeout=30)).rows
        assert long == CutValue("é" * MAX_CELL, 10000), type(long)  # LATIN1 bytes
        assert exact == "é" * MAX_CELL  # as long as a cell keeps: whole
        plan = await db.query(
            "EXPLAIN VERBOSE SELECT repeat('é', 10000) AS long", max_rows=5, timeout=30
        )
        lines = [line for (line,) in plan.rows]
        assert any(isinstance(line, CutValue) and len(line.head) == MAX_CELL for line in lines)
        assert not any(isinstance(line, str) and "éééé" in line for line in lines), lines
    finally:
        await db.aclose()
