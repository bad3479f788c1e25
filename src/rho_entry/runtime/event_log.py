"""EventLog: one handle's events, replayable from the start by any number of late readers.

Every reader (``follow()``) walks the same list with its own cursor, a sequence number, so a
reader that joins late replays everything from the start and then continues live, with no
gap and no duplicate, and N readers cost N cursors, not N copies.

Memory stays bounded by the conversation itself: persistent events reference the same message
objects the session's State holds, and the streamed fragments (text, reasoning and tool-call
deltas) are kept only for the model call in progress. When the call ends (``llm_end``), its
fragments are dropped: the assistant ``message`` event carries their full text. A reader that
is behind at that moment skips those fragments but still receives every persistent event, in
order; a reader that keeps up sees every fragment.

The numbers and the events are two parallel lists, not a list of ``(number, event)`` pairs:
a pair holding an event is one more object the garbage collector tracks and walks at each
full pass, per event of every handle a service keeps (issue 33: 1,000 handles).
"""

from __future__ import annotations

import asyncio
from bisect import bisect_left
from collections.abc import AsyncIterator

from rho_domain import events as ev


class EventLog:
    """Append-only (but for finished calls' fragments) log with async readers."""

    def __init__(self) -> None:
        self._numbers: list[int] = []  # ascending; _numbers[i] is _events[i]'s number
        self._events: list[ev.Event] = []
        self._next = 0
        self._first_fragment: int | None = None
        self._closed = False
        self._wakeup: asyncio.Future[None] | None = None

    @property
    def closed(self) -> bool:
        """True once ``close`` was called: readers end after the last entry."""
        return self._closed

    def __len__(self) -> int:
        return len(self._events)

    def append(self, event: ev.Event) -> None:
        """Add ``event`` (a session listener: synchronous, never blocks the run)."""
        if self._closed:
            return
        if not ev.is_persistent(event) and self._first_fragment is None:
            self._first_fragment = len(self._events)
        self._numbers.append(self._next)
        self._events.append(event)
        self._next += 1
        if isinstance(event, ev.LLMEnded):
            self._drop_fragments()
        self._wake()

    def close(self) -> None:
        """No more events: readers finish once they reach the end. Idempotent."""
        self._closed = True
        self._wake()

    async def follow(self) -> AsyncIterator[ev.Event]:
        """Every event from the start, then live ones, until the log is closed."""
        cursor = 0
        while True:
            index = bisect_left(self._numbers, cursor)
            if index < len(self._events):
                cursor = self._numbers[index] + 1
                yield self._events[index]
            elif self._closed:
                return
            else:
                await asyncio.shield(self._changed())  # one reader leaving never wakes the rest

    def _drop_fragments(self) -> None:
        start = self._first_fragment
        if start is None:
            return
        kept = [i for i in range(start, len(self._events)) if ev.is_persistent(self._events[i])]
        self._numbers[start:] = [self._numbers[i] for i in kept]
        self._events[start:] = [self._events[i] for i in kept]
        self._first_fragment = None

    def _changed(self) -> asyncio.Future[None]:
        if self._wakeup is None or self._wakeup.done():
            self._wakeup = asyncio.get_running_loop().create_future()
        return self._wakeup

    def _wake(self) -> None:
        if self._wakeup is not None and not self._wakeup.done():
            self._wakeup.set_result(None)
        self._wakeup = None
