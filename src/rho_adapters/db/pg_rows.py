"""A PostgreSQL query's rows, planned and run inside the server so that its errors arrive cut.

``pg_cut`` bounds the values a query sends, not its errors: an input function's error quotes
the whole value it refused, and libpq holds a message whole before anything can cut it.
``SELECT (('1' || repeat('x', 100000000)) || g)::int FROM generate_series(1, 1) g`` failed at
``FETCH`` with a 100 MB message, and ``SELECT ('1' || repeat('x', 100000000))::int`` at
``DECLARE`` (the planner folds the constant): each grew the agent from 41 MB to 820 MB. So
every step that plans or runs the model's query happens in a ``DO`` block that raises an
error again with its message's first ``MESSAGE_CHARS`` characters (``pg_explain`` does the
same for an ``EXPLAIN``):

1. the query is opened as a cursor (planned, not run) and its columns read (``FETCH 0``);
2. the query wrapped by ``pg_cut.cut_query`` (its large values cut) is opened as a scrollable
   cursor over a ``MATERIALIZED`` CTE, so a row is computed once, whatever is read again, and
   in the same block its first batch is computed (step 3), each step in a sub-block of its
   own: only the opening's syntax error means "cannot be a subquery";
3. ``FETCH`` reads only rows already computed; once the client has read them all, a block
   moves the cursor over the next batch (which computes its rows, any error cut) and back.
   A ``FETCH`` that returns fewer computed rows than it asked for has met the end.

The text reaches the blocks through a transaction-local setting (a bound value, never
spliced into a block). A database without PL/pgSQL gets no query rather than an uncut error.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from rho_adapters.db.pg_cut import HEAD_CHARS, cut_columns, cut_query, fold, without_plpgsql
from rho_adapters.db.results import FETCH_BATCH, fetch
from rho_domain.errors import DatabaseError
from rho_domain.ports.database import QueryResult
from rho_domain.sql import dialect, statement_end

MESSAGE_CHARS = 2000  # what an error's message keeps, cut inside the server
SETTING = "rhoagent.query"  # not "rho_agent.": a string naming a module is an import
# Raised again from any error but a cancel (query_canceled is no OTHERS), with its code.
CUT_ERRORS = f"""EXCEPTION WHEN OTHERS THEN
  RAISE EXCEPTION USING MESSAGE = pg_catalog.left(SQLERRM, {MESSAGE_CHARS}), ERRCODE = SQLSTATE;"""
# {name}: a constant cursor name; {action}: constant words and integers.
_BLOCK = """DO $rho_agent$ DECLARE c pg_catalog.refcursor := '{name}'; BEGIN
  {action};
{cut_errors}
END $rho_agent$"""
# The cut query's opening and its first batch in one block (one round trip and one PL/pgSQL
# compile fewer per query). Only the opening's syntax error (the wrapper's parse) becomes
# NOT_A_SUBQUERY: a syntax error of computing a row (to_tsquery of a column) is the query's.
NOT_A_SUBQUERY = "RHO01"  # a code of our own: query_rows turns it into a DatabaseError
_OPEN_AND_COMPUTE = """DO $rho_agent$ DECLARE c pg_catalog.refcursor := '{name}'; BEGIN
  BEGIN
    OPEN c SCROLL FOR EXECUTE pg_catalog.current_setting('{setting}');
  EXCEPTION WHEN syntax_error THEN
    RAISE EXCEPTION USING MESSAGE = pg_catalog.left(SQLERRM, {chars}), ERRCODE = '{code}';
  WHEN OTHERS THEN
    RAISE EXCEPTION USING MESSAGE = pg_catalog.left(SQLERRM, {chars}), ERRCODE = SQLSTATE;
  END;
  BEGIN
    {moves};
  {cut_errors}
  END;
