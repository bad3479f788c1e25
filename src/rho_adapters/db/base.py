"""The shared shape of every database adapter: one reused connection, calls in a thread.

``ThreadedDatabase`` implements the ``Database`` port once. An engine subclass says how to
connect, how to check a connection before reuse, how to run one statement inside the
engine's read-only transaction (``_run``) and how to leave no session state behind
(``_reset``); the base handles the statement check (layer 1, for the server's settings and
the alias's allowed functions); its ``ConnectionSlot`` (``db/connection_slot.py``) the lock
that keeps one statement per connection at a time, the thread hop, and the deadline.

The deadline: each engine enforces the statement timeout itself (SQLite progress handler,
``statement_timeout``, ``max_statement_time``, ``call_timeout``, ``RUNTIMECAP``). If the
call is still running ``WATCHDOG_MARGIN`` seconds after the timeout (a long single step,
several round trips), the slot cancels the statement through the engine (``_cancel``), and
``GRACE`` later drops the connection (``_interrupt``).
"""

from __future__ import annotations

import asyncio
import contextlib
from abc import abstractmethod
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from rho_adapters.db.connection_slot import ConnectionSlot, close_quietly
from rho_adapters.db.errors import connect_failure, dsn_passwords
from rho_domain.config import DatabaseConfig
from rho_domain.errors import ConfigError, RhoError, StatementRefused
from rho_domain.permissions import DatabaseMode
from rho_domain.ports.database import Database, QueryResult, TableInfo
from rho_domain.secrets import DEFAULT_POLICY, SecretPolicy
from rho_domain.sql import (
    CatalogCalls,
    Verdict,
    allowed_functions,
    check_read_only,
    classify,
    dialect,
)

TEMP_FILE_LIMIT_MB = 1024  # temporary disk one statement may use (options.temp_file_limit_mb)


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
        hidden: Sequence[str] = (),
        environ: Mapping[str, str] | None = None,
        file_policy: SecretPolicy = DEFAULT_POLICY,
    ) -> None:
        """``password`` is the password, or a function that returns it when the first
        connection is made (so a missing one fails that database's calls, not start-up).
        ``driver`` replaces the lazily imported driver module (tests pass a fake DB-API).
        ``check_statements=False`` exists only to prove the engine fence on its own.
        ``hidden``: more text no error may show (the values of the dsn's ``${VAR}``s).
        ``environ``: the environment the driver would read by itself where the adapter
        replaces what it reads (PostgreSQL's ``PGOPTIONS``), given by the wiring; none when
        omitted (the entry layer alone reads the process's). ``file_policy``: the secrets
        policy a file the adapter opens on this machine (SQLite's) is judged by, the local
        executor's (its homes, the agent's own directories), given by the wiring."""
        self.alias = alias
        self.config = config
        self.mode = mode
        self._password_source = password
        self._driver = driver
        self._check = check_statements and mode is DatabaseMode.READONLY
        self._allowed = allowed_functions(config.options, alias=alias)
        self._hidden = tuple(hidden)
        self.environ: Mapping[str, str] = {} if environ is None else environ
        self.file_policy = file_policy
        # The engine's hooks, bound here: a subclass's overrides are the ones called.
        self.slot = ConnectionSlot(
            alias,
            connect=self._connect,
            usable=self._usable,
            reset=self._reset,
            cancel=self._cancel,
            interrupt=self._interrupt,
            error_types=self._error_types,
            secrets=self._secrets,
        )

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

    def _secrets(self) -> list[str]:
        """What a driver's error may quote and must not show: the password, the dsn's."""
        found = [*self._hidden, *dsn_passwords(self.config.dsn or "")]
        with contextlib.suppress(RhoError):  # an unset password_env: no password to hide
            found.append(self._password or "")
        return found

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
            # Only refusals come of the catalog: with the check off (read-write mode) it
            # is not read (MariaDB: a statement over information_schema before each one).
            catalog_calls=None if conn is None or not self._check else self._catalog_calls(conn),
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

        return await self.slot.call(work, timeout)

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
        return await self.slot.call(
            lambda conn: self._run(conn, sql, params, verdict, max_rows, timeout), timeout
        )

    async def aclose(self) -> None:
        """See ``Database.aclose``."""
        await self.slot.aclose()

    def discard(self, conn: Any) -> None:
        """Close and forget ``conn`` (after a truncated streaming result or a failure)."""
        self.slot.discard(conn)

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

    def _catalog_calls(self, conn: Any) -> CatalogCalls | None:
        """The server's operators and types that run functions without a call in the text
        (read once per connection); ``None``: none known."""
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

    def _connect(self) -> Any:
        """A new connection, opened (``_open``) and prepared (``_prepare``); one whose
        preparation fails is closed, not dropped: nothing else holds it, and the driver's
        connection would stay open until garbage-collected (psycopg's ResourceWarning)."""
        failures: tuple[type[BaseException], ...] = (*self._error_types(), OSError)
        try:
            conn = self._open()
        except failures as exc:
            secrets = self._secrets()
            raise connect_failure(self.alias, exc, secrets, self.config.password_env) from exc
        try:
            self._prepare(conn)
        except BaseException:
            close_quietly(conn)
            raise
        return conn

    @abstractmethod
    def _open(self) -> Any:
        """Open a new connection with the engine-level read-only settings (blocking)."""

    def _prepare(self, conn: Any) -> None:
        """Read what the adapter needs of a new connection and set its session (blocking);
        default: nothing."""

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
