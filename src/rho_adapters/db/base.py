"""The shared shape of every database adapter: one reused connection, calls in a thread.

``ThreadedDatabase`` implements the ``Database`` port once. An engine subclass says how to
connect, how to check a connection before reuse, how to run one statement inside the
engine's read-only transaction (``_run``) and how to leave no session state behind
(``_reset``); the base handles the statement check (layer 1, for the server's settings and
the alias's allowed functions), the lock that keeps one statement per connection at a time,
the thread hop, and the deadline.

The deadline: each engine enforces the statement timeout itself (SQLite progress handler,
``statement_timeout``, ``max_statement_time``, ``call_timeout``, ``RUNTIMECAP``). If the
call is still running ``WATCHDOG_MARGIN`` seconds after the timeout (a long single step,
several round trips), the base cancels the statement through the engine (``_cancel``), and
``_GRACE`` later drops the connection. An abandoned thread's result is always retrieved, so
nothing is logged later as "Task exception was never retrieved".
"""

from __future__ import annotations

import asyncio
import contextlib
from abc import abstractmethod
from collections.abc import Callable, Sequence
from decimal import Decimal
from typing import Any, TypeVar

from rho_adapters.db.errors import StatementTimeout, map_driver_errors
from rho_domain.config import DatabaseConfig
from rho_domain.errors import ConfigError, RhoError, StatementRefused
from rho_domain.permissions import DatabaseMode
from rho_domain.ports.database import CutValue, Database, QueryResult, TableInfo
from rho_domain.sql import Verdict, allowed_functions, check_read_only, classify, dialect

T = TypeVar("T")

# The bytes one result may hold (cells as kept, after cutting), and the longest cell kept
# whole (characters, or bytes for binary values): a query of two 50 MB values grew the agent
# by 1.1 GiB when only rows were counted. Rows are fetched FETCH_BATCH at a time.
TEMP_FILE_LIMIT_MB = 1024  # temporary disk one statement may use (options.temp_file_limit_mb)
MAX_RESULT_BYTES = 8 << 20
MAX_CELL = 8192
FETCH_BATCH = 100
RECEIVED_FACTOR = 8  # rows received, before cutting, may be this many times the budget

# Seconds past the statement timeout before the adapter cancels the statement itself (the
# engine's own timeout normally fires first), then before it drops the connection.
WATCHDOG_MARGIN = 0.15
_GRACE = 1.0


def _retrieve(task: asyncio.Future[Any]) -> None:
    """Read an abandoned call's outcome, so asyncio never logs it as unretrieved."""
    if not task.cancelled():
        task.exception()


def cut(value: Any, max_cell: int = MAX_CELL) -> Any:
    """``value``, or a ``CutValue`` of its first ``max_cell`` characters (bytes) when longer."""
    if isinstance(value, str) and len(value) > max_cell:
        # isascii() is a flag test in CPython: no copy of a 50 MB string just to measure it.
        size = len(value) if value.isascii() else len(value.encode("utf-8", "surrogatepass"))
        return CutValue(value[:max_cell], size)
    if isinstance(value, bytes | bytearray | memoryview) and len(value) > max_cell:
        return CutValue(bytes(value[:max_cell]), len(value))
    return value


def _cost(value: Any) -> int:
    """What a kept cell costs, roughly, in bytes (characters for text)."""
    if isinstance(value, str | bytes):
        return len(value) + 16
    if isinstance(value, CutValue):
        return len(value.head) + 16
    return 16 + len(str(value)) if isinstance(value, Decimal) else 16


