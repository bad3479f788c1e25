"""Clock: time, as a port, so that limits and timeouts test deterministically."""

from __future__ import annotations

from abc import abstractmethod
from typing import Protocol


class Clock(Protocol):
    """Wall time, monotonic time and sleeping."""

    @abstractmethod
    def now(self) -> float:
        """Seconds since the Unix epoch (UTC), for timestamps."""

    @abstractmethod
    def monotonic(self) -> float:
        """Seconds from an arbitrary origin that never goes backwards, for durations."""

    @abstractmethod
    async def sleep(self, seconds: float) -> None:
        """Wait ``seconds``. Cancellable. A fake clock advances its time instead of waiting."""
