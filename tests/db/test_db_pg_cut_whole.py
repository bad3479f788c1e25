"""PostgreSQL values that crossed the wire whole, past the server-side cut (``pg_cut``).

Two ways around it, each bringing a huge row into the agent whole:

- ``numeric`` counted as a bounded type, but without a precision a value has up to 147,455
  digits: ``SELECT x, x, ... FROM (SELECT 9e131071::numeric AS x) s`` (1,600 columns) was a
  210 MB row, kept whole in the result (the agent grew by 500 MB). Now a numeric column
  without a precision is cut on the server like text; ``numeric(10, 2)`` keeps its Decimal.
- a query the cut's wrapper could not hold as a subquery ran as written, cut only after
  fetching: ``SELECT repeat('x', 50000000) a, repeat('y', 50000000) b; -- note`` (or ``; ;``)
  brought the 100 MB row over (the agent grew from 52 to 338 MB). Now every trailing
  semicolon is dropped before wrapping, and a query that still cannot be a subquery is
  refused with what to change, never run uncut.

EXPLAIN cannot be a subquery; its ``FORMAT JSON`` plan was decoded into a list, which no
cut applies to: ``EXPLAIN (VERBOSE, FORMAT JSON) SELECT repeat('x', 50000000), ...`` kept a
100 MB list. Now it arrives as its text, cut on the server (``pg_explain``,
``test_db_pg_explain_cut.py``).
"""

from __future__ import annotations

from decimal import Decimal

import pytest
from db_support import Server, adapter

from rho_adapters.db import pg_rows
from rho_adapters.db.pg_cut import cut_query
from rho_domain.errors import DatabaseError
from rho_domain.ports.database import CutValue
from rho_domain.tools.database import render

DIGITS = 131072  # 9e131071: a 9 and 131,071 zeros


async def test_numeric_without_a_precision_arrives_cut(postgres_server: Server) -> None:
    db = adapter(postgres_server)
    try:
        result = await db.query(
            "SELECT x, x AS y, 1.5::numeric AS small, amount FROM "
            "(SELECT 9e131071::numeric AS x) s, orders WHERE orders.id = 1",
            max_rows=5,
            timeout=30,
        )
        (x, y, small, amount) = result.rows[0]
        assert x == y == CutValue("9" + "0" * 8191, DIGITS)
        assert small == "1.5"  # its text: a numeric with no precision is selected cut
        assert amount == Decimal("1.50")  # numeric(10, 2): bounded, a Decimal as before
    finally:
        await db.aclose()


async def test_text_after_the_last_semicolon_never_runs_the_query_uncut(
    postgres_server: Server,
) -> None:
    db = adapter(postgres_server)
    try:
        # the statement is wrapped without what follows its last token: cut all the same
        sql = "SELECT repeat('x', 9000) AS a; -- a note"
        ((value,),) = (await db.query(sql, max_rows=5, timeout=30)).rows
        assert isinstance(value, CutValue), value
        assert value.size == 9000
        result = await db.query("SELECT 1 AS one; -- a note ; ) x", max_rows=5, timeout=30)
        assert result.rows == ((1,),)
    finally:
        await db.aclose()


async def test_an_explain_json_plan_is_cut_as_text(postgres_server: Server) -> None:
    db = adapter(postgres_server)
    try:
        sql = "EXPLAIN (VERBOSE, FORMAT JSON) SELECT repeat('x', 20000) AS a"
        (plan,) = (await db.query(sql, max_rows=5, timeout=30)).rows[0]
        assert isinstance(plan, CutValue), type(plan)
        assert str(plan.head).startswith("[")
        assert (plan.size or 0) > 20000
        small = (await db.query("EXPLAIN (FORMAT JSON) SELECT 1", max_rows=5, timeout=30)).rows
        assert small[0][0].startswith("[")
        assert '"Plan"' in small[0][0]
    finally:
        await db.aclose()


def test_every_trailing_semicolon_is_dropped_before_wrapping() -> None:
    class Col:
        type_code = 25  # text

    sql = cut_query("SELECT repeat('x', 9) ; ;\n ;  ", [Col()], [True])
    assert ";" not in sql
    assert "SELECT repeat('x', 9)\n) AS q(c1)" in sql


async def test_a_query_of_no_columns_is_wrapped_too(postgres_server: Server) -> None:
    """``SELECT FROM users`` (a row count, no columns) was refused as "cannot be a subquery":
    the wrapper wrote empty column lists, ``m()`` and ``q()``, which are syntax errors."""
    db = adapter(postgres_server)
    try:
        result = await db.query("SELECT FROM users WHERE id <= 3", max_rows=5, timeout=30)
        assert (result.columns, result.rows) == ((), ((), (), ()))
        assert render(result, 10) == "3 rows of no columns."  # not "no result set"
    finally:
        await db.aclose()


async def test_only_the_wrappers_own_syntax_error_means_it_cannot_be_a_subquery(
    postgres_server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cut query is opened and its first rows computed in one block (``pg_rows``): a
    syntax error of computing a row (``to_tsquery`` of a column) is the query's own error,
    not "cannot be a subquery", which only a wrapper the server cannot parse means."""
    db = adapter(postgres_server)
    try:
        with pytest.raises(DatabaseError) as computing:
            await db.query("SELECT to_tsquery(name || ' & &') FROM users", max_rows=5, timeout=30)
        assert "syntax error in tsquery" in str(computing.value)
        assert "subquery" not in str(computing.value)
        monkeypatch.setattr(pg_rows, "cut_query", lambda *args: "SELECT (")
        with pytest.raises(DatabaseError, match="cannot be one; write it as a plain SELECT"):
            await db.query("SELECT name FROM users", max_rows=5, timeout=30)
    finally:
        await db.aclose()