def fetch(
    cursor: Any, max_rows: int, *, max_bytes: int = MAX_RESULT_BYTES, max_cell: int = MAX_CELL
) -> QueryResult:
    """Read at most ``max_rows`` rows (one more, to know if there are more) with
    ``fetchmany``; cells over ``max_cell`` are cut, and fetching stops once the rows kept
    reach ``max_bytes``, or the rows received (before cutting) ``RECEIVED_FACTOR`` times that
    (``QueryResult.byte_limit``). A batch is one row at first, then as many rows (up to
    ``FETCH_BATCH``) as the largest row received so far fits in the budget left: a driver
    that streams (server-side or unbuffered cursors) never holds much more than one row
    beyond the budget, whatever the rows' sizes."""
    if cursor.description is None:
        count = cursor.rowcount
        return QueryResult(columns=(), rows=(), rowcount=count if count >= 0 else None)
    columns = tuple(str(col[0]) for col in cursor.description)
    rows: list[tuple[Any, ...]] = []
    kept = received = largest = 0
    most_received = max_bytes * RECEIVED_FACTOR
    while len(rows) <= max_rows and kept <= max_bytes and received <= most_received:
        room = max_bytes - kept
        size = 1 if not largest else max(1, min(FETCH_BATCH, room // largest))
        batch = cursor.fetchmany(min(size, max_rows + 1 - len(rows)))
        if not batch:
            break
        for raw in batch:
            cost = sum(_cost(value) for value in raw)
            received += cost
            largest = max(largest, cost)
            row = tuple(cut(value, max_cell) for value in raw)
            rows.append(row)
            kept += sum(_cost(value) for value in row)
    limited = kept > max_bytes or received > most_received
    return QueryResult(
        columns=columns,
        rows=tuple(rows[:max_rows]),
        more_rows=len(rows) > max_rows or limited,
        byte_limit=max_bytes if limited else None,
    )


class ThreadedDatabase(Database):
    """A ``Database`` over a blocking DB-API driver. Connects lazily, on first use."""

    dialect_name: str = ""

    def __init__(
        self,
        alias: str,
        config: DatabaseConfig,
        *,
        mode: DatabaseMode = DatabaseMode.READONLY,
        password: str | Callable[[], str | None] | None = None,
        driver: Any = None,
        check_statements: bool = True,
    ) -> None:
        """``password`` is the password, or a function that returns it when the first
        connection is made (so a missing one fails that database's calls, not start-up).
        ``driver`` replaces the lazily imported driver module (tests pass a fake DB-API).
        ``check_statements=False`` exists only to prove the engine fence on its own."""
        self.alias = alias
        self.config = config
        self.mode = mode
        self._password_source = password
        self._driver = driver
        self._check = check_statements and mode is DatabaseMode.READONLY
        self._allowed = allowed_functions(config.options, alias=alias)
        self._conn: Any = None
        self._lock = asyncio.Lock()
        self._running: asyncio.Future[Any] | None = None

    def temp_mb(self) -> int:
        """The temporary disk space one statement may use, in MB (``TEMP_FILE_LIMIT_MB``
        unless ``options.temp_file_limit_mb`` says otherwise); ``ConfigError`` if invalid."""
        value = self.config.options.get("temp_file_limit_mb", TEMP_FILE_LIMIT_MB)
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ConfigError(
                f"databases.{self.alias}.options.temp_file_limit_mb: a whole number of "
                f"megabytes, more than 0; got {value!r}"
            )
        return value

    @property
    def _password(self) -> str | None:
        source = self._password_source
        return source() if callable(source) else source

    def problems(self) -> list[str]:
        """What would make this database's first call fail, found without connecting: a
        missing driver, an unset password variable (and, per engine, a missing file). For a
        start-up warning; an empty list promises nothing about the server."""
        found = []
        try:
            self._module()
        except RhoError as exc:  # MissingExtra: names the extra to install
            found.append(f"database {self.alias!r}: {exc}")
        try:
            self._password  # noqa: B018 - reading it runs the check of password_env
        except RhoError as exc:
            found.append(str(exc))
        return found

    @property
    def dialect(self) -> str:
        """See ``Database.dialect``."""
        return self.dialect_name

    @property
    def read_only(self) -> bool:
        """True in ``DatabaseMode.READONLY``: the check and the engine fence are both on."""
        return self.mode is DatabaseMode.READONLY

    def verdict(self, sql: str, conn: Any = None) -> Verdict:
        """Layer 1: refuse anything but one read statement (read-only mode). With ``conn``,
        judge the text as that connection's server reads it (``_settings``)."""
        settings = None if conn is None else self._settings(conn)
        available = None if conn is None else self._available_functions(conn)
        judge = check_read_only if self._check else classify
        return judge(
            sql,
            self.dialect_name,
            settings=settings,
            allowed_functions=self._allowed,
            available_functions=available,
        )

    async def query(self, sql: str, *, max_rows: int, timeout: float) -> QueryResult:
        """See ``Database.query``."""
        try:
            # Before connecting, with every reading: a refusal here holds on any server,
            # unless the server's settings change how the text reads. In a thread: the
            # check is CPU work over every token, and the event loop serves other sessions.
            await asyncio.to_thread(self.verdict, sql)
        except StatementRefused:
            if not dialect(self.dialect_name).reading_by_setting:
                raise

        def work(conn: Any) -> QueryResult:
            # Then as the connected server reads it, with the functions it builds in.
            checked = self.verdict(sql, conn)
            return self._run(conn, sql, None, checked, max_rows, timeout)

        return await self._call(work, timeout)

    async def list_tables(
        self, *, pattern: str = "%", schema: str | None = None
    ) -> tuple[TableInfo, ...]:
        """See ``Database.list_tables``."""
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
        """See ``Database.aclose``."""
        async with self._lock:
            running, self._running = self._running, None
            if running is not None and not running.done():
                # An abandoned statement: give its thread a bounded time to stop.
                await asyncio.wait({running}, timeout=_GRACE)
            conn, self._conn = self._conn, None
            if conn is not None:
                await asyncio.to_thread(self._close_quietly, conn)

    async def _call(self, work: Callable[[Any], T], timeout: float) -> T:
        async with self._lock:
            task = asyncio.ensure_future(asyncio.to_thread(self._in_thread, work))
            task.add_done_callback(_retrieve)
            self._running = task
            try:
                try:
                    return await asyncio.wait_for(asyncio.shield(task), timeout + WATCHDOG_MARGIN)
                except TimeoutError:
                    # The engine's own timeout did not fire: cancel the statement ourselves.
                    await asyncio.to_thread(self._cancel_quietly, self._conn)
                    try:
                        return await asyncio.wait_for(asyncio.shield(task), _GRACE)
                    except (StatementTimeout, TimeoutError):
                        raise
                    except RhoError as exc:  # the cancellation surfaces as a driver error
                        raise StatementTimeout(
                            f"{self.alias}: the statement did not finish within {timeout:g} s "
                            "and was cancelled"
                        ) from exc
            except asyncio.CancelledError:
                self._abandon()  # the thread may still use the connection: never reuse it
                raise
            except TimeoutError:
                self._abandon()
                raise StatementTimeout(
                    f"{self.alias}: the statement did not finish within {timeout:g} s; "
                    "the connection was dropped"
                ) from None

    def _in_thread(self, work: Callable[[Any], T]) -> T:
        with map_driver_errors(self.alias, self._error_types()):
            conn = self._conn
            if conn is None or not self._usable(conn):
                if conn is not None:
                    self._close_quietly(conn)
                self._conn = None
                conn = self._conn = self._connect()
            try:
                return work(conn)
            finally:
                if self._conn is conn:
                    self._reset_quietly(conn)

    def _reset_quietly(self, conn: Any) -> None:
        """Leave no session state for the next call; a connection that cannot be reset is
        dropped (a fresh one has no state)."""
        try:
            self._reset(conn)
        except Exception:  # noqa: BLE001 - any failure means: do not reuse this connection
            self.discard(conn)

    def _cancel_quietly(self, conn: Any) -> None:
        if conn is not None:
            with contextlib.suppress(Exception):  # best effort; the grace period follows
                self._cancel(conn)

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

    def _cancel(self, conn: Any) -> None:
        """Cancel the running statement from another thread, keeping the connection if the
        engine can; default: ``_interrupt``."""
        self._interrupt(conn)

    def _reset(self, conn: Any) -> None:
        """Clear session state a statement may have left (variables, locks, temp objects)
        after each call; default: nothing (the read-only transaction was rolled back)."""

    def _available_functions(self, conn: Any) -> frozenset[str] | None:
        """Names of the functions the server builds in (read once per connection), which
        narrow the dialect's allowlist; ``None``: unknown, the allowlist as written."""
        return None

    def _settings(self, conn: Any) -> frozenset[str] | None:
        """Server settings that change how SQL text is read (see ``Dialect.reading_for``),
        read once per connection; ``None``: unknown, every reading must pass."""
        return None

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
