"""InFlightGate: a first-come, first-served bound on requests in flight to one endpoint.

httpcore assigns queued requests to connections in time that grows with queued requests x
connections; with 1,000 sessions calling one endpoint at once the event loop stalled for tens
of seconds inside that assignment. The gate keeps the queue in front of httpx instead: at most
``limit`` requests hold a slot, the rest wait in arrival order (a freed slot is handed to the
oldest waiter directly, so a newcomer cannot overtake it), and every wait is measured.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # built when asked (pool_stats.py)
    from rho_adapters.model.pool_stats import GateStats


class InFlightGate:
    """At most ``limit`` holders at a time; waiters are served FIFO. One event loop only."""

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError(f"the in-flight limit must be at least 1, got {limit}")
        self._limit = limit
        self._in_flight = 0
        self._waiters: collections.deque[asyncio.Future[None]] = collections.deque()
        self._requests = 0
        self._waited = 0
        self._wait_seconds = 0.0
        self._max_wait = 0.0

    @property
    def limit(self) -> int:
        """The most requests in flight at once."""
        return self._limit

    def set_limit(self, limit: int) -> None:
        """Change the bound; a higher one admits waiters at once, a lower one takes effect
        as requests finish."""
        if limit < 1:
            raise ValueError(f"the in-flight limit must be at least 1, got {limit}")
        self._limit = limit
        while self._waiters and self._in_flight < self._limit:
            if self._wake_next():
                self._in_flight += 1

    def stats(self) -> GateStats:
        """The counters (see ``GateStats``)."""
        from rho_adapters.model.pool_stats import GateStats

        return GateStats(
            limit=self._limit,
            in_flight=self._in_flight,
            queued=sum(1 for w in self._waiters if not w.done()),
            requests=self._requests,
            waited=self._waited,
            wait_seconds=self._wait_seconds,
            max_wait_seconds=self._max_wait,
        )

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[float]:
        """Hold one slot for the body of the ``async with``; yields the seconds spent
        queueing (0.0 when a slot was free). Cancellation while queued gives up the place."""
        waited = await self._acquire()
        try:
            yield waited
        finally:
            self._release()

    async def _acquire(self) -> float:
        self._requests += 1
        if self._in_flight < self._limit and not self._waiters:
            self._in_flight += 1
            return 0.0
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        started = time.monotonic()
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self._release()  # the slot was already handed over: pass it on
            else:
                with contextlib.suppress(ValueError):  # already skipped by a release
                    self._waiters.remove(waiter)
            raise
        waited = time.monotonic() - started
        self._waited += 1
        self._wait_seconds += waited
        self._max_wait = max(self._max_wait, waited)
        return waited

    def _release(self) -> None:
        # Hand the slot straight to the oldest waiter: the in-flight count does not change.
        if self._in_flight <= self._limit and self._wake_next():
            return
        self._in_flight -= 1

    def _wake_next(self) -> bool:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return True
        return False
