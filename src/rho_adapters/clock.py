"""SystemClock: the real clock."""

from __future__ import annotations

import asyncio
import time

from rho_domain.ports.clock import Clock


class SystemClock(Clock):
    """Wall time from ``time.time``, durations from ``time.monotonic``."""

    def now(self) -> float:
        """See ``Clock.now``."""
        return time.time()

    def monotonic(self) -> float:
        """See ``Clock.monotonic``."""
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        """See ``Clock.sleep``."""
        await asyncio.sleep(seconds)


SYSTEM_CLOCK = SystemClock()
"""The process's one real clock (it holds nothing): each session the wiring built made its own,
and with it the guard a session keeps of its clock (``loop.guarded_clock``), one more object
per session for every collection to walk."""
