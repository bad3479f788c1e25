"""What ``AgentClient`` reads of a server's answers, bounded whatever the server sends.

The server may be hostile or broken (a proxy's page, another program on the port, a server
that lost its mind), so no answer may cost the client more than a bound: an answer's body
is read a piece at a time up to ``limit`` bytes decoded, its ``Content-Encoding`` undone
64 KiB a layer a step (``rho_adapters.model.encodings``; httpx's own ``aiter_bytes``
inflates each network chunk whole, a gzip bomb of 100 KB into 100 MB before anyone counts
a byte), an encoding that cannot be bounded so refused. Before, ``AgentClient._call`` read a
whole answer with ``response.json()``, and an answer of endless bytes grew the client until
the process died.
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterator

import httpx

from rho_adapters.model.encodings import RefusedEncoding, decoded, layers
from rho_entry.client_events import EVENT_BYTES
from rho_entry.server.errors import ApiError

ANSWER_BYTES = EVENT_BYTES
"""The largest answer (not a stream) the client reads: a session's detail shows the calls
waiting for approval, whose arguments are at most one model answer, JSON-escaped."""

ERROR_BYTES = 65_536
"""How much of an error answer is read: the API's ``{"error": ...}`` is far smaller, and of
another server's page the client shows 200 characters."""


def chunks(response: httpx.Response) -> AsyncIterator[bytes]:
    """The body of a streamed ``response`` with its ``Content-Encoding`` undone, a bounded
    piece at a time; ``ApiError`` for an encoding not read so (``br``, ``zstd``, more than
    four stacked) or a body its encoding does not decode. A body already in memory (a
    response built from bytes, as a test's transport makes it) comes from ``aiter_bytes``."""
    if response.is_stream_consumed:
        return response.aiter_bytes()
    encoding = response.headers.get("content-encoding", "identity")
    try:
        layers(encoding)  # refused before the first read
    except RefusedEncoding as exc:
        raise ApiError(_whose(response, f"Content-Encoding {encoding!r}: {exc}")) from None
    return _pieces(response, encoding)


async def _pieces(response: httpx.Response, encoding: str) -> AsyncIterator[bytes]:
    try:
        async for piece in decoded(response.aiter_raw(), encoding):
            yield piece
    except zlib.error as exc:
        raise ApiError(_whose(response, f"a body that is not valid {encoding}: {exc}")) from None


async def body(response: httpx.Response, limit: int) -> bytes:
    """The whole decoded body of a streamed ``response``: ``ApiError`` as soon as it passes
    ``limit`` bytes, before more of it is held."""
    received = bytearray()
    async for piece in chunks(response):
        received += piece
        if len(received) > limit:
            raise ApiError(_whose(response, f"an answer of more than {limit} bytes"))
    return bytes(received)


async def error_head(response: httpx.Response) -> bytes:
    """The first ``ERROR_BYTES`` of an error answer's decoded body (the rest is never read;
    leaving the stream closes the connection), or what came before its encoding failed."""
    received = bytearray()
    try:
        async for piece in chunks(response):
            received += piece
            if len(received) >= ERROR_BYTES:
                break
    except ApiError:
        pass  # its status says what failed; what it said is shown as far as it was read
    return bytes(received[:ERROR_BYTES])


def _whose(response: httpx.Response, what: str) -> str:
    request = response.request
    return (
        f"the server sent {what} to {request.method} {request.url.path}; is this a "
        "rho-agent serve server?"
    )
