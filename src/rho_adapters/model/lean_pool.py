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
  ``max_keepalive_connections`` are closed.

Its connections use ``one_send.OneSendBackend`` (a request's head and body in one send, the
readability check on the socket itself) and, without a proxy, are
``batched_body.BatchedHTTPConnection``s (a response body given up one socket read at a time,
not one HTTP chunk at a time). It overrides one private method of httpcore's pool
(``_assign_requests_to_connections``, called under the pool's lock and returning the
connections to close); ``tests/model/test_model_lean_pool.py`` pins the behaviour against a
real server.
"""

from __future__ import annotations

import time
from typing import Any

import httpcore

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


class LeanConnectionPool(httpcore.AsyncConnectionPool):
    """``httpcore.AsyncConnectionPool`` without the per-request scan (module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if kwargs.get("network_backend") is None:
            from rho_adapters.model.one_send import OneSendBackend

            # A request's head and body in one send; the readability check without anyio's
            # attribute table (one_send.py).
            kwargs["network_backend"] = OneSendBackend()
        super().__init__(*args, **kwargs)
        self._next_sweep = 0.0
        self.sweeps = 0  # how many full expiry sweeps ran (tests, diagnostics)

    def create_connection(self, origin: Any) -> Any:
        """The connection for ``origin``: httpcore's behind a proxy, else one that gives a
        response body up one socket read at a time (``batched_body.py``)."""
        if self._proxy is not None:
            return super().create_connection(origin)
        from rho_adapters.model.batched_body import BatchedHTTPConnection

        return BatchedHTTPConnection(
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
