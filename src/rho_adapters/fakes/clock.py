"""FakeClock: time that moves only when someone sleeps (or you call ``advance``)."""

from __future__ import annotations

import asyncio

from rho_domain.ports.clock import Clock


class FakeClock(Clock):
    """A deterministic clock.

    ``sleep(s)`` advances time by ``s`` at once and yields to the event loop, so code that
    waits (backoff, pause polling) runs instantly in tests. ``sleeps`` records every request.
    A run with a wall-time budget races each call against a sleep until its deadline, so on
    this clock time jumps to the deadline at the first model call: test wall-time limits with
    ``SystemClock`` (or a clock whose sleep waits for the other tasks).
    """

    def __init__(self, start: float = 1_750_000_000.0) -> None:
        self._now = start
        self._origin = start
        self.sleeps: list[float] = []

    def now(self) -> float:
        """See ``Clock.now``."""
        return self._now

    def monotonic(self) -> float:
        """See ``Clock.monotonic``."""
        return self._now - self._origin

    def advance(self, seconds: float) -> None:
        """Move both clocks forward by ``seconds`` (no real waiting)."""
        self._now += seconds

    async def sleep(self, seconds: float) -> None:
        """See ``Clock.sleep``."""
        self.sleeps.append(seconds)
        self._now += max(seconds, 0.0)
        await asyncio.sleep(0)
