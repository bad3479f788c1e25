"""Server-Sent Events framing and the stream of one subscriber.

Each trace line is sent as ``id: <seq>`` / ``event: <kind>`` / ``data: <json>``; a delta has
no ``id`` (it is not in the trace, so a reconnect neither needs nor can get it back). An idle
stream sends a ``: keep-alive`` comment every ``keepalive`` seconds, so proxies and clients
can tell a quiet session from a dead connection.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterator, Awaitable, Callable

import attrs

from rho_domain.value_methods import value_eq, value_hash, value_repr
from rho_entry.server.feed import END, WAKE, FeedItem, TraceFeed

KEEPALIVE = b": keep-alive\n\n"
REPLAY_CHUNK = 65536
"""Bytes of replayed trace lines sent in one write. A line a write, a client that asked and
left at once had every line of the trace written to its closed socket before anything
noticed (the replay never yields to the loop): asyncio logged 'socket.send() raised
exception.' for each, 855 lines for three such requests of a 287-line trace."""
CLOSED = b"event: closed\ndata: {}\n\n"


def frame(item: FeedItem) -> bytes:
    """One SSE event (the JSON of trace lines and deltas holds no raw newline)."""
    head = f"id: {item.seq}\n" if item.seq is not None else ""
    # A lone surrogate (in a JSON string) is written as the escape it came as: json_answer.py
    return f"{head}event: {item.kind}\ndata: {item.data}\n\n".encode("utf-8", "backslashreplace")


@attrs.frozen(kw_only=True)
class StreamOptions:
    """How one subscriber is served.

    Attributes:
        after: Send trace lines after this one (the client's Last-Event-ID; 0: from the
            start).
        keepalive: Seconds of silence before a keep-alive comment.
        poll: Seconds between looks at the file for lines another process wrote.
        until_idle: End the stream once everything is sent and no run is in progress.
    """

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    after: int = 0
    keepalive: float = 15.0
    poll: float = 0.25
    until_idle: bool = False


async def _ask(running: Callable[[], bool | Awaitable[bool]]) -> bool:
    answer = running()
    return await answer if inspect.isawaitable(answer) else bool(answer)


async def event_stream(
    feed: TraceFeed, options: StreamOptions, running: Callable[[], bool | Awaitable[bool]]
) -> AsyncIterator[bytes]:
    """The bytes of one subscriber's stream: missed lines from the trace, then live items.

    ``running()`` tells whether a run of the session is in progress (here or in another
    process); it is asked only when ``until_idle``. The stream ends when the subscriber
    overflows (the client reconnects) or, with ``until_idle``, once the session is idle.
    """
    subscription = feed.subscribe()  # first: nothing published from now on can be missed
    try:
        upto = feed.seq
        sent = options.after
        yield b"retry: 1000\n\n"
        chunk: list[bytes] = []
        size = 0
        for item in await feed.replay(sent, upto):
            chunk.append(data := frame(item))
            size += len(data)
            sent = item.seq or sent
            if size >= REPLAY_CHUNK:
                yield b"".join(chunk)
                chunk, size = [], 0
                await asyncio.sleep(0)  # a client gone is heard before the next chunk
        if chunk:
            yield b"".join(chunk)
        loop = asyncio.get_running_loop()
        quiet_since = loop.time()
        while not subscription.overflowed:
            wait = min(options.poll, max(options.keepalive - (loop.time() - quiet_since), 0))
            try:
                item = await asyncio.wait_for(subscription.queue.get(), timeout=wait)
            except TimeoutError:
                item = WAKE
                await feed.poll(options.poll)  # lines written by another process
            if item is END:
                yield CLOSED
                return
            if item.seq is not None and item.seq <= sent:
                continue  # already sent (replayed)
            if item is not WAKE:
                yield frame(item)
                quiet_since = loop.time()
                sent = item.seq or sent
            elif loop.time() - quiet_since >= options.keepalive:
                yield KEEPALIVE
                quiet_since = loop.time()
            if options.until_idle and subscription.queue.empty() and not await _ask(running):
                await feed.refresh()
                if subscription.queue.empty():
                    return
    finally:
        feed.unsubscribe(subscription)
