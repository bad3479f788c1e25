"""LoopLag: the longest stall of an event loop, measured by a tiny periodic timer.

A callback is scheduled every ``interval`` seconds with ``loop.call_at``; how late it runs is
how long the loop was busy with something else (a store write, a regex, a parse on the loop
instead of in a thread). The longest delay since ``start`` (or the last ``reset``) is the
loop's longest stall, to within one interval: a stall that begins just after a tick shows
up to ``interval`` shorter. A timer, not a task: a loop closed while it runs leaves no
pending task behind, and each tick costs one callback (~10 µs), 100 a second at 10 ms.
"""

from __future__ import annotations

import asyncio

import attrs

DEFAULT_INTERVAL = 0.01  # seconds between ticks: the gauge's resolution


@attrs.frozen(kw_only=True)
class LoopLagStats:
    """What the gauge saw: ``longest_stall_seconds`` (the latest tick's delay at most),
    ``mean_stall_seconds`` over ``ticks`` ticks, and ``stalls_over_50ms`` (ticks more than
    50 ms late, the stalls a user or a health check feels)."""

    longest_stall_seconds: float
    mean_stall_seconds: float
    ticks: int
    stalls_over_50ms: int
    interval_seconds: float


class LoopLag:
    """The gauge of one event loop: ``start`` on the loop, read ``stats()`` from it, ``stop``."""

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

    @property
    def running(self) -> bool:
        """True between ``start`` and ``stop``."""
        return self._timer is not None

    def start(self) -> None:
        """Start ticking on the running loop. Idempotent while running."""
        if self._timer is not None:
            return
        self._loop = asyncio.get_running_loop()
        self._schedule(self._loop.time())

    def stop(self) -> None:
        """Stop ticking; the figures stay readable. Idempotent."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def reset(self) -> None:
        """Forget what was measured so far (e.g. before the part of a run that matters)."""
        self._longest = self._total = 0.0
        self._ticks = self._over = 0

    def stats(self) -> LoopLagStats:
        """The figures since ``start`` or the last ``reset``."""
        return LoopLagStats(
            longest_stall_seconds=self._longest,
            mean_stall_seconds=self._total / self._ticks if self._ticks else 0.0,
            ticks=self._ticks,
            stalls_over_50ms=self._over,
            interval_seconds=self._interval,
        )

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
