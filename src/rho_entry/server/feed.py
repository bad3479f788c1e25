"""TraceFeed: one session's events for any number of stream subscribers, from its trace.

The trace (``trace.jsonl``) is the source of truth, so the feed publishes its lines, each with
its line number as ``seq`` (1 for the first line): a subscriber that reconnects after line N
reads lines N+1.. from the file and then continues live, with no gap and no duplicate, whether
the session runs in this server, ran before a restart, or is driven by ``rho-agent`` in another
terminal. Streamed deltas (text, reasoning, tool-call fragments) are never in the trace: they
are published as they are announced, without a ``seq``, between the lines they came between.

The session's listener (``on_event``) drives the feed: the journal persists an event before it
announces it, so when a persisted event is announced its line is in the file and is published
then. For a session driven by another process, subscribers call ``pull`` on a timer.

A subscriber that falls ``buffer`` items behind is dropped (``overflowed``); its stream ends and
the client reconnects with Last-Event-ID: memory stays bounded and nothing is lost.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs

from rho_adapters.codec import encode_event_line, event_to_dict
from rho_adapters.store.confined import open_file, read_bytes
from rho_domain import events as ev
from rho_domain.ports.session_control import SessionCatalog


@attrs.frozen
class FeedItem:
    """One thing to send: a trace line (``seq`` set) or a delta (``seq`` None); an item with
    an empty ``kind`` only wakes the subscriber (a run ended: time to check for idleness)."""

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

    def __init__(self, trace: Path, *, buffer: int = 10_000) -> None:
        self.trace = trace
        self.seq = 0  # lines published so far (the last line's number)
        self._offset = 0  # bytes of the file consumed (always at a line boundary)
        self._buffer = buffer
        self._subscribers: set[Subscription] = set()

    async def start(self) -> TraceFeed:
        """Begin after the lines already in the trace (they are read by ``replay``)."""
        self._offset, self.seq = await asyncio.to_thread(_count_lines, self.trace)
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
        """Trace lines ``after+1 .. upto`` from the file (read in a worker thread)."""
        if upto <= after:
            return []
        lines = await asyncio.to_thread(_read_lines, self.trace, after, upto)
        return [_parse(after + 1 + i, line)[0] for i, line in enumerate(lines)]

    def on_event(self, event: ev.Event) -> None:
        """The session's listener: publish a persisted event's line (and any line before it
        not yet published), or a delta as it is."""
        if ev.is_persistent(event):
            self.pull(until=(event.kind, event.at))
        else:
            data = json.dumps(event_to_dict(event), ensure_ascii=False, separators=(",", ":"))
            self._publish(FeedItem(None, event.kind, data))

    def announce(self, event: ev.Event) -> None:
        """Publish an event that is not in the trace (a run that could not start, so nothing
        was written), without a ``seq``, as a delta is: a reader sees it once, live."""
        data = json.dumps(event_to_dict(event), ensure_ascii=False, separators=(",", ":"))
        self._publish(FeedItem(None, event.kind, data))

    def close(self) -> None:
        """End every subscriber's stream (the session was closed)."""
        self._publish(END)
        self._subscribers.clear()

    def wake(self) -> None:
        """Wake every subscriber (a run ended, the session closed)."""
        self._publish(WAKE)

    async def refresh(self) -> None:
        """Publish what the trace gained since the last look (lines another process wrote)."""
        self.pull()

    def pull(self, *, until: tuple[str, float] | None = None) -> int:
        """Publish complete lines the file gained since the last pull (up to and including
        the line of event ``until``, given as kind and time). Returns how many."""
        try:
            with open_file(self.trace, "rb") as handle:  # never through a link
                size = handle.seek(0, 2)
                if size < self._offset:  # rewritten shorter (a repair on open): start over
                    self._offset, self.seq = _count_lines(self.trace)
                    return 0
                handle.seek(self._offset)
                data = handle.read(size - self._offset)
        except FileNotFoundError:
            return 0
        published = 0
        start = 0
        while (end := data.find(b"\n", start)) >= 0:
            line = data[start:end]
            start = end + 1
            self._offset += len(line) + 1
            if not line.strip():
                continue
            self.seq += 1
            item, at = _parse(self.seq, line)
            self._publish(item)
            published += 1
            if until is not None and until == (item.kind, at):
                break
        return published

    def _publish(self, item: FeedItem) -> None:
        for subscription in tuple(self._subscribers):
            try:
                subscription.queue.put_nowait(item)
            except asyncio.QueueFull:
                subscription.overflowed = True
                self._subscribers.discard(subscription)


