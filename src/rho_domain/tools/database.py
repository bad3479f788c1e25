"""The database tools: one per engine present (sqlite, postgres, mysql, oracle, vertica).

Each tool takes the alias (``database``) and an ``operation``: ``query`` (one statement),
``list_tables``, ``describe`` (columns, types, keys, indexes) or ``explain``. Results are a
compact text table with the column names, capped at ``row_limit`` rows (default 100) with a
"N more rows not shown" line; long cells are cut. Rows are fetched with a bounded look-ahead,
never the whole result, and within a byte budget: the adapter cuts huge cells (shown with
their full size) and stops fetching at its byte limit, which the table's last line states.

Read-only is enforced below the tool: the ``Database`` adapter checks every statement and
runs it inside the engine's read-only transaction. In a MUTATIONS profile the tool reports
a statement that is not read-only as DANGEROUS, so the approval mode decides whether a human
must approve it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from rho_domain.config import DatabaseConfig
from rho_domain.errors import StatementRefused, ToolArgumentsError, ToolError
from rho_domain.permissions import DatabaseMode, PermissionProfile
from rho_domain.ports.database import CutValue, Database, QueryResult
from rho_domain.sql import allowed_functions, check_read_only, classify, dialect
from rho_domain.tools.base import (
    DANGEROUS,
    READ_ONLY,
    ToolContext,
    ToolHandler,
    ToolOutput,
    ToolPolicy,
)

DEFAULT_ROW_LIMIT = 100
MAX_ROW_LIMIT = 1_000
LOOKAHEAD = 1_000  # rows fetched beyond the limit to say how many were not shown
CELL_LIMIT = 200
DEFAULT_TIMEOUT = 30.0
# The longest statement taken. The read-only check reads every token, and the policy of a
# call is decided on the event loop: 16,384 characters take about 0.05 s (0.15 s on a loaded
# 2-core machine); 1.5 MB took 13.8 s, during which no other session ran.
MAX_SQL = 16_384
_EXPLAIN_PREFIX = {
    "sqlite": "EXPLAIN QUERY PLAN ",
    "postgres": "EXPLAIN ",
    "mysql": "EXPLAIN ",
    "vertica": "EXPLAIN ",
}
_ENGINE_TITLE = {
    "sqlite": "SQLite",
    "postgres": "PostgreSQL",
    "mysql": "MySQL/MariaDB",
    "oracle": "Oracle",
    "vertica": "Vertica",
}


_ADDING = frozenset({"INSERT", "CREATE"})  # statements that only add (asked once, "always" holds)

DATABASE_TOOL_NAMES: frozenset[str] = frozenset(_ENGINE_TITLE)  # one tool per engine


def database_tools(
    databases: Mapping[str, DatabaseConfig], profile: PermissionProfile
) -> tuple[ToolHandler, ...]:
    """One tool per engine that has at least one alias, sorted by tool name."""
    by_engine: dict[str, dict[str, DatabaseConfig]] = {}
    for alias, config in databases.items():
        by_engine.setdefault(config.engine.lower(), {})[alias] = config
    return tuple(
        DatabaseTool(engine, by_engine[engine], profile)
        for engine in sorted(by_engine)
        if engine in _ENGINE_TITLE
    )


class DatabaseTool(ToolHandler):
    """The tool for one engine; ``aliases`` are the configured databases of that engine."""

    def __init__(
        self, engine: str, aliases: Mapping[str, DatabaseConfig], profile: PermissionProfile
    ) -> None:
        self._engine = engine
        self._aliases = dict(sorted(aliases.items()))
        self._mutations = profile.database is DatabaseMode.MUTATIONS

    @property
    def name(self) -> str:
        """See ``ToolHandler.name``."""
        return self._engine

    @property
    def description(self) -> str:
        """See ``ToolHandler.description``."""
        access = (
            "read and write (statements that write need approval)"
            if self._mutations
            else "read-only: one SELECT/WITH/SHOW/EXPLAIN statement per call, enforced by "
            "the database"
        )
        return (
            f"Query {_ENGINE_TITLE[self._engine]} databases ({', '.join(self._aliases)}). "
            f"Access: {access}. Operations: query (run `sql`), list_tables (optional "
            "`table_pattern` LIKE pattern and `schema`), describe (`table_name`: columns, types, "
            f"keys, indexes), explain (the plan of `sql`). At most `row_limit` rows are shown "
            f"(default {DEFAULT_ROW_LIMIT}); aggregate or filter in SQL for large tables."
        )

    @property
    def parameters(self) -> Mapping[str, Any]:
        """See ``ToolHandler.parameters``."""
        aliases = list(self._aliases)
        props: dict[str, Any] = {
            "database": {"type": "string", "enum": aliases, "description": "Database alias."},
            "operation": {
                "type": "string",
                "enum": ["query", "list_tables", "describe", "explain"],
            },
            "sql": {
                "type": "string",
                "maxLength": MAX_SQL,
                "description": "One SQL statement (query, explain).",
            },
            "table_name": {"type": "string", "description": "Table to describe."},
            "schema": {"type": "string", "description": "Schema (list_tables, describe)."},
            "table_pattern": {"type": "string", "description": "LIKE pattern, default %."},
            "row_limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_ROW_LIMIT,
                "description": f"Rows to show (default {DEFAULT_ROW_LIMIT}).",
            },
        }
        required = ["operation"] if len(aliases) == 1 else ["database", "operation"]
        return {"type": "object", "properties": props, "required": required}

    def policy_for(self, arguments: Mapping[str, Any]) -> ToolPolicy:
        """READ_ONLY for reads, list_tables and describe. A statement that is not read-only
        is DANGEROUS in a MUTATIONS profile, and destructive (it asks even after "always")
        unless it only adds (INSERT, CREATE); in a read-only one it is refused with the
        adapter's own reason when the adapter would refuse it on every server of the engine,
        so nobody is asked to approve a statement that would not run."""
        sql = arguments.get("sql")
        if arguments.get("operation") not in ("query", "explain") or not isinstance(sql, str):
            return READ_ONLY
        alias = arguments.get("database") or next(iter(self._aliases))
        config = self._aliases.get(alias)
        allowed = allowed_functions(config.options, alias=alias) if config else frozenset()
        verdict = classify(sql, self._dialect, allowed_functions=allowed)
        if verdict.read_only:
            return READ_ONLY
        if not self._mutations:
            return attrs.evolve(DANGEROUS, refused=self._refusal(sql, allowed))
        if verdict.kind in _ADDING:
            return DANGEROUS
        # after "always", a statement that may remove or overwrite data still asks
        kind = verdict.kind or "a statement this check cannot classify"
        return attrs.evolve(DANGEROUS, destructive=f"{kind}: may change or delete existing data")

    def _refusal(self, sql: str, allowed: frozenset[str]) -> str:
        """The adapter's refusal of ``sql`` when every reading of the dialect refuses it (the
        server's settings choose one reading: a statement one reading accepts may run);
        empty otherwise."""
        settings: list[frozenset[str] | None] = list(dialect(self._dialect).reading_by_setting)
        reasons = []
        for setting in settings or [None]:
            try:
                check_read_only(sql, self._dialect, settings=setting, allowed_functions=allowed)
            except StatementRefused as exc:
                reasons.append(str(exc))
            else:
                return ""
        return f"the database is read-only in this profile: {reasons[0]}"

    @property
    def _dialect(self) -> str:
        return self._engine

    async def handle(self, arguments: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
        """See ``ToolHandler.handle``."""
        alias = arguments.get("database") or next(iter(self._aliases))
        if alias not in self._aliases:
            raise ToolArgumentsError(
                f"unknown database {alias!r}: use one of {list(self._aliases)}"
            )
        db = ctx.databases.get(alias)
        if db is None:
            raise ToolError(f"database {alias!r} is configured but not connected in this session")
        operation = arguments["operation"]
        limit = int(arguments.get("row_limit") or DEFAULT_ROW_LIMIT)
        timeout = float(self._aliases[alias].options.get("statement_timeout", DEFAULT_TIMEOUT))
        meta = {"database": alias, "operation": operation}
        if operation == "list_tables":
            return await self._list_tables(db, arguments, meta)
        if operation == "describe":
            table = _required(arguments, "table_name", operation)
            text = await db.describe(table, schema=arguments.get("schema"))
            return ToolOutput(
                content=text, is_error=text.startswith("Table not found"), metadata=meta
            )
        sql = _required(arguments, "sql", operation)
        if operation == "explain":
            sql = self._explain(sql)
        result = await db.query(sql, max_rows=limit + LOOKAHEAD, timeout=timeout)
        return ToolOutput(
            content=render(result, limit),
            metadata={
                **meta,
                "columns": list(result.columns),
                "rows": min(len(result.rows), limit),
            },
        )

    def _explain(self, sql: str) -> str:
        prefix = _EXPLAIN_PREFIX.get(self._engine)
        if prefix is None:
            raise StatementRefused(
                "explain is not available for Oracle: EXPLAIN PLAN writes PLAN_TABLE, which a "
                "read-only transaction does not allow"
            )
        return prefix + sql.strip().rstrip(";")

    async def _list_tables(
        self, db: Database, arguments: Mapping[str, Any], meta: dict[str, Any]
    ) -> ToolOutput:
        pattern = arguments.get("table_pattern") or "%"
        tables = await db.list_tables(pattern=pattern, schema=arguments.get("schema"))
        if not tables:
            return ToolOutput(content=f"No tables found matching pattern: {pattern}", metadata=meta)
        rows = tuple((t.schema or "", t.name, t.kind) for t in tables)
        table = QueryResult(columns=("schema", "name", "kind"), rows=rows)
        return ToolOutput(
            content=render(table, MAX_ROW_LIMIT), metadata={**meta, "tables": len(rows)}
        )


def _required(arguments: Mapping[str, Any], key: str, operation: str) -> str:
    value = arguments.get(key)
    if not isinstance(value, str) or not value.strip():
        raise ToolArgumentsError(f"operation {operation!r} needs `{key}`")
    return value


def render(result: QueryResult, limit: int) -> str:
    """A compact text table: header, rule, at most ``limit`` rows, then what was left out."""
    if not result.columns and result.rows:  # SELECT FROM t (PostgreSQL): a row count
        return f"{len(result.rows):,}{'+' if result.more_rows else ''} rows of no columns."
    if not result.columns:
        count = "" if result.rowcount is None else f" ({result.rowcount} rows affected)"
        return f"Statement executed{count}; no result set."
    if not result.rows:
        return " | ".join(result.columns) + "\n(no rows)"
    shown = result.rows[:limit]
    cells = [[_cell(v) for v in row] for row in shown]
    widths = [
        max([len(col), *(len(row[i]) for row in cells)]) for i, col in enumerate(result.columns)
    ]
    lines = [_line(result.columns, widths), "-+-".join("-" * w for w in widths)]
    lines.extend(_line(row, widths) for row in cells)
    hidden = len(result.rows) - len(shown)
    if result.byte_limit is not None:
        lines.append(
            f"... {hidden:,}+ more rows not fetched: the rows reached {result.byte_limit:,} "
            "bytes, the limit of one result (select fewer or narrower columns, or aggregate)"
        )
    elif hidden or result.more_rows:
        more = f"{hidden:,}+" if result.more_rows else f"{hidden:,}"
        lines.append(f"... {more} more rows not shown (raise row_limit or narrow the query)")
    return "\n".join(lines)


def _line(values: Sequence[str], widths: Sequence[int]) -> str:
    return " | ".join(v.ljust(w) for v, w in zip(values, widths, strict=True)).rstrip()


def _cell(value: Any) -> str:
    if value is None:
        return "NULL"
    mark = ""
    if isinstance(value, CutValue):  # cut by the adapter: say so, and how large it was
        mark = " [cut]" if value.size is None else f" [cut: {value.size:,} bytes]"
        value = value.head
    if isinstance(value, bytes | bytearray | memoryview):
        data = bytes(value)
        text = "0x" + data[: CELL_LIMIT // 2].hex()
    else:
        text = str(value)
    text = text.replace("\r", "\\r").replace("\n", "\\n").replace("\t", " ")
    if len(text) > CELL_LIMIT:
        text = text[: CELL_LIMIT - 1] + "…"
    return text + mark
