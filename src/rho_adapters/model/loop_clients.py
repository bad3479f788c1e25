"""The clients a ``ClientPool`` keeps on one event loop, and how one is made.

``LoopClients`` holds a loop's clients by ``PoolKey`` (base URL, headers, proxy) with the
guard generator that closes them when the loop shuts its async generators down; ``Lease`` is
what a model holds while it uses one. ``new_client`` builds a client whose connections are
bounded by the pool's in-flight limit (so httpcore never queues), sending through the pool's
given transport, never closed by the client (``Unclosed``), or through ``tls.transport_for``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Mapping

import attrs
import httpx

from rho_adapters.model.gate import InFlightGate
from rho_adapters.model.tls import transport_for
from rho_domain.value_methods import value_repr

PoolKey = tuple[str, tuple[tuple[str, str], ...], str | None]
"""A client's key on its loop: base URL, sorted headers (they carry credentials), proxy."""


@attrs.define(eq=False)
class Lease:
    """A leased client and the gate its requests go through; give it back with
    ``ClientPool.release``."""

    __repr__ = value_repr

    client: httpx.AsyncClient
    gate: InFlightGate
    loop: asyncio.AbstractEventLoop
    key: PoolKey


@attrs.define(eq=False)
class Pooled:
    """One pooled client, its gate, how many hold it, and its idle timer when nobody does."""

    __repr__ = value_repr

    client: httpx.AsyncClient
    gate: InFlightGate
    leases: int = 0
    idle: asyncio.TimerHandle | None = None


class LoopClients:
    """The clients of one loop, and the guard that closes them when the loop shuts down."""

    def __init__(self) -> None:
        self.clients: dict[PoolKey, Pooled] = {}
        self.closing: set[asyncio.Task[None]] = set()
        self.asking: dict[str, asyncio.Lock] = {}
        self.guard = self._guard()
        # Run the guard to its ``yield`` now: that registers it with the running loop, whose
        # shutdown_asyncgens() will later resume it into the ``finally``.
        with contextlib.suppress(StopIteration):
            self.guard.asend(None).send(None)

    async def _guard(self) -> AsyncGenerator[None, None]:
        try:
            yield
        finally:
            await self.close_all()

    async def close_all(self) -> None:
        """Close every client of this loop, forgetting them first (idle timers cancelled;
        a client that fails to close is dropped all the same)."""
        clients, self.clients = list(self.clients.values()), {}
        for pooled in clients:
            if pooled.idle is not None:
                pooled.idle.cancel()
            with contextlib.suppress(Exception):
                await pooled.client.aclose()


def new_client(
    base_url: str,
    headers: Mapping[str, str],
    *,
    proxy: str | None,
    max_in_flight: int,
    keepalive_seconds: float,
    transport: httpx.AsyncBaseTransport | None,
) -> httpx.AsyncClient:
    """A client for ``base_url`` with ``max_in_flight`` connections at most, kept alive
    ``keepalive_seconds``: through ``transport`` when given (left open when the client
    closes), else the network's (``proxy`` when given)."""
    limits = httpx.Limits(
        max_connections=max_in_flight,
        max_keepalive_connections=max_in_flight,
        keepalive_expiry=keepalive_seconds,
    )
    sent_through: httpx.AsyncBaseTransport
    if transport is not None:
        sent_through = Unclosed(transport)
    else:
        sent_through = transport_for(base_url, limits, proxy=proxy)
    # Timeouts are set per request (the idle timeout depends on the service tier). With a
    # transport given, httpx makes no SSL context and mounts no proxy of its own.
    client = httpx.AsyncClient(headers=dict(headers), transport=sent_through, timeout=None)  # noqa: S113
    jar = getattr(client, "_cookies", None)
    if type(jar) is httpx.Cookies:  # httpx 0.2x's own jar; another one is left as it is
        client._cookies = SetCookiesOnly(jar.jar)
    return client


class SetCookiesOnly(httpx.Cookies):
    """A model client's cookies (a load balancer's affinity cookie, say), read from a response
    only when it sets some. httpx reads every response into its jar, and for that builds
    urllib's views of the response and of its request (the URL parsed again): ~4 % of the
    event loop's CPU per streamed call, for answers that set none. Without a ``Set-Cookie``
    or ``Set-Cookie2`` header, ``http.cookiejar`` takes nothing from a response."""

    def extract_cookies(self, response: httpx.Response) -> None:
        """Take the cookies ``response`` sets, if its headers set any (httpx's own reading)."""
        headers = response.headers
        if "set-cookie" in headers or "set-cookie2" in headers:
            super().extract_cookies(response)


class Unclosed(httpx.AsyncBaseTransport):
    """A pool's given transport, shared by its clients: closing one client leaves it open."""

    def __init__(self, transport: httpx.AsyncBaseTransport) -> None:
        self.transport = transport

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """The given transport's response to ``request``."""
        return await self.transport.handle_async_request(request)
