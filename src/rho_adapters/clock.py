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
