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
"""

from __future__ import annotations

import typing

import h11
import httpcore
from httpcore._async.http11 import AsyncHTTP11Connection
from httpcore._exceptions import RemoteProtocolError, map_exceptions

_H11_ERRORS: typing.Any = {h11.RemoteProtocolError: RemoteProtocolError}


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
                event = state.next_event()
                if event.__class__ is not h11.Data:
                    return event
                parts.append(bytes(event.data))
