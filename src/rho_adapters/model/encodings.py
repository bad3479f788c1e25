"""An HTTP answer's body undone of its ``Content-Encoding``, a bounded piece at a time.

httpx decodes a compressed body one network chunk at a time, each chunk whole: gzip inflates
some thousand times, and encodings stack (``gzip, gzip``), so a chunk of a few KB may decode
to gigabytes before whoever reads the body can count a byte of it. Here every layer inflates
at most ``PIECE`` bytes a step, and the next step runs only when the reader asks for more, so
a reader that stops at its bound (``HttpTransport``'s ``max_body``) has spent about that
bound, whatever the server compressed. Only what httpx itself decodes is accepted (gzip and
deflate, stacked at most ``MAX_LAYERS`` deep; identity); anything else is ``RefusedEncoding``.
``read_at_most`` and ``read_head`` read such pieces within a bound, for every client that
reads a whole answer or an error's first bytes (AgentClient's, Daytona's).
"""

from __future__ import annotations

import contextlib
import zlib
from collections.abc import AsyncIterable, AsyncIterator, Iterator

PIECE = 64 * 1024  # bytes a layer inflates a step
MAX_LAYERS = 4  # encodings stacked: one is what servers send; each layer is a generator deep
_WBITS = {"gzip": zlib.MAX_WBITS | 16, "x-gzip": zlib.MAX_WBITS | 16, "deflate": zlib.MAX_WBITS}


class RefusedEncoding(ValueError):
    """A ``Content-Encoding`` we do not decode (the message says which, or how deep)."""


class _Layer:
    """One encoding undone: ``pieces`` of at most ``PIECE`` bytes for each chunk given."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._inflate = zlib.decompressobj(_WBITS[name])
        self._head = b"" if name == "deflate" else None  # its first bytes, until two came

    def pieces(self, data: bytes) -> Iterator[bytes]:
        if self._head is not None:
            # A zlib header is two bytes: told from raw deflate only once both came (a
            # first chunk of one byte, a server's or a layer's piece, took a zlib stream
            # for raw deflate, and its body was 'not valid deflate').
            data = self._head + data
            if len(data) < 2:
                self._head = data
                return
            self._head = None
            if data[0] & 0x0F != 8 or (data[0] << 8 | data[1]) % 31:
                # no zlib header: raw deflate, as some servers send (httpx takes both)
                self._inflate = zlib.decompressobj(-zlib.MAX_WBITS)
        while True:
            piece = self._inflate.decompress(data, PIECE)
            data = self._inflate.unconsumed_tail
            if piece:
                yield piece
            if not data and len(piece) < PIECE:
                return


def layers(header: str) -> list[_Layer]:
    """The layers a ``Content-Encoding`` header names, the last applied first."""
    names = [name.strip().lower() for name in header.split(",") if name.strip()]
    unknown = [name for name in names if name not in _WBITS and name != "identity"]
    if unknown:
        raise RefusedEncoding(f"{unknown[0]!r}, which is not decoded here")
    if len(names) > MAX_LAYERS:
        raise RefusedEncoding(f"{len(names)} encodings stacked, more than {MAX_LAYERS}")
    return [_Layer(name) for name in reversed(names) if name in _WBITS]


async def decoded(raw: AsyncIterable[bytes], header: str) -> AsyncIterator[bytes]:
    """The chunks of ``raw`` (a body as sent) with the encodings ``header`` names undone,
    each at most ``PIECE`` bytes when any is. Raises ``RefusedEncoding``, and ``zlib.error``
    for a body its encoding does not decode."""
    stack = layers(header)
    async for chunk in raw:
        if not stack:
            yield chunk
            continue
        for piece in _through(stack, chunk):
            yield piece


def _through(stack: list[_Layer], data: bytes) -> Iterator[bytes]:
    if not stack:
        yield data
        return
    for piece in stack[0].pieces(data):
        yield from _through(stack[1:], piece)


async def read_at_most(chunks: AsyncIterable[bytes], limit: int) -> bytes | None:
    """All of ``chunks`` joined, or None as soon as they pass ``limit`` bytes: nothing more
    is read or held. What ``chunks`` raises passes through."""
    received = bytearray()
    async for piece in chunks:
        received += piece
        if len(received) > limit:
            return None
    return bytes(received)


async def read_head(chunks: AsyncIterable[bytes], size: int, *, unread: type[Exception]) -> bytes:
    """The first ``size`` bytes of ``chunks``, the rest never read (an error answer's: its
    status says what failed; leaving the stream closes the connection), or what came before
    ``chunks`` raised ``unread`` (a body its encoding does not decode)."""
    received = bytearray()
    with contextlib.suppress(unread):
        async for piece in chunks:
            received += piece
            if len(received) >= size:
                break
    return bytes(received[:size])
