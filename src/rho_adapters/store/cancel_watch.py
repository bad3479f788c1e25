"""CancelWatch: one polling timer per event loop for every session waiting for a cancel file.

A ``cancel`` file is written by another process (``rho-agent monitor cancel``), so there is
nothing to wait on but the file system. Each running session used to poll on its own timer:
1,000 running sessions meant 5,000 timer wake-ups a second. Now the sessions of a loop register
their cancel path and one timer checks them all each tick (one ``stat`` per waiting session)
and wakes the ones whose file appeared. The timer is cancelled when nobody waits (a timer, not
a task, so a loop closed in between leaves nothing pending behind).

A tick checks at most ``SLICE`` paths, the next ones in turn, and the ticks come as often as a
whole pass over every waiting path needs to take ``poll`` seconds: a thousand waiting sessions
are still each checked every ``poll`` seconds, with the same number of ``stat`` calls, but never
a thousand in one turn of the loop (tens of milliseconds on a busy machine, a stall that every
session of the loop felt five times a second).
"""

from __future__ import annotations

import asyncio
import weakref
from pathlib import Path

from rho_adapters.store.sentinels import is_set

SLICE = 64
"""The most paths one tick checks."""


class CancelWatch:
    """The waiting sessions of one event loop, polled every ``poll`` seconds."""

    def __init__(self, poll: float) -> None:
        self.poll = poll
        self._waiting: dict[Path, list[asyncio.Future[None]]] = {}
        self._timer: asyncio.TimerHandle | None = None
        self._cursor = 0  # where the next tick's slice of the waiting paths begins
        self.checks = 0  # paths checked by ticks so far (tests, diagnostics)
        self.ticks = 0  # ticks so far (tests, diagnostics)

    @property
    def waiting(self) -> int:
        """How many waits are registered."""
        return sum(len(futures) for futures in self._waiting.values())

    async def wait(self, path: Path) -> None:
        """Return once ``path`` exists (at once if it does)."""
        # One stat in the session's own directory: cheaper than a worker-thread hop.
        if is_set(path):
            return
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        self._waiting.setdefault(path, []).append(future)
        if self._timer is None:
            self._timer = loop.call_later(self.poll, self._tick)
        try:
            await future
        finally:
            futures = self._waiting.get(path)
            if futures is not None and future in futures:
                futures.remove(future)
                if not futures:
                    del self._waiting[path]
            if not self._waiting and self._timer is not None:
                self._timer.cancel()
                self._timer = None

    @property
    def ticking(self) -> bool:
        """Whether the polling timer is scheduled."""
        return self._timer is not None

    def _tick(self) -> None:
        paths = list(self._waiting)
        count = len(paths)
        start = self._cursor % count if count else 0
        chosen = (paths[start:] + paths[:start])[:SLICE]
        self._cursor = start + len(chosen)
        self.checks += len(chosen)
        self.ticks += 1
        for path in chosen:
            if is_set(path):
                for future in self._waiting.pop(path):
                    if not future.done():
                        future.set_result(None)
        loop = asyncio.get_running_loop()
        # A whole pass over the paths takes ``poll`` seconds, in ticks of SLICE at most.
        delay = self.poll * min(1.0, SLICE / count) if count else self.poll
        self._timer = loop.call_later(delay, self._tick) if self._waiting else None


_WATCHES: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[float, CancelWatch]] = (
    weakref.WeakKeyDictionary()
)


def cancel_watch(poll: float) -> CancelWatch:
    """The running loop's watch for this poll interval (made on first use)."""
    by_poll = _WATCHES.setdefault(asyncio.get_running_loop(), {})
    watch = by_poll.get(poll)
    if watch is None:
        watch = by_poll[poll] = CancelWatch(poll)
    return watch
