"""The shared shape of every database adapter: one reused connection, calls in a thread.

``ThreadedDatabase`` implements the ``Database`` port once. An engine subclass says how to
connect, how to check a connection before reuse, and how to run one statement inside the
engine's read-only transaction (``_run``); the base handles the statement check (layer 1),
the lock that keeps one statement per connection at a time, the thread hop, a last-resort
deadline that interrupts and drops a stuck connection, and the one error translation.
"""

from __future__ import annotations

import asyncio
import contextlib
from abc import abstractmethod
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from rho_adapters.db.errors import map_driver_errors
from rho_domain.config import DatabaseConfig
from rho_domain.errors import DatabaseError
from rho_domain.permissions import DatabaseMode
from rho_domain.ports.database import Database, QueryResult, TableInfo
from rho_domain.sql import Verdict, check_read_only, classify

T = TypeVar("T")

# Seconds the thread gets beyond the engine's own statement timeout before the adapter
# interrupts it and drops the connection (the engine timeout should always fire first).
_GRACE = 5.0


def fetch(cursor: Any, max_rows: int) -> QueryResult:
    """Read at most ``max_rows`` rows with ``fetchmany`` (one more to know if there are more)."""
    if cursor.description is None:
        count = cursor.rowcount
        return QueryResult(columns=(), rows=(), rowcount=count if count >= 0 else None)
    columns = tuple(str(col[0]) for col in cursor.description)
    rows = [tuple(row) for row in cursor.fetchmany(max_rows + 1)]
    return QueryResult(columns=columns, rows=tuple(rows[:max_rows]), more_rows=len(rows) > max_rows)


