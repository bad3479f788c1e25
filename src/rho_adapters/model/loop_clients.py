"""The clients a ``ClientPool`` keeps on one event loop, and how one is made.

``LoopClients`` holds a loop's clients by ``PoolKey`` (base URL, headers, proxy) with the
guard generator that closes them when the loop shuts its async generators down; ``Lease`` is
what a model holds while it uses one. ``new_client`` builds a client whose connections are
bounded by the pool's in-flight limit (so httpcore never queues), sending through the pool's
given transport, never closed by the client (``Unclosed``), or through ``tls.transport_for``
(``httpx_clients``); on the network, to a plain URL without a proxy, it is a ``CoreClient``
(``core_client``: no ``import httpx`` for it).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Mapping
from typing import TYPE_CHECKING, overload

import attrs

from rho_adapters.model.gate import InFlightGate
from rho_adapters.model.tls_context import CERTIFI, CaTrust
from rho_domain.lazy_names import lazy_names
from rho_domain.value_methods import value_repr

if TYPE_CHECKING:
    import httpx

    from rho_adapters.model.core_client import AnyClient
    from rho_adapters.model.httpx_clients import SetCookiesOnly as SetCookiesOnly
    from rho_adapters.model.httpx_clients import Unclosed as Unclosed

__getattr__ = lazy_names(
    __name__, dict.fromkeys(("SetCookiesOnly", "Unclosed"), "rho_adapters.model.httpx_clients")
)

PoolKey = tuple[str, tuple[tuple[str, str], ...], str | None, CaTrust]
"""A client's key on its loop: base URL, sorted headers (they carry credentials), proxy,
the CA certificates trusted."""


@attrs.define(eq=False)
class Lease:
    """A leased client and the gate its requests go through; give it back with
    ``ClientPool.release``."""

    __repr__ = value_repr

    client: AnyClient
    gate: InFlightGate
    loop: asyncio.AbstractEventLoop
    key: PoolKey


@attrs.define(eq=False)
class Pooled:
    """One pooled client, its gate, how many hold it, and its idle timer when nobody does."""

    __repr__ = value_repr

    client: AnyClient
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


@overload
def new_client(
    base_url: str,
    headers: Mapping[str, str],
    *,
    proxy: str | None,
    trust: CaTrust = CERTIFI,
    max_in_flight: int,
    keepalive_seconds: float,
    transport: httpx.AsyncBaseTransport,
) -> httpx.AsyncClient: ...


@overload
def new_client(
    base_url: str,
    headers: Mapping[str, str],
    *,
    proxy: str | None,
    trust: CaTrust = CERTIFI,
    max_in_flight: int,
    keepalive_seconds: float,
    transport: None,
) -> AnyClient: ...


def new_client(
    base_url: str,
    headers: Mapping[str, str],
    *,
    proxy: str | None,
    trust: CaTrust = CERTIFI,
    max_in_flight: int,
    keepalive_seconds: float,
    transport: httpx.AsyncBaseTransport | None,
) -> AnyClient:
    """A client for ``base_url`` with ``max_in_flight`` connections at most, kept alive
    ``keepalive_seconds``: through ``transport`` when given (left open when the client
    closes), else the network's (``proxy`` when given; https trusting ``trust``). A plain
    http(s) URL on the network, without a proxy, gets a ``CoreClient`` (``core_client``);
    the rest httpx's (``httpx_clients.new_httpx_client``)."""
    from rho_adapters.model.core_client import CoreClient, is_plain_url
    from rho_adapters.model.lean_pool import new_pool

    if transport is None and proxy is None and is_plain_url(base_url):
        ssl_context = None
        if base_url.startswith("https:"):
            from rho_adapters.model.tls_context import shared_ssl_context  # no httpx

            ssl_context = shared_ssl_context(trust)
        pool = new_pool(
            ssl_context=ssl_context,
            max_connections=max_in_flight,
            max_keepalive_connections=max_in_flight,
            keepalive_expiry=keepalive_seconds,
        )
        return CoreClient(headers, pool)
    from rho_adapters.model.httpx_clients import new_httpx_client

    return new_httpx_client(
        base_url,
        headers,
        proxy=proxy,
        trust=trust,
        max_in_flight=max_in_flight,
        keepalive_seconds=keepalive_seconds,
        transport=transport,
    )
