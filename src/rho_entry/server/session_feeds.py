"""The trace feeds of a server's sessions: one ``TraceFeed`` per session, while it is used.

A feed is made on first use (``feed``; of two made in a race the first is kept), caught up
with the store before a run here (``current``), woken when that run ends (``done``), and
forgotten when nobody uses it (``release``: no subscriber and no run in ``handles``), so the
server's memory does not grow with reads. ``SessionHost`` holds one ``SessionFeeds``.

The event streams reading the feeds are counted too (``admit``): each holds a task and looks
at the store every ``poll_seconds``, and one holder of the token opened as many as it liked
(1,000 streams of one session, every one answered 200), taking the event loop, the store and
the file descriptors from every other client. Past ``max_streams`` a new one is refused with
429 ``busy`` before anything is sent; a stream gives its slot back when its response ends.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from rho_domain.ports.session_control import SessionCatalog
from rho_entry.server.errors import Busy
from rho_entry.server.feed import TraceFeed
from rho_entry.server.settings import MAX_STREAMS_VARIABLE, ServerSettings


class SessionFeeds:
    """The feeds of the sessions in ``sessions``; ``handles`` are the server's runs by session
    (``Runs.handles``, read as it changes); ``settings`` give the feeds' buffer and how many
    streams may be open at once."""

    def __init__(
        self, sessions: SessionCatalog, handles: Mapping[str, object], settings: ServerSettings
    ) -> None:
        self.sessions = sessions
        self.handles = handles
        self.buffer = settings.event_buffer
        self.max_streams = settings.max_streams
        self.retry_after = settings.retry_after
        self.kept: dict[str, TraceFeed] = {}
        self.streams = 0  # event streams open (admitted and not yet ended)

    def admit(self) -> Callable[[], None]:
        """Count one more event stream, or raise ``Busy`` when ``max_streams`` are open.
        Returns what ends it (idempotent): the caller calls it however the stream ends."""
        if self.streams >= self.max_streams:
            raise Busy(
                f"{self.streams} event streams are open, the most this server sends at once: "
                "close one (a dashboard tab, a follower) or raise the limit "
                f"({MAX_STREAMS_VARIABLE}, rho-agent serve --max-streams N)",
                retry_after=self.retry_after,
            )
        self.streams += 1
        ended = False

        def end() -> None:
            nonlocal ended
            if not ended:
                ended = True
                self.streams -= 1

        return end

    def get(self, session_id: str) -> TraceFeed | None:
        """The session's feed if it has one now (none is made)."""
        return self.kept.get(session_id)

    async def feed(self, session_id: str) -> TraceFeed:
        """The session's feed (one per session, created on first use)."""
        feed = self.kept.get(session_id)
        if feed is None:
            made = TraceFeed(self.sessions, session_id, buffer=self.buffer)
            started = await made.start()
            feed = self.kept.setdefault(session_id, started)  # first one wins a race
        return feed

    async def readable(self, session_id: str) -> None:
        """Raise what the session's feed would meet as it starts (``StoredPastBound``: a
        trace past its bound), before a stream's response is begun: met in its body, the
        200 was already sent, so the client saw its connection cut and the server logged a
        traceback instead of a 409 naming the file. A kept feed started already; otherwise
        this reads the trace once, and the feed's own start reads on from the mark left."""
        if session_id not in self.kept:
            await self.sessions.last_seq(session_id)

    def release(self, session_id: str) -> None:
        """Forget a feed nobody uses (no subscriber, no run): memory stays bounded."""
        feed = self.kept.get(session_id)
        if feed is not None and not feed.subscribers and session_id not in self.handles:
            del self.kept[session_id]

    async def current(self, session_id: str) -> TraceFeed:
        """The feed, caught up with the store before a run here: a ``StoreFeed`` numbers the
        lines this server writes from the last one it saw, so lines another server wrote
        since must be seen first (once the run holds the session, nobody else writes)."""
        feed = await self.feed(session_id)
        await feed.refresh()
        return feed

    def done(self, session_id: str) -> Callable[[], None]:
        """What a run here calls when it ends: wake the feed's readers, then release it."""

        def done() -> None:
            feed = self.kept.get(session_id)
            if feed is not None:
                feed.wake()
            self.release(session_id)

        return done

    def close(self, session_id: str) -> None:
        """Close the session's feed (its streams end) and forget it."""
        feed = self.kept.pop(session_id, None)
        if feed is not None:
            feed.close()

    def close_all(self) -> None:
        """Shutdown: close every feed."""
        for feed in self.kept.values():
            feed.close()
        self.kept.clear()