END $rho_agent$"""


def query_rows(
    conn: Any, sql: str, max_rows: int, alias: str, settings: frozenset[str] | None
) -> QueryResult:
    """The rows of ``sql`` (a plain query, already checked), at most ``max_rows``, large
    values cut and every error's message cut on the server. ``settings``: the server's, as
    the check read the text with them (which reading ends the statement where). Runs
    inside the caller's transaction."""
    description = _columns(conn, sql, alias)
    cuts = cut_columns(description)
    # What follows the statement's last token (";", "-- a note") cannot be in a subquery.
    readings = dialect("postgres").reading_for(settings)
    body = sql[: min(statement_end(sql, rules) for rules in readings)]
    most = max_rows + 1
    first = min(FETCH_BATCH, most)  # what fetch's first fetchmany(1) would have computed
    opening = _OPEN_AND_COMPUTE.format(
        name="rho_agent_cut",
        setting=SETTING,
        chars=MESSAGE_CHARS,
        code=NOT_A_SUBQUERY,
        moves=f"MOVE FORWARD {int(first)} IN c; MOVE ABSOLUTE 0 IN c",
        cut_errors=CUT_ERRORS,
    )
    try:
        _execute_block(conn, cut_query(body, description, cuts), opening, alias)
    except Exception as exc:
        # Never run as written instead: its huge values or errors would cross the wire
        # whole, and any query could ask for that. An error of running it (a function's
        # RAISE) is the query's own.
        if getattr(exc, "sqlstate", None) != NOT_A_SUBQUERY:
            raise
        raise DatabaseError(
            f"{alias}: this query is run as a subquery, so that its large values and errors "
            "are cut on the server, and it cannot be one; write it as a plain SELECT, WITH, "
            "VALUES or TABLE query"
        ) from exc
    computed = _Computed(conn, "rho_agent_cut", description, most=most, computed=first)
    try:
        # a cut text's head is HEAD_CHARS long: fold, not fetch, makes it a CutValue
        result = fetch(computed, max_rows, max_cell=HEAD_CHARS)
    finally:
        computed.close()
    return attrs.evolve(result, rows=tuple(fold(row, cuts) for row in result.rows))


def _columns(conn: Any, sql: str, alias: str) -> Sequence[Any]:
    """The description of ``sql``'s columns: opened as a cursor (planned, not run) and
    closed again."""
    action = f"OPEN c NO SCROLL FOR EXECUTE pg_catalog.current_setting('{SETTING}')"
    _execute_block(conn, sql, _block("rho_agent_query", action), alias)
    with conn.cursor() as cursor:
        cursor.execute("FETCH FORWARD 0 FROM rho_agent_query", prepare=False)
        return tuple(cursor.description or ())  # the portal ends with the transaction


def _execute_block(conn: Any, sql: str, block: str, alias: str) -> None:
    """Run ``block`` (constant text) with ``sql`` in the setting it opens."""
    conn.execute("SELECT pg_catalog.set_config(%s, %s, true)", (SETTING, sql), prepare=False)
    try:
        conn.execute(block, prepare=False)
    except Exception as exc:
        missing = without_plpgsql(
            exc, alias, "queries run inside the server (PL/pgSQL) so that their errors arrive cut"
        )
        if missing is not None:
            raise missing from exc
        raise


def _block(name: str, action: str) -> str:
    return _BLOCK.format(name=name, action=action, cut_errors=CUT_ERRORS)


class _Computed:
    """The open scrollable cursor ``name``, read as ``results.fetch`` reads a cursor (its
    ``description`` is the query's, its rows the wrapper's): ``fetchmany(n)`` ``FETCH``es
    rows already computed (fewer than ``n`` where those end), and once every row computed so
    far is read, first computes the next ``FETCH_BATCH`` (at least ``n``, at most up to
    ``most``) in a block (``MOVE`` forward, then back to where the reading stands). A
    ``FETCH`` of computed rows that returns fewer than it asked for has met the end: no block
    computes past it (a result smaller than the opening's batch costs no block more)."""

    def __init__(
        self, conn: Any, name: str, description: Sequence[Any], *, most: int, computed: int
    ) -> None:
        self.description = description
        self._conn = conn
        self._name = name
        self._most = most
        self._read = 0
        self._computed = computed  # rows the opening block computed already
        self._ended = False
        self._cursor = conn.cursor()

    def fetchmany(self, size: int) -> list[Any]:
        """The next ``size`` rows at most (fewer where the computed rows or the rows end)."""
        if self._ended:
            return []
        if self._read == self._computed < self._most:
            ahead = min(max(size, FETCH_BATCH), self._most - self._read)
            moves = f"MOVE FORWARD {int(ahead)} IN c; MOVE ABSOLUTE {self._read} IN c"
            self._conn.execute(_block(self._name, moves), prepare=False)
            self._computed = self._read + ahead
        take = min(size, self._computed - self._read)
        if take <= 0:
            return []
        self._cursor.execute(f"FETCH FORWARD {int(take)} FROM {self._name}", prepare=False)
        rows: list[Any] = self._cursor.fetchall()
        self._read += len(rows)
        self._ended = len(rows) < take
        return rows

    def close(self) -> None:
        """Close the client cursor (the portal ends with the transaction)."""
        self._cursor.close()
