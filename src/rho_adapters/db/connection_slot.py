"""One database's reused connection: one call at a time, in a thread, under a deadline.

``ThreadedDatabase`` holds one ``ConnectionSlot`` and gives it the engine's hooks as
callables (connect, usable, reset, cancel, interrupt, the driver's error types), so an
engine's overrides hold. ``call`` takes the lock that keeps one statement per connection at a
time, connects lazily (again when the connection is not ``usable``), runs the work in a
thread with the driver's errors mapped, and resets the connection after each call; a
connection that cannot be reset is dropped.

The deadline: each engine enforces the statement timeout itself. If the call is still
running ``WATCHDOG_MARGIN`` seconds after the timeout (a long single step, several round
trips), the slot cancels the statement through the engine (``cancel``), and ``GRACE`` later
drops the connection (``interrupt``). An abandoned thread's result is always retrieved, so
nothing is logged later as "Task exception was never retrieved".
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from rho_adapters.db.errors import StatementTimeout, map_driver_errors
from rho_domain.errors import RhoError

T = TypeVar("T")

# Seconds past the statement timeout before the adapter cancels the statement itself (the
# engine's own timeout normally fires first), then before it drops the connection.
WATCHDOG_MARGIN = 0.15
GRACE = 1.0


def _retrieve(task: asyncio.Future[Any]) -> None:
    """Read an abandoned call's outcome, so asyncio never logs it as unretrieved."""
    if not task.cancelled():
        task.exception()


def close_quietly(conn: Any) -> None:
    """Close ``conn``; a failure to close is ignored (the connection is dropped anyway)."""
    with contextlib.suppress(Exception):  # closing a broken connection may fail too
        conn.close()


class ConnectionSlot:
    """The connection of the database ``alias`` (``conn``: None until the first call, and
    after one is dropped), used by one call at a time."""

    def __init__(
        self,
        alias: str,
        *,
        connect: Callable[[], Any],
        usable: Callable[[Any], bool],
        reset: Callable[[Any], None],
        cancel: Callable[[Any], None],
        interrupt: Callable[[Any], None],
        error_types: Callable[[], tuple[type[Exception], ...]],
        secrets: Callable[[], Iterable[str]] = tuple,
    ) -> None:
        """``secrets()``: the text no driver error may show (see ``map_driver_errors``)."""
        self.alias = alias
        self.secrets = secrets
        self.connect, self.usable, self.reset = connect, usable, reset
        self.cancel, self.interrupt, self.error_types = cancel, interrupt, error_types
        self.conn: Any = None
        self._lock = asyncio.Lock()
        self._running: asyncio.Future[Any] | None = None

    async def aclose(self) -> None:
        """Wait a bounded time (``GRACE``) for an abandoned statement's thread, then close
        the connection."""
        async with self._lock:
            running, self._running = self._running, None
            if running is not None and not running.done():
                # An abandoned statement: give its thread a bounded time to stop.
                await asyncio.wait({running}, timeout=GRACE)
            conn, self.conn = self.conn, None
            if conn is not None:
                await asyncio.to_thread(close_quietly, conn)

    async def call(self, work: Callable[[Any], T], timeout: float) -> T:
        """``work(connection)`` in a thread, alone on the connection; ``StatementTimeout``
        when it outlives ``timeout`` and the margins (its connection then dropped)."""
        async with self._lock:
            late = threading.Event()  # the deadline passed: work not begun must not begin
            task = asyncio.ensure_future(asyncio.to_thread(self._in_thread, work, late, timeout))
            task.add_done_callback(_retrieve)
            self._running = task
            try:
                try:
                    return await asyncio.wait_for(asyncio.shield(task), timeout + WATCHDOG_MARGIN)
                except TimeoutError:
                    # The engine's own timeout did not fire: cancel the statement ourselves.
                    # ``late`` first: a connection still being made when the deadline passed
                    # (its thread sets ``self.conn`` only then) starts no statement after it,
                    # one no cancel reaches (it ran on until the engine's own timeout)
                    late.set()
                    await asyncio.to_thread(self._cancel_quietly, self.conn)
                    try:
                        return await asyncio.wait_for(asyncio.shield(task), GRACE)
                    except (StatementTimeout, TimeoutError):
                        raise
                    except RhoError as exc:  # the cancellation surfaces as a driver error
                        raise StatementTimeout(
                            f"{self.alias}: the statement timed out after {timeout:g} s and was "
                            "cancelled"
                        ) from exc
            except asyncio.CancelledError:
                self._abandon()  # the thread may still use the connection: never reuse it
                raise
            except TimeoutError:
                self._abandon()
                raise StatementTimeout(
                    f"{self.alias}: the statement timed out after {timeout:g} s; the "
                    "connection was dropped"
                ) from None

    def _in_thread(self, work: Callable[[Any], T], late: threading.Event, timeout: float) -> T:
        with map_driver_errors(self.alias, self.error_types(), self.secrets):
            conn = self.conn
            if conn is None or not self.usable(conn):
                if conn is not None:
                    close_quietly(conn)
                self.conn = None
                conn = self.conn = self.connect()
            if late.is_set():  # after ``self.conn`` is set: the watchdog reads it after ``late``
                raise StatementTimeout(
                    f"{self.alias}: the statement timed out after {timeout:g} s while its "
                    "connection was being made, and was not run"
                )
            try:
                return work(conn)
            finally:
                if self.conn is conn:
                    self._reset_quietly(conn)

    def _reset_quietly(self, conn: Any) -> None:
        """Leave no session state for the next call; a connection that cannot be reset is
        dropped (a fresh one has no state)."""
        try:
            self.reset(conn)
        except Exception:  # noqa: BLE001 - any failure means: do not reuse this connection
            self.discard(conn)

    def _cancel_quietly(self, conn: Any) -> None:
        if conn is not None:
            with contextlib.suppress(Exception):  # best effort; the grace period follows
                self.cancel(conn)

    def _abandon(self) -> None:
        """Interrupt a stuck statement and forget its connection (never reused)."""
        conn, self.conn = self.conn, None
        if conn is not None:
            # Best effort: the connection is being dropped whatever happens.
            with contextlib.suppress(Exception):
                self.interrupt(conn)

    def discard(self, conn: Any) -> None:
        """Close and forget ``conn`` (after a truncated streaming result or a failure)."""
        if self.conn is conn:
            self.conn = None
        close_quietly(conn)