class StoreFeed(TraceFeed):
    """The same feed over a store's ``SessionCatalog`` (PostgreSQL): lines by number, not by
    byte offset. A session run here publishes each persisted event's line as it is announced
    (this process is its only writer, so the next number is the next line); lines another
    process wrote are fetched by ``refresh``."""

    def __init__(self, catalog: SessionCatalog, session_id: str, *, buffer: int = 10_000) -> None:
        super().__init__(Path(session_id), buffer=buffer)
        self._catalog = catalog
        self._id = session_id

    async def start(self) -> TraceFeed:
        """Begin after the lines already stored."""
        lines = await self._catalog.trace(self._id)
        self.seq = lines[-1].seq if lines else 0
        return self

    async def replay(self, after: int, upto: int) -> list[FeedItem]:
        """Stored lines ``after+1 .. upto``."""
        if upto <= after:
            return []
        lines = await self._catalog.trace(self._id, after=after)
        return [_parse(line.seq, line.data)[0] for line in lines if line.seq <= upto]

    def on_event(self, event: ev.Event) -> None:
        """See ``TraceFeed.on_event``: a persisted event is published as its stored line."""
        if ev.is_persistent(event):
            self.seq += 1
            self._publish(_parse(self.seq, encode_event_line(event).rstrip(b"\n"))[0])
        else:
            super().on_event(event)

    def pull(self, *, until: tuple[str, float] | None = None) -> int:
        """Nothing to read synchronously: ``refresh`` fetches."""
        return 0

    async def refresh(self) -> None:
        """Publish the lines stored after ``seq`` (written by another process)."""
        for line in await self._catalog.trace(self._id, after=self.seq):
            if line.seq > self.seq:
                self.seq = line.seq
                self._publish(_parse(line.seq, line.data)[0])


def _parse(seq: int, line: bytes) -> tuple[FeedItem, float | None]:
    """The item for trace line ``seq`` (its JSON with ``seq`` added first), and its time."""
    text = line.decode("utf-8", errors="replace")
    try:
        data: Any = json.loads(text)
    except ValueError:
        data = None
    kind = data.get("kind") if isinstance(data, dict) else None
    if not isinstance(kind, str) or not text.startswith("{"):
        # an unreadable line keeps its number (ids stay line numbers) but says what it is
        unreadable = json.dumps({"seq": seq, "kind": "unreadable"})
        return FeedItem(seq, "unreadable", unreadable), None
    at = data.get("at")
    body = text[1:].lstrip()
    joined = f'{{"seq":{seq},{body}' if body != "}" else f'{{"seq":{seq}}}'
    return FeedItem(seq, kind, joined), at if isinstance(at, int | float) else None


def _count_lines(path: Path) -> tuple[int, int]:
    """(bytes up to the end of the last complete line, non-blank complete lines)."""
    try:
        data = read_bytes(path)
    except FileNotFoundError:
        return 0, 0
    end = data.rfind(b"\n") + 1
    lines = sum(1 for line in data[:end].split(b"\n")[:-1] if line.strip())
    return end, lines


def _read_lines(path: Path, after: int, upto: int) -> Sequence[bytes]:
    try:
        data = read_bytes(path)
    except FileNotFoundError:
        return []
    end = data.rfind(b"\n") + 1
    lines = [line for line in data[:end].split(b"\n")[:-1] if line.strip()]
    return lines[after:upto]
