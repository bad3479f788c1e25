"""TraceFeed: one session's events for any number of stream subscribers, from its trace.

The trace (the session's persisted lines, read through the store's ``SessionCatalog``: a
``trace.jsonl`` file, PostgreSQL rows) is the source of truth, so the feed publishes its lines,
each with its line number as ``seq`` (1 for the first line): a subscriber that reconnects after
line N reads lines N+1.. from the store and then continues live, with no gap and no duplicate,
whether the session runs in this server, ran before a restart, or is driven by ``rho-agent``
in another terminal or on another host. Streamed deltas (text, reasoning, tool-call fragments)
are never in the trace: they are published as they are announced, without a ``seq``, between
the lines they came between.

The run's events (``on_event``, from the server's pump) drive the feed while a run is here: the
journal persists an event before it announces it, so when a persisted event arrives its line
is in the store, and the feed publishes the stored lines up to it (with any line persisted
without an announcement, such as an approval answered here). Lines another process wrote are
fetched on a timer by subscribers (``poll``: one read of the store a period for all of them,
however many there are). A line is published once: ``seq`` only grows.

A subscriber that falls ``buffer`` items behind is dropped (``overflowed``); its stream ends and
the client reconnects with Last-Event-ID: memory stays bounded and nothing is lost.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import math
from collections import deque
from typing import Any

import attrs

from rho_adapters.codec import encode_event_line, event_to_dict
from rho_domain import events as ev
from rho_domain.ports.session_control import SessionCatalog
from rho_domain.value_methods import value_eq, value_hash, value_repr

log = logging.getLogger("rho_entry.server")


@attrs.frozen
class FeedItem:
    """One thing to send: a trace line (``seq`` set) or a delta (``seq`` None); an item with
    an empty ``kind`` only wakes the subscriber (a run ended: time to check for idleness)."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    seq: int | None
    kind: str
    data: str


WAKE = FeedItem(None, "", "")
END = FeedItem(None, "", "end")


class Subscription:
    """A subscriber's queue. ``overflowed`` is set when it fell too far behind."""

    def __init__(self, size: int) -> None:
        self.queue: asyncio.Queue[FeedItem] = asyncio.Queue(maxsize=size)
        self.overflowed = False


