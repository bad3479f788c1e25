"""An HTTP/1.1 connection for the model pool that hands a response body up one read at a time.

httpcore's ``AsyncHTTP11Connection`` yields a chunked body one h11 ``Data`` event at a time:
one per HTTP chunk, and a model server sends each streamed delta as a chunk of its own. Each
one then climbs six async generators (httpcore's byte streams, httpx's, ``aiter_raw``) to
reach the SSE decoder. When several deltas came in one socket read (a server that writes
them faster than the client reads, as any server does while the client's event loop is busy
with other sessions) they are already in h11's buffer: ``BatchedHTTP11Connection`` gives
them up together, as one bytes object, and only reads the socket when h11 has nothing left.

Nothing waits for more data and nothing is held: the bytes, their order and the moment each
reaches the reader are those of httpcore's connection, only fewer pieces (the SSE decoder
takes any split). Its errors are httpcore's: the same calls to h11, under the same mapping of
h11's protocol error. ``lean_connection.LeanHTTP11Connection`` (the HTTP/1.1 connection of
``LeanConnectionPool``) is one. It mirrors httpcore 1.0's code and overrides its methods, so
``lean_pool.pool_class`` uses it only under that line, as it does the pool.

The whole chunks already in h11's buffer are cut out of it here, in one pass
(``_take_whole_chunks``), rather than one ``next_event`` each: h11 builds a ``Data`` event,
runs its state machine (which a ``Data`` never moves) and cuts its buffer's front once per
chunk, about 12 µs a chunk, 0.8 ms of every 50-delta answer on the event loop. Only what h11
would give as a whole chunk is taken (a bare hex size, its data, its CRLF); anything else (a
chunk extension, a chunk not all there, the last chunk, a bad footer) is left to h11, which
gives it or raises as before.
"""

from __future__ import annotations

import re
import typing

import h11
import httpcore
from h11._readers import ChunkedReader
from httpcore._async.http11 import AsyncHTTP11Connection
from httpcore._exceptions import RemoteProtocolError, map_exceptions

_H11_ERRORS: typing.Any = {h11.RemoteProtocolError: RemoteProtocolError}
_SIZE_DIGITS = 20
_BARE_SIZE = re.compile(rb"[0-9A-Fa-f]{1,%d}" % _SIZE_DIGITS)
"""A chunk's size line as h11 reads it, without an extension or spaces (``int`` alone would
also take a sign, ``0x``, ``_`` and spaces, which h11 refuses)."""


class BatchedHTTP11Connection(AsyncHTTP11Connection):
    """An HTTP/1.1 connection whose response body comes one socket read at a time."""

    reads_joined = 0
    """Body pieces given up together with an earlier one, in this process (tests, benches)."""

    async def _receive_response_body(
        self, request: httpcore.Request
    ) -> typing.AsyncIterator[bytes]:
        timeouts = request.extensions.get("timeout", {})
        timeout = timeouts.get("read", None)
        while True:
            event = await self._receive_event(timeout=timeout)
            if isinstance(event, h11.Data):
                parts = [bytes(event.data)]
                event = self._buffered(parts)
                if len(parts) == 1:
                    yield parts[0]
                else:
                    BatchedHTTP11Connection.reads_joined += len(parts) - 1
                    yield b"".join(parts)
            if isinstance(event, h11.EndOfMessage | h11.PAUSED):
                break

    def _buffered(self, parts: list[bytes]) -> typing.Any:
        """Append the data of the ``Data`` events h11 has without reading the socket; the
        first other event (``NEED_DATA``: the buffer is empty)."""
        state = self._h11_state
        with map_exceptions(_H11_ERRORS):
            while True:
                _take_whole_chunks(state, parts)
                event = state.next_event()
                if event.__class__ is not h11.Data:
                    return event
                parts.append(bytes(event.data))


def _take_whole_chunks(state: typing.Any, parts: list[bytes]) -> None:
    """Append the data of each whole chunk at the front of h11's buffer and cut them out,
    leaving h11's reader where its own ``next_event`` calls would have left it.

    Only while the peer sends a chunked body and h11's reader stands between chunks (or
    before the CRLF that ends the chunk it gave last); a chunk h11 would read otherwise than
    as a bare size line, its data and a CRLF stops the pass, and h11 reads it."""
    reader = state._reader
    if (
        reader.__class__ is not ChunkedReader
        or state.their_state is not h11.SEND_BODY
        or reader._bytes_in_chunk
        or reader._reading_trailer
    ):
        return
    buffer = state._receive_buffer
    data = buffer._data
    footer = reader._bytes_to_discard
    if footer.__class__ is not bytes:
        return  # h11 before 0.16 (earlier httpcore 1.0 releases take it) counts the footer
    if footer and not data.startswith(footer):
        return  # a footer not all there yet, or a bad one: h11 waits or raises
    start = position = len(footer)
    end = len(data)
    while True:
        line_end = data.find(b"\r\n", position, position + _SIZE_DIGITS + 2)
        if line_end <= position:
            break
        line = data[position:line_end]
        if _BARE_SIZE.fullmatch(line) is None:
            break  # an extension, spaces, or not a size: h11's to judge
        size = int(line, 16)
        body = line_end + 2
        stop = body + size
        if not size or stop + 2 > end or data[stop : stop + 2] != b"\r\n":
            break  # the last chunk, one not all there, or a bad footer
        parts.append(bytes(data[body:stop]))
        position = stop + 2
    if position > start or footer:
        reader._bytes_to_discard = b""
        del data[:position]
        buffer._next_line_search = 0
        buffer._multiple_lines_search = 0
