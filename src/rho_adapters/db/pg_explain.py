"""A PostgreSQL ``EXPLAIN`` run inside the server, so its plan arrives cut.

An ``EXPLAIN`` cannot be a subquery, so ``pg_cut`` cannot wrap it, and the planner folds
immutable calls into constants that the plan prints whole: ``EXPLAIN SELECT * FROM t WHERE
name = repeat('x', 50000000)`` sent a 50 MB line, which libpq held whole before any cut, and
``FORMAT JSON`` a document twice that for two such calls. So the statement runs in a ``DO``
block: PL/pgSQL reads its plan line by line (``FOR ... IN EXECUTE`` opens a cursor, which
takes one statement only) and sends each line's first ``pg_cut.HEAD_CHARS`` characters (one
past what a cell keeps: its coming says "cut", whatever the encoding), with its size, as a
notice; the block stops at ``max_rows`` lines or ``MAX_RESULT_BYTES``. The text
reaches the block through a transaction-local setting (a bound value, never spliced into
the block). A database without PL/pgSQL gets no ``EXPLAIN`` rather than an uncut one. An
error in the block (planning folds ``('1' || repeat('x', 1000000))::int`` and fails,
quoting the whole value) is raised again with its message's first ``_MESSAGE_CHARS``
characters.
"""

from __future__ import annotations

import secrets
from typing import Any

from rho_adapters.db.pg_cut import HEAD_CHARS, head_or_cut, without_plpgsql
from rho_adapters.db.results import MAX_CELL, MAX_RESULT_BYTES
from rho_domain.ports.database import QueryResult

_SETTING = "rhoagent.explain"  # not "rho_agent.": a string naming a module is an import
# {tag}: hex only; {rows}, {cell}, {budget}: integers. Nothing the model writes. Every
# function and operator is pg_catalog's by name: an unqualified "||" ran a user's
# ||(text, integer), an exact match the server prefers to the built-in polymorphic one.
_BLOCK = """DO $rho_agent$ DECLARE line text; n bigint := 0; kept bigint := 0; BEGIN
  FOR line IN EXECUTE pg_catalog.current_setting('{setting}') LOOP
    n := n OPERATOR(pg_catalog.+) 1::bigint;
    IF n OPERATOR(pg_catalog.>) {rows}::bigint OR kept OPERATOR(pg_catalog.>) {budget}::bigint THEN
      RAISE NOTICE USING MESSAGE = '', DETAIL = pg_catalog.concat('{tag}:',
        CASE WHEN n OPERATOR(pg_catalog.>) {rows}::bigint THEN 'rows' ELSE 'bytes' END);
      EXIT;
    END IF;
    kept := kept OPERATOR(pg_catalog.+)
      LEAST(pg_catalog.octet_length(line), {cell}) OPERATOR(pg_catalog.+) 16;
    RAISE NOTICE USING MESSAGE = pg_catalog.left(line, {head}),
      DETAIL = pg_catalog.concat('{tag}:', pg_catalog.octet_length(line));
  END LOOP;
EXCEPTION WHEN OTHERS THEN  -- not a cancel: query_canceled is no OTHERS
  RAISE EXCEPTION USING MESSAGE = pg_catalog.left(SQLERRM, {said}), ERRCODE = SQLSTATE;
END $rho_agent$"""
# An error's message, cut in the block: the planner folds constants, and an input
# function's error quotes its whole input ('1' || repeat('x', 1000000))::int.
_MESSAGE_CHARS = 2000


def explain(conn: Any, sql: str, max_rows: int, alias: str) -> QueryResult:
    """The plan of ``sql`` (an ``EXPLAIN``, already checked) as ``("QUERY PLAN",)`` rows,
    each line cut to ``MAX_CELL`` on the server; ``more_rows`` (and ``byte_limit`` past the
    byte budget) when the block stopped early. Runs inside the caller's transaction."""
    tag = secrets.token_hex(8)  # a notice the plan's own statement raised is not a line
    lines: list[Any] = []
    stopped: list[str] = []  # "rows" or "bytes" when the block stopped early

    def heard(diag: Any) -> None:
        said, _, size = (diag.message_detail or "").partition(":")
        if said != tag:
            return
        if size in ("rows", "bytes"):
            stopped.append(size)
            return
        lines.append(head_or_cut(diag.message_primary or "", int(size)))

    conn.execute("SET LOCAL client_min_messages = notice", prepare=False)
    conn.execute("SELECT pg_catalog.set_config(%s, %s, true)", (_SETTING, sql), prepare=False)
    block = _BLOCK.format(
        setting=_SETTING,
        tag=tag,
        rows=max_rows,
        cell=MAX_CELL,
        head=HEAD_CHARS,
        budget=MAX_RESULT_BYTES,
        said=_MESSAGE_CHARS,
    )
    conn.add_notice_handler(heard)
    try:
        conn.execute(block, prepare=False)
    except Exception as exc:
        missing = without_plpgsql(
            exc,
            alias,
            "EXPLAIN runs inside the server (PL/pgSQL) so that a plan's huge constants arrive cut",
        )
        if missing is not None:
            raise missing from exc
        raise
    finally:
        conn.remove_notice_handler(heard)
    return QueryResult(
        columns=("QUERY PLAN",),
        rows=tuple((line,) for line in lines),
        more_rows=bool(stopped),
        byte_limit=MAX_RESULT_BYTES if "bytes" in stopped else None,
    )