class TraceFeed:
    """The published lines and deltas of one session (see the module docstring)."""

    def __init__(self, catalog: SessionCatalog, session_id: str, *, buffer: int = 10_000) -> None:
        self.seq = 0  # lines published so far (the last line's number)
        self._catalog = catalog
        self._id = session_id
        self._buffer = buffer
        self._subscribers: set[Subscription] = set()
        self._pending: deque[ev.Event] = deque()  # a run's events not yet published
        self._worker: asyncio.Task[None] | None = None
        self._polling: asyncio.Task[None] | None = None  # the subscribers' read in progress
        self._polled_at = float("-inf")  # when it started (the loop's clock)

    async def start(self) -> TraceFeed:
        """Begin after the lines already stored (they are read by ``replay``)."""
        self.seq = await self._catalog.last_seq(self._id)
        return self

    @property
    def subscribers(self) -> int:
        """How many subscribers are attached."""
        return len(self._subscribers)

    def subscribe(self) -> Subscription:
        """A new subscription; it receives everything published after ``seq`` as it is now."""
        subscription = Subscription(self._buffer)
        self._subscribers.add(subscription)
        return subscription

    def unsubscribe(self, subscription: Subscription) -> None:
        """Detach a subscription. Idempotent."""
        self._subscribers.discard(subscription)

    async def replay(self, after: int, upto: int) -> list[FeedItem]:
        """Stored lines ``after+1 .. upto``."""
        if upto <= after:
            return []
        lines = await self._catalog.trace(self._id, after=after)
        return [_parse(line.seq, line.data)[0] for line in lines if line.seq <= upto]

    def on_event(self, event: ev.Event) -> None:
        """The run's events, in order: queued at once (the pump must keep up with the
        handle's log, which drops a finished call's deltas) and published by one worker
        task in the same order: a persisted event as the store holds it, with the lines
        stored before it (an approval answered here is persisted without being announced),
        up to its own line and no further (the deltas after it come before the next line);
        a delta as it is."""
        self._pending.append(event)
        if self._worker is None or self._worker.done():
            self._worker = asyncio.get_running_loop().create_task(self._publish_pending())

    @property
    def busy(self) -> bool:
        """Events of a run here are still being published."""
        return bool(self._pending) or (self._worker is not None and not self._worker.done())

    async def _publish_pending(self) -> None:
        while self._pending:
            event = self._pending.popleft()
            if not ev.is_persistent(event):
                self.announce(event)
                continue
            try:
                await self.refresh(until=encode_event_line(event).rstrip(b"\n"))
            except Exception:  # subscribers' polls read the store again
                log.warning("publishing a line of session %s failed", self._id, exc_info=True)

    def announce(self, event: ev.Event) -> None:
        """Publish an event that is not in the trace (a delta, or a run that could not start
        so nothing was written), without a ``seq``: a reader sees it once, live."""
        data = json.dumps(event_to_dict(event), ensure_ascii=False, separators=(",", ":"))
        self._publish(FeedItem(None, event.kind, data))

    def close(self) -> None:
        """End every subscriber's stream (the session was closed)."""
        self._publish(END)
        self._subscribers.clear()
        self._pending.clear()
        if self._worker is not None:
            self._worker.cancel()

    def wake(self) -> None:
        """Wake every subscriber (a run ended, the session closed)."""
        self._publish(WAKE)

    async def refresh(self, *, until: bytes | None = None) -> None:
        """Publish the lines stored after ``seq`` (up to the line ``until``, when given). A
        trace that no longer has line ``seq`` (a repair set unreadable lines aside) is counted
        again: the feed goes on from its end. Read from after line ``seq``, and counted only
        when nothing follows it: read from line ``seq`` itself, a last line of 300 MB was
        read again at every poll (0.86 s of CPU each, on the event loop)."""
        seen = self.seq
        lines = await self._catalog.trace(self._id, after=seen)
        if seen and not lines:
            self.seq = min(seen, await self._catalog.last_seq(self._id))
            return
        for line in lines:
            if line.seq > self.seq:  # a concurrent refresh may have published it
                self.seq = line.seq
                self._publish(_parse(line.seq, line.data)[0])
                if line.data == until:
                    return

    async def poll(self, every: float) -> None:
        """``refresh`` for a subscriber's timer: each subscriber polled the store on its own
        (100 streams of one session: 100 reads a period). Now they share: a poll while a read
        is in progress waits for it, and one within half a period of the last read's start
        reads nothing (that read, or the next, publishes what it would find): at most two
        reads a period, however many subscribers."""
        loop = asyncio.get_running_loop()
        if self._polling is None or self._polling.done():
            if loop.time() - self._polled_at < every / 2:
                return
            self._polled_at = loop.time()
            self._polling = loop.create_task(self.refresh())
        # shielded: a subscriber that leaves does not cancel the others' read
        await asyncio.shield(self._polling)

    def _publish(self, item: FeedItem) -> None:
        for subscription in tuple(self._subscribers):
            try:
                subscription.queue.put_nowait(item)
            except asyncio.QueueFull:
                subscription.overflowed = True
                self._subscribers.discard(subscription)


@functools.cache
def _kinds() -> frozenset[str]:
    """Every trace event's kind (the union of every event, built on the first line read)."""
    return frozenset(ev.EVENTS_BY_KIND)


def _parse(seq: int, line: bytes) -> tuple[FeedItem, float | None]:
    """The item for trace line ``seq`` (its JSON with ``seq`` added first), and its time."""
    text = line.decode("utf-8", errors="replace")
    try:
        # NaN and Infinity are no JSON: sent on, a browser's JSON.parse refused the line
        data: Any = json.loads(text, parse_constant=_no_constant)
    except (ValueError, RecursionError):  # nested too deep to decode: unreadable too
        data = None
    kind = data.get("kind") if isinstance(data, dict) else None
    # The kind becomes the SSE ``event:`` line and the text the ``data:`` line: only a trace
    # event's own kind, and no CR (a line break to SSE; the store never writes one raw), so a
    # stored line frames nothing of its own (a forged ``id:``, ``closed``, a split ``data:``).
    if kind not in _kinds() or "\r" in text or not text.startswith("{"):
        # an unreadable line keeps its number (ids stay line numbers) but says what it is
        unreadable = json.dumps({"seq": seq, "kind": "unreadable"})
        return FeedItem(seq, "unreadable", unreadable), None
    at = data.get("at")
    body = text[1:].lstrip()
    joined = f'{{"seq":{seq},{body}' if body != "}" else f'{{"seq":{seq}}}'
    return FeedItem(seq, kind, joined), at if isinstance(at, int | float) and math.isfinite(
        at
    ) else None


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")
