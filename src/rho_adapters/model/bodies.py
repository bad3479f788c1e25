"""Reading a model server's response body, bounded in time and size, for the model clients
and MCP over HTTP: a streamed body's chunks as they arrive (``body_chunks``), the idle timeout
counted in completed events (``KeepAliveWatch``), a non-streamed answer's whole body
(``whole_body``) and the head of an error answer (``error_body``).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator

import httpx

from rho_domain.errors import ModelTimeout


def body_chunks(response: httpx.Response) -> AsyncIterator[bytes]:
    """A streamed response's body as it arrives: httpx's ``aiter_raw`` when the server did
    not compress it (no ``content-encoding``, or ``identity``: what every known server sends
    for a stream), whose chunks are already the content; ``aiter_bytes`` otherwise, which
    adds a decoder, a chunker and one more generator for each network chunk, that is for
    each streamed delta. A body already read (a response built from bytes) comes from
    ``aiter_bytes`` too, which serves it."""
    encoding = response.headers.get("content-encoding", "identity")
    if encoding == "identity" and not response.is_stream_consumed:
        return response.aiter_raw()
    return response.aiter_bytes()


STREAM_WAIT = (
    "the model server sent no complete event for {idle:g} s, only keep-alives or part of one "
    "(idle timeout)"
)
BODY_WAIT = "the model server sent only keep-alives for {idle:g} s, no response (idle timeout)"


class KeepAliveWatch:
    """The idle timeout of a stream, counted in completed events. httpx's read timeout (the
    idle timeout, ``Timeouts.idle``) is reset by any byte, so a server that sends SSE comments
    (``: ping``) or Anthropic's ``ping`` events and nothing else, or a ``data:`` line a byte at
    a time that never ends, would hold a run forever. In a streamed answer every event is one
    small delta (a tool call's arguments come as many), so progress is a completed event: a
    reader calls ``heard`` for each chunk that completed one and ``quiet`` for each that did
    not (keep-alives, part of an event); ``quiet`` raises ``ModelTimeout`` once no event has
    completed for ``idle`` seconds, counted from the request, or from the first chunk after
    the last completed event (so at most one chunk interval late).
    """

    __slots__ = ("idle", "since", "waited")

    def __init__(self, idle: float | None, *, waited: str = STREAM_WAIT) -> None:
        self.idle = idle
        self.since: float | None = time.monotonic()
        self.waited = waited  # what came instead of progress, for the timeout's message

    def heard(self) -> None:
        """A chunk completed an event of the response."""
        self.since = None

    def quiet(self) -> None:
        """A chunk completed no event. Raises ``ModelTimeout`` past ``idle`` seconds."""
        now = time.monotonic()
        if self.since is None:
            self.since = now
        elif self.idle is not None and now - self.since >= self.idle:
            raise ModelTimeout(self.waited.format(idle=self.idle))


async def whole_body(response: httpx.Response, *, idle: float | None) -> bytes:
    """A non-streamed answer's whole body. Whitespace alone (what some servers send as a
    keep-alive before the JSON of a slow answer, and legal JSON) for ``idle`` seconds is a
    ``ModelTimeout`` (``KeepAliveWatch``): httpx's read timeout, reset by every byte, let a
    body of spaces that never ended hold the run forever."""
    watch = KeepAliveWatch(idle, waited=BODY_WAIT)
    parts = []
    async for chunk in body_chunks(response):
        if chunk.strip():
            watch.heard()
        else:
            watch.quiet()
        parts.append(chunk)
    return b"".join(parts)


ERROR_BODY_BYTES = 65_536
"""How much of an error answer's body is read: enough for any server's message."""


async def error_body(
    response: httpx.Response, *, idle: float | None, limit: int = ERROR_BODY_BYTES
) -> str:
    """The text of an error answer (a 4xx or 5xx), as much of it as comes within ``idle``
    seconds (None: the caller's own deadline bounds it) and ``limit`` bytes; the rest is never
    read (leaving the stream closes the connection). The status says what failed, and a body
    that never ends (a proxy's, a byte at a time) or is huge held the run before it could be
    said. The model clients and MCP over HTTP read error answers through this."""
    received = bytearray()
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(idle):
            async for chunk in body_chunks(response):
                received += chunk
                if len(received) >= limit:
                    break
    return bytes(received[:limit]).decode("utf-8", "replace")
