"""httpcore 1.0's HTTP/1.1 connection with asyncio's own locks, for ``LeanConnectionPool``.

httpcore's connections take their locks from ``httpcore._synchronization``: under asyncio each
is an ``anyio.Lock``, which asks sniffio which library runs it and, the first time, imports
anyio's asyncio backend (and with it anyio's socket and stream layer: about 12 ms of a
one-shot's first turn on a quiet machine). ``LeanConnection`` and ``LeanHTTP11Connection`` are
httpcore's classes with ``asyncio.Lock``s instead; everything else is httpcore's.

httpcore's cancel shields around closing on its error paths (a failed request, a response
abandoned mid-body) are left as they are: they import anyio when they run. Under asyncio they
hold nothing off (anyio's shield does not stop a native ``Task.cancel``), so an asyncio lock
where they guard changes nothing either.

HTTP/1.1 only: the model clients' pool never asks for HTTP/2 (no ``h2`` in its ALPN offer), and
a pool that does gets httpcore's own connections (``LeanConnectionPool.create_connection``).
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpcore

from rho_adapters.model.batched_body import BatchedHTTP11Connection


class LeanHTTP11Connection(BatchedHTTP11Connection):
    """httpcore's HTTP/1.1 connection, its state lock asyncio's, its response body given up
    one socket read at a time (``batched_body``)."""

    def __init__(
        self,
        origin: httpcore.Origin,
        stream: httpcore.AsyncNetworkStream,
        keepalive_expiry: float | None = None,
    ) -> None:
        super().__init__(origin=origin, stream=stream, keepalive_expiry=keepalive_expiry)
        self._state_lock: Any = asyncio.Lock()


class LeanConnection(httpcore.AsyncHTTPConnection):
    """httpcore's connection (connect, TLS, retries), its request lock asyncio's and its
    HTTP/1.1 connection a ``LeanHTTP11Connection``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._request_lock: Any = asyncio.Lock()

    async def handle_async_request(self, request: httpcore.Request) -> httpcore.Response:
        """Connect on the first request (one at a time), then send it: httpcore's own steps."""
        if not self.can_handle_request(request.url.origin):
            raise RuntimeError(
                f"Attempted to send request to {request.url.origin} on connection to {self._origin}"
            )
        try:
            async with self._request_lock:
                if self._connection is None:
                    stream = await self._connect(request)
                    self._connection = LeanHTTP11Connection(
                        origin=self._origin, stream=stream, keepalive_expiry=self._keepalive_expiry
                    )
        except BaseException:
            self._connect_failed = True
            raise
        return await self._connection.handle_async_request(request)
