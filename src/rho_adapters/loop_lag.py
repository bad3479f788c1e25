"""LoopLag: the longest stall of an event loop, measured by a tiny periodic timer.

A callback is scheduled every ``interval`` seconds with ``loop.call_at``; how late it runs is
how long the loop was busy with something else (a store write, a regex, a parse on the loop
instead of in a thread). The longest delay since ``start`` (or the last ``reset``) is the
loop's longest stall, to within one interval: a stall that begins just after a tick shows
up to ``interval`` shorter. A timer, not a task: a loop closed while it runs leaves no
pending task behind, and each tick costs one callback (~10 µs), 100 a second at 10 ms.

Beside it, the garbage collector's pauses over the same time (``gc.callbacks``): a
collection in any thread of the process holds the interpreter, so the loop waits through it;
a stall as long as the longest collection was (at least partly) the collector's, a longer one
the loop's own work or the machine.
"""

from __future__ import annotations

import asyncio
import gc
import time
from typing import Any

import attrs

from rho_domain.value_methods import value_eq, value_hash, value_repr

DEFAULT_INTERVAL = 0.01  # seconds between ticks: the gauge's resolution
_OLDEST = len(gc.get_count()) - 1  # the generation a full collection collects


@attrs.frozen(kw_only=True)
class LoopLagStats:
    """What the gauge saw: ``longest_stall_seconds`` (the latest tick's delay at most),
    ``mean_stall_seconds`` over ``ticks`` ticks, and ``stalls_over_50ms`` (ticks more than
    50 ms late, the stalls a user or a health check feels); and the garbage collector's
    pauses over the same time."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    longest_stall_seconds: float
    mean_stall_seconds: float
    ticks: int
    stalls_over_50ms: int
    interval_seconds: float
    collector_seconds: float = 0.0
    """Time the garbage collector held the process, every collection in any thread."""
    longest_collection_seconds: float = 0.0
    """The longest single collection."""
    full_collections: int = 0
    """Collections of the oldest generation: those that walk every object tracked."""


class LoopLag:
    """The gauge of one event loop: ``start`` on the loop, read ``stats()`` from it, ``stop``
    (which also takes its hook out of ``gc.callbacks``)."""

    def __init__(self, interval: float = DEFAULT_INTERVAL) -> None:
        if interval <= 0:
            raise ValueError(f"LoopLag interval must be positive, not {interval!r}")
        self._interval = interval
        self._loop: asyncio.AbstractEventLoop | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._due = 0.0
        self._longest = 0.0
        self._total = 0.0
        self._ticks = 0
        self._over = 0
        self._collecting_since = 0.0
        self._collector = 0.0
        self._longest_collection = 0.0
        self._full = 0

    @property
    def running(self) -> bool:
        """True between ``start`` and ``stop``."""
        return self._timer is not None

    def start(self) -> None:
        """Start ticking on the running loop, and timing the collector. Idempotent while
        running."""
        if self._timer is not None:
            return
        self._loop = asyncio.get_running_loop()
        self._schedule(self._loop.time())
        gc.callbacks.append(self._collected)

    def stop(self) -> None:
        """Stop ticking and timing the collector; the figures stay readable. Idempotent."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
            gc.callbacks.remove(self._collected)

    def reset(self) -> None:
        """Forget what was measured so far (e.g. before the part of a run that matters)."""
        self._longest = self._total = 0.0
        self._ticks = self._over = 0
        self._collector = self._longest_collection = 0.0
        self._full = 0

    def stats(self) -> LoopLagStats:
        """The figures since ``start`` or the last ``reset``."""
        return LoopLagStats(
            longest_stall_seconds=self._longest,
            mean_stall_seconds=self._total / self._ticks if self._ticks else 0.0,
            ticks=self._ticks,
            stalls_over_50ms=self._over,
            interval_seconds=self._interval,
            collector_seconds=self._collector,
            longest_collection_seconds=self._longest_collection,
            full_collections=self._full,
        )

    def _collected(self, phase: str, info: dict[str, Any]) -> None:
        # called by the collector before and after each collection, in the thread it runs in
        if phase == "start":
            self._collecting_since = time.perf_counter()
            return
        paused = time.perf_counter() - self._collecting_since
        self._collector += paused
        self._longest_collection = max(self._longest_collection, paused)
        if info.get("generation") == _OLDEST:
            self._full += 1

    def _schedule(self, now: float) -> None:
        assert self._loop is not None
        self._due = now + self._interval
        self._timer = self._loop.call_at(self._due, self._tick)

    def _tick(self) -> None:
        assert self._loop is not None
        now = self._loop.time()
        late = max(now - self._due, 0.0)
        self._longest = max(self._longest, late)
        self._total += late
        self._ticks += 1
        if late > 0.05:
            self._over += 1
        self._schedule(now)
