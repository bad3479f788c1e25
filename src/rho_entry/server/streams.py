"""The response that sends one event stream, holding one of the server's stream slots.

A stream is admitted (``SessionFeeds.admit``) by the route, before anything is sent, so the
one past ``max_streams`` is a plain 429. Its slot is given back when the response ends, in
``HeldStream.__call__`` rather than in the body: a client that connects, asks and leaves at
once has its response cancelled before the body's first step, and a body that never started
never runs its ``finally`` (the slot would stay taken for the server's life).
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Callable, Mapping

import attrs
from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from rho_adapters.codec import event_to_dict
from rho_domain.control_events import ErrorOccurred
from rho_domain.errors import StoreError
from rho_entry.server.feed import FeedItem
from rho_entry.server.host import SessionHost
from rho_entry.server.sse import StreamOptions, event_stream, frame


class HeldStream(StreamingResponse):
    """A ``text/event-stream`` response that calls ``end`` once it is over, however it ends
    (sent to the end, the client gone, the server stopping)."""

    def __init__(
        self, body: AsyncIterator[bytes], end: Callable[[], None], headers: Mapping[str, str]
    ) -> None:
        super().__init__(body, media_type="text/event-stream", headers=dict(headers))
        self.end = end

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Send the stream, then give its slot back."""
        try:
            await super().__call__(scope, receive, send)
        finally:
            self.end()


def stream_response(
    host: SessionHost,
    session_id: str,
    options: StreamOptions,
    headers: Mapping[str, str] | None = None,
    *,
    end: Callable[[], None] | None = None,
) -> HeldStream:
    """The session's event stream, in the slot ``end`` gives back (None: one taken here).
    Raises ``Busy`` (429) when ``max_streams`` are open."""
    if end is None:
        end = host.feeds.admit()

    async def body() -> AsyncIterator[bytes]:
        # The feed is taken here, when the response starts, and subscribed to at once: taken
        # earlier, a feed without subscribers could be released (and replaced) in between.
        try:
            feed = await host.feeds.feed(session_id)
            start = options if options.after >= 0 else attrs.evolve(options, after=feed.seq)
            async for chunk in event_stream(feed, start, lambda: host.running(session_id)):
                yield chunk
        except StoreError as exc:
            yield failed(exc)
        finally:
            host.feeds.release(session_id)

    shown = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no", **(headers or {})}
    return HeldStream(body(), end, shown)


def failed(exc: StoreError) -> bytes:
    """The last event of a stream whose read of the store failed after its 200 was sent (a
    trace grown past its bound, the database gone): an ``error`` event without an ``id``
    naming what failed, and the stream ends. Before, the response was cut mid-chunk and the
    server logged 'response already started' with a traceback."""
    error = ErrorOccurred(at=time.time(), error_type=type(exc).__name__, message=str(exc))
    data = json.dumps(event_to_dict(error), ensure_ascii=False, separators=(",", ":"))
    return frame(FeedItem(None, error.kind, data))