class ThreadedDatabase(Database):
    """A ``Database`` over a blocking DB-API driver. Connects lazily, on first use."""

    dialect_name: str = ""

    def __init__(
        self,
        alias: str,
        config: DatabaseConfig,
        *,
        mode: DatabaseMode = DatabaseMode.READONLY,
        password: str | None = None,
        driver: Any = None,
        check_statements: bool = True,
    ) -> None:
        """``driver`` replaces the lazily imported driver module (tests pass a fake DB-API).
        ``check_statements=False`` exists only to prove the engine fence on its own."""
        self.alias = alias
        self.config = config
        self.mode = mode
        self._password = password
        self._driver = driver
        self._check = check_statements and mode is DatabaseMode.READONLY
        self._conn: Any = None
        self._lock = asyncio.Lock()

    @property
    def dialect(self) -> str:
        return self.dialect_name

    @property
    def read_only(self) -> bool:
        return self.mode is DatabaseMode.READONLY

    def verdict(self, sql: str) -> Verdict:
        """Layer 1: refuse anything but one read statement (read-only mode)."""
        if self._check:
            return check_read_only(sql, self.dialect_name)
        return classify(sql, self.dialect_name)

    async def query(self, sql: str, *, max_rows: int, timeout: float) -> QueryResult:
        verdict = self.verdict(sql)
        return await self._call(
            lambda conn: self._run(conn, sql, None, verdict, max_rows, timeout), timeout
        )

    async def list_tables(
        self, *, pattern: str = "%", schema: str | None = None
    ) -> tuple[TableInfo, ...]:
        sql, params = self._list_tables_sql(pattern, schema)
        result = await self.internal(sql, params, max_rows=10_000)
        return tuple(
            TableInfo(schema=row[0], name=str(row[1]), kind=str(row[2]).lower())
            for row in result.rows
        )

    async def internal(
        self, sql: str, params: Sequence[Any] | None, *, max_rows: int, timeout: float = 30.0
    ) -> QueryResult:
        """Run a harness-written, parameterised read query in the read-only transaction."""
        verdict = Verdict(kind="SELECT", read_only=True)
        return await self._call(
            lambda conn: self._run(conn, sql, params, verdict, max_rows, timeout), timeout
        )

    async def aclose(self) -> None:
        async with self._lock:
            conn, self._conn = self._conn, None
            if conn is not None:
                await asyncio.to_thread(self._close_quietly, conn)

    async def _call(self, work: Callable[[Any], T], timeout: float) -> T:
        async with self._lock:
            task = asyncio.ensure_future(asyncio.to_thread(self._in_thread, work))
            try:
                return await asyncio.wait_for(asyncio.shield(task), timeout + _GRACE)
            except asyncio.CancelledError:
                self._abandon()  # the thread may still use the connection: never reuse it
                raise
            except TimeoutError:
                self._abandon()
                raise DatabaseError(
                    f"{self.alias}: the statement did not finish within {timeout:g} s "
                    "and was interrupted"
                ) from None

    def _in_thread(self, work: Callable[[Any], T]) -> T:
        with map_driver_errors(self.alias, self._error_types()):
            conn = self._conn
            if conn is None or not self._usable(conn):
                if conn is not None:
                    self._close_quietly(conn)
                self._conn = None
                conn = self._conn = self._connect()
            return work(conn)

    def _abandon(self) -> None:
        """Interrupt a stuck statement and forget its connection (never reused)."""
        conn, self._conn = self._conn, None
        if conn is not None:
            # Best effort: the connection is being dropped whatever happens.
            with contextlib.suppress(Exception):
                self._interrupt(conn)

    def discard(self, conn: Any) -> None:
        """Close and forget ``conn`` (after a truncated streaming result or a failure)."""
        if self._conn is conn:
            self._conn = None
        self._close_quietly(conn)

    def _close_quietly(self, conn: Any) -> None:
        with contextlib.suppress(Exception):  # closing a broken connection may fail too
            conn.close()

    def _interrupt(self, conn: Any) -> None:
        """Stop the running statement from another thread; default: close the connection."""
        conn.close()

    def _load_driver(self) -> Any:
        """Import the driver module, raising MissingExtra when it is absent. Drivers that use
        ``_module()`` override this; the import happens once, on first use."""
        raise NotImplementedError(f"{type(self).__name__} has no driver module to load")

    def _module(self) -> Any:
        """The driver module (or the one injected for tests), imported lazily and kept."""
        if self._driver is None:
            self._driver = self._load_driver()
        return self._driver

    def _error_types(self) -> tuple[type[Exception], ...]:
        """The driver's exception base classes, translated by ``map_driver_errors``
        (DB-API drivers: their ``Error``)."""
        return (self._module().Error,)

    @abstractmethod
    def _connect(self) -> Any:
        """Open a new connection with the engine-level read-only settings (blocking)."""

    @abstractmethod
    def _usable(self, conn: Any) -> bool:
        """Whether ``conn`` may be reused; False makes the base reconnect (blocking)."""

    @abstractmethod
    def _run(
        self,
        conn: Any,
        sql: str,
        params: Sequence[Any] | None,
        verdict: Verdict,
        max_rows: int,
        timeout: float,
    ) -> QueryResult:
        """Run one statement (in read-only mode inside the engine's read-only transaction,
        rolled back) and fetch at most ``max_rows`` rows (blocking)."""

    @abstractmethod
    def _list_tables_sql(self, pattern: str, schema: str | None) -> tuple[str, Sequence[Any]]:
        """A query returning (schema, name, kind) rows for tables and views."""


def format_description(
    table: str,
    columns: Sequence[Sequence[Any]],
    primary_key: Sequence[str],
    indexes: Sequence[tuple[str, bool, str]],
) -> str:
    """Text for the model: one line per column (name, type, NULL/NOT NULL, default), then
    the primary key and the indexes. ``columns`` rows are (name, type, nullable, default)."""
    if not columns:
        return f"Table not found: {table}"
    lines = [f"Table {table}", "Columns:"]
    for name, type_, nullable, default in columns:
        null = "NULL" if _truthy(nullable) else "NOT NULL"
        extra = f" DEFAULT {default}" if default not in (None, "") else ""
        lines.append(f"  {name} {type_} {null}{extra}")
    if primary_key:
        lines.append(f"Primary key: ({', '.join(primary_key)})")
    if indexes:
        lines.append("Indexes:")
        lines.extend(f"  {n} {'UNIQUE' if u else 'NONUNIQUE'} ({cols})" for n, u, cols in indexes)
    return "\n".join(lines)


def _truthy(value: Any) -> bool:
    if isinstance(value, str):
        return value.upper() in ("YES", "Y", "TRUE", "1", "T")
    return bool(value)
