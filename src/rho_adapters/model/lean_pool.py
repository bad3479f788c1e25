"""An httpcore connection pool that does not ask every pooled socket at every request.

httpcore 1.0's ``AsyncConnectionPool`` re-plans the whole pool each time a request arrives or
a response closes: every connection is asked ``has_expired()`` (for an idle HTTP/1.1
connection, a readability ``poll`` of its socket) and, per idle one, every connection again
``is_idle()`` (a quadratic count). With a hundred keep-alive connections to one model server
and hundreds of sessions streaming, that was two thirds of the event loop's stalls (see
docs/benchmarks.md, "1,000 sessions and the loop-lag gauge").

``LeanConnectionPool`` keeps the pool's contract and changes only when sockets are asked:

- a request takes the first available connection for its origin; an idle one is asked
  ``has_expired()`` (the server may have closed it) right before it is used — the same check
  at the same moment as httpcore's, for the one connection that is about to carry the
  request, so a dead socket is never handed out;
- closed connections are dropped on every pass (a state read, no system call);
- the other idle connections are swept for expiry (keep-alive time, server close) at most
  once per ``SWEEP_SECONDS``, not per request: a connection the server closed is held at
  most that much longer, never used;
- the rest is httpcore's: a new connection below ``max_connections``, else an idle one is
  closed to make room, else the request stays queued; idle connections beyond
  ``max_keepalive_connections`` are closed (counted only when the pool holds more than
  that: with the model clients' limits, never, so no pass asks every connection
  ``is_idle()`` at each request's start and end).

Its connections use the backend ``tls.PlainTransport`` gives it, ``network.AsyncioBackend``
(asyncio's own sockets, not anyio's streams; a request's head and body in one send), and
asyncio's own locks (``lean_connection``); a request waiting for a connection waits on an
``asyncio.Event``. httpcore takes those from anyio (through sniffio), which imported anyio's
asyncio backend at the first request. Closing is not wrapped in anyio's cancel shield, which
under asyncio holds off no cancellation anyway: the pool's bookkeeping of a closed response
runs in a ``finally`` instead. A response body comes up one socket read at a time, not one
HTTP chunk at a time (``batched_body``).

It overrides httpcore 1.0's ``handle_async_request`` (its steps, kept) and two private methods
of its pool (``_assign_requests_to_connections``, called under the pool's lock and returning
the connections to close, and ``_close_connections``), under the version gate of
``pool_class``; ``tests/model/test_model_lean_pool.py`` pins the behaviour against a real
server.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterable, AsyncIterator
from typing import TYPE_CHECKING, Any

import httpcore

from rho_adapters.model.lean_connection import LeanConnection

if TYPE_CHECKING:
    import ssl

SWEEP_SECONDS = 1.0
"""How often, at most, the idle connections not being picked are checked for expiry."""


def pool_class(version: str = httpcore.__version__) -> type[httpcore.AsyncConnectionPool]:
    """``LeanConnectionPool`` under the httpcore line its override was written and tested for
    (1.0.x), else httpcore's own pool: a later httpcore may have changed the private method it
    overrides, and its own pool is then the correct one, if slower."""
    if version.startswith("1.0.") and hasattr(
        httpcore.AsyncConnectionPool, "_assign_requests_to_connections"
    ):
        return LeanConnectionPool
    return httpcore.AsyncConnectionPool


def new_pool(
    *,
    ssl_context: ssl.SSLContext | None,
    max_connections: int | None,
    max_keepalive_connections: int | None,
    keepalive_expiry: float | None,
) -> httpcore.AsyncConnectionPool:
    """The model clients' connection pool (``pool_class``) on asyncio's own sockets
    (``network.AsyncioBackend``), with ``ssl_context`` for https (None: http only)."""
    from rho_adapters.model.network import AsyncioBackend

    return pool_class()(
        network_backend=AsyncioBackend(),
        ssl_context=ssl_context,
        max_connections=max_connections,
        max_keepalive_connections=max_keepalive_connections,
        keepalive_expiry=keepalive_expiry,
    )


class LeanConnectionPool(httpcore.AsyncConnectionPool):
    """``httpcore.AsyncConnectionPool`` without the per-request scan (module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._next_sweep = 0.0
        self.sweeps = 0  # how many full expiry sweeps ran (tests, diagnostics)

    def create_connection(self, origin: httpcore.Origin) -> Any:
        """A ``LeanConnection``; through a proxy or for HTTP/2, httpcore's own."""
        if self._proxy is not None or self._http2:
            return super().create_connection(origin)
        return LeanConnection(
            origin=origin,
            ssl_context=self._ssl_context,
            keepalive_expiry=self._keepalive_expiry,
            http1=self._http1,
            http2=self._http2,
            retries=self._retries,
            local_address=self._local_address,
            uds=self._uds,
            network_backend=self._network_backend,
            socket_options=self._socket_options,
        )

    async def handle_async_request(self, request: httpcore.Request) -> httpcore.Response:
        """Send ``request`` as httpcore's pool does (queue it, assign, wait for a connection,
        send; on any failure take it out of the queue), with a ``_PoolRequest`` and a
        ``_PoolByteStream``."""
        scheme = request.url.scheme.decode()
        if scheme not in ("http", "https", "ws", "wss"):
            raise httpcore.UnsupportedProtocol(
                f"Request URL has an unsupported protocol '{scheme}://'."
                if scheme
                else "Request URL is missing an 'http://' or 'https://' protocol."
            )
        timeout = request.extensions.get("timeout", {}).get("pool", None)
        pool_request = _PoolRequest(request)
        self._requests.append(pool_request)  # type: ignore[arg-type]
        try:
            while True:
                await self._close_connections(self._assign_requests_to_connections())
                connection = await pool_request.wait_for_connection(timeout)
                try:
                    response = await connection.handle_async_request(request)
                except httpcore.ConnectionNotAvailable:
                    pool_request.clear_connection()  # taken meanwhile: assign again
                else:
                    break
        except BaseException as exc:
            await self._request_done(pool_request)
            raise exc from None
        assert isinstance(response.stream, AsyncIterable)
        return httpcore.Response(
            status=response.status,
            headers=response.headers,
            content=_PoolByteStream(response.stream, pool_request, self),
            extensions=response.extensions,
        )

    async def _request_done(self, pool_request: Any) -> None:
        """Take a finished (or failed) request out of the queue; assign the queued ones."""
        self._requests.remove(pool_request)
        await self._close_connections(self._assign_requests_to_connections())

    async def _close_connections(self, closing: list[Any]) -> None:
        for connection in closing:
            await connection.aclose()

    def _assign_requests_to_connections(self) -> list[Any]:
        connections: list[Any] = self._connections
        closing: list[Any] = []
        now = time.monotonic()
        if now >= self._next_sweep:
            self._next_sweep = now + SWEEP_SECONDS
            self.sweeps += 1
            for connection in list(connections):
                if connection.is_closed():
                    connections.remove(connection)
                elif connection.is_idle() and connection.has_expired():
                    connections.remove(connection)
                    closing.append(connection)
        else:
            connections[:] = [c for c in connections if not c.is_closed()]
        if len(connections) > self._max_keepalive_connections:  # else no idle one is surplus
            idle = [c for c in connections if c.is_idle()]
            for surplus in idle[self._max_keepalive_connections :]:
                connections.remove(surplus)
                closing.append(surplus)
        for pool_request in [r for r in self._requests if r.is_queued()]:
            origin = pool_request.request.url.origin
            chosen = self._first_available(origin, closing)
            if chosen is None and len(connections) >= self._max_connections:
                idle_one = next((c for c in connections if c.is_idle()), None)
                if idle_one is None:
                    continue  # stays queued until a response closes
                connections.remove(idle_one)
                closing.append(idle_one)
            if chosen is None:
                chosen = self.create_connection(origin)
                connections.append(chosen)
            pool_request.assign_to_connection(chosen)
        return closing

    def _first_available(self, origin: Any, closing: list[Any]) -> Any:
        """The first connection that can take a request for ``origin`` now; an idle one
        found expired on the way is moved to ``closing``."""
        for connection in list(self._connections):
            if not (connection.can_handle_request(origin) and connection.is_available()):
                continue
            if connection.is_idle() and connection.has_expired():
                self._connections.remove(connection)
                closing.append(connection)
                continue
            return connection
        return None


class _PoolRequest:
    """httpcore's pool request; a request that has to wait for a connection waits on an
    ``asyncio.Event`` made for it then."""

    __slots__ = ("_assigned", "connection", "request")

    def __init__(self, request: httpcore.Request) -> None:
        self.request = request
        self.connection: Any = None
        self._assigned: asyncio.Event | None = None

    def assign_to_connection(self, connection: Any) -> None:
        self.connection = connection
        if self._assigned is not None:
            self._assigned.set()

    def clear_connection(self) -> None:
        self.connection = None
        self._assigned = None

    def is_queued(self) -> bool:
        return self.connection is None

    async def wait_for_connection(self, timeout: float | None) -> Any:
        """The assigned connection, waiting up to ``timeout`` (``PoolTimeout``) for one."""
        if self.connection is None:
            assigned = self._assigned = asyncio.Event()
            try:
                async with asyncio.timeout(timeout):
                    await assigned.wait()
            except TimeoutError as exc:
                raise httpcore.PoolTimeout(f"no connection free within {timeout} s") from exc
        return self.connection


class _PoolByteStream:
    """A response's body from its connection; closing it gives the request back to the pool
    (in a ``finally``: also when the close is cancelled)."""

    def __init__(
        self, stream: AsyncIterable[bytes], pool_request: _PoolRequest, pool: LeanConnectionPool
    ) -> None:
        self._stream = stream
        self._pool_request = pool_request
        self._pool = pool
        self._closed = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for part in self._stream:
                yield part
        except BaseException as exc:
            await self.aclose()
            raise exc from None

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            close = getattr(self._stream, "aclose", None)
            if close is not None:
                await close()
        finally:
            await self._pool._request_done(self._pool_request)
