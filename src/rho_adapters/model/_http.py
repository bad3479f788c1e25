"""Shared HTTP machinery of the model adapters: the endpoint's client and timeouts (the retry
loop is ``retrying``'s).

Clients come from the process-wide ``ClientPool`` (``rho_adapters.model.pool``), shared by
every model object, call and session that uses the endpoint, so connections are reused and
outlive sessions.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, TypeVar

import attrs

from rho_adapters.model._errors import map_httpx_errors
from rho_adapters.model.pool import SHARED_POOL, ClientPool, Lease
from rho_adapters.model.tls_context import CERTIFI, CaTrust
from rho_domain.errors import (
    AnswerTooLong,
)
from rho_domain.value_methods import value_eq, value_hash, value_repr

if TYPE_CHECKING:
    import httpx

    from rho_adapters.model.core_client import AnyClient, AnyResponse, RequestTimeout
    from rho_adapters.model.retrying import Attempt

log = logging.getLogger("rho_adapters.model")
T = TypeVar("T")


@attrs.frozen(kw_only=True)
class Timeouts:
    """Seconds. ``idle`` is the longest wait for the next chunk (a read); ``flex_idle``
    replaces it for ``service_tier: flex``, which OpenAI says can be much slower."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    connect: float = 10.0
    idle: float = 120.0
    flex_idle: float = 900.0

    def for_tier(self, service_tier: str | None) -> RequestTimeout:
        """A request's timeouts: ``idle`` (or ``flex_idle``) to read, write and wait for a
        connection, ``connect`` to connect; httpx's clients take them too."""
        from rho_adapters.model.core_client import RequestTimeout

        idle = self.flex_idle if service_tier == "flex" else self.idle
        return RequestTimeout(idle, connect=self.connect)


class Endpoint:
    """The client for one endpoint: leased from a ``ClientPool`` on the running loop (again
    when the loop changes), or the caller's ``httpx.AsyncClient`` (``http``: one seam for
    every way of bringing HTTP; a transport comes in as ``ClientPool(transport=...)``).

    Requests go through ``slot()``, which holds a place in the pooled client's in-flight gate
    (a caller's client is not gated: its owner bounds it), and send ``request_headers``.
    """

    def __init__(
        self,
        headers: Mapping[str, str],
        *,
        http: ClientPool | httpx.AsyncClient | None = None,
        pool_key: str = "",
        proxy: str | None = None,
        trust: CaTrust = CERTIFI,
    ) -> None:
        self.headers = dict(headers)
        # a pooled client's route and trust (a caller's client is routed by its owner)
        self._proxy = proxy
        self._trust = trust
        self._pool = http if isinstance(http, ClientPool) else SHARED_POOL
        self._pool_key = pool_key
        self._client = None if http is None or isinstance(http, ClientPool) else http
        self._lease: Lease | None = None
        self.closed = False
        self.last_wait = 0.0  # seconds the latest request queued for a slot

    @property
    def request_headers(self) -> Mapping[str, str]:
        """The headers each request sends itself: the endpoint's (its key) on a caller's
        client; none on a pooled one, which carries them (the pool keys clients by them)."""
        return self.headers if self._client is not None else {}

    def client(self) -> AnyClient:
        """The client to use on the running loop (leased again after ``aclose``)."""
        self.closed = False
        if self._client is not None:
            return self._client
        return self._leased().client

    @asynccontextmanager
    async def slot(self, attempt: Attempt | None = None) -> AsyncIterator[AnyClient]:
        """The client, holding an in-flight slot for the body of the ``async with`` (queued
        FIFO behind other requests to the endpoint; the wait is kept in ``last_wait``, added
        to ``attempt.queue_wait`` and counted in the pool's ``stats()``)."""
        client = self.client()
        if self._lease is None:
            yield client
            return
        async with self._lease.gate.slot() as waited:
            self.last_wait = waited
            if attempt is not None:
                attempt.gated = True
                attempt.queue_wait += waited
            if waited > 1.0:
                log.debug("waited %.2f s for a request slot to %s", waited, self._pool_key)
            yield client

    @asynccontextmanager
    async def post_stream(
        self,
        url: str,
        body: object,
        timeout: RequestTimeout,
        attempt: Attempt,
        *,
        head_seconds: float | None = None,
    ) -> AsyncIterator[AnyResponse]:
        """POST ``body`` to ``url`` in a slot (``slot``) and give the open response, its
        body not read yet; ``attempt.headers`` are its headers, ``attempt.started`` when it
        was sent. httpx's errors, raised here or while the caller reads the body, become
        ``ModelError``s (``map_httpx_errors``, which counts ``timeout.read`` as the idle
        timeout). No whole response head within ``head_seconds`` of sending (the answer's
        deadline, ``AnswerLimits.max_seconds``) is ``AnswerTooLong``: httpx's read timeout is
        reset by every byte, and a head sent a byte at a time held the call for days."""
        with map_httpx_errors(idle_timeout=timeout.read):
            async with self.slot(attempt) as client:
                attempt.started = time.monotonic()
                try:
                    async with asyncio.timeout(head_seconds):
                        response = await _send(client, url, body, self.request_headers, timeout)
                except TimeoutError:
                    raise AnswerTooLong(
                        f"the model server at {url} sent no whole response head in "
                        f"{head_seconds:g} s (model_answer_timeout, AnswerLimits.max_seconds)"
                    ) from None
                try:
                    attempt.headers = response.headers
                    yield response
                finally:
                    await response.aclose()
                    # a response and its body stream refer to each other: cut once closed,
                    # so the request's objects are freed by their reference count instead
                    # of waiting for the garbage collector's passes.
                    response.stream = _closed_stream(response)

    async def remembered(
        self, name: str, ask: Callable[[], Awaitable[T]], *, keep: Callable[[T], bool]
    ) -> T:
        """``ask()``, or for a pooled endpoint the pool's remembered answer
        (``ClientPool.remembered``): models of one endpoint share what it said about itself.
        Remembered per route and trust, as the pool's clients are: a service whose sessions
        trust other CAs (``CaTrust``) or go through another proxy reached the URL by another
        way, and took the answer one with another route had asked for."""
        if self._client is not None:
            return await ask()
        routed = f"{name} via {self._proxy or 'no proxy'}, trusting {self._trust!r}"
        return await self._pool.remembered(routed, ask, keep=keep)

    def _leased(self) -> Lease:
        loop = asyncio.get_running_loop()
        if self._lease is not None and (
            self._lease.loop is not loop or not self._pool.holds(self._lease)
        ):
            # Another loop's client must not be used here; a client the pool closed
            # (``ClientPool.aclose``) is replaced.
            self._pool.release(self._lease)
            self._lease = None
        if self._lease is None:
            self._lease = self._pool.acquire(
                self._pool_key, self.headers, proxy=self._proxy, trust=self._trust
            )
        return self._lease

    async def aclose(self) -> None:
        """Give a pooled client back (a caller's client stays open: it is theirs).
        Idempotent. A later request leases a client again, as after a change of loop: a
        session closed after its run (``Session.run_sync`` closes it, each in a loop of its
        own) runs again; "this model client was closed" blamed the server for that."""
        if self.closed:
            return
        self.closed = True
        if self._lease is not None:
            self._pool.release(self._lease)
            self._lease = None


async def _send(
    client: AnyClient,
    url: str,
    body: object,
    headers: Mapping[str, str],
    timeout: RequestTimeout,
) -> AnyResponse:
    """POST ``body`` as JSON to ``url``, the response's body left to read: a ``CoreClient``
    takes the URL as it is, httpx's client a parsed one (``_parsed``)."""
    from rho_adapters.model.core_client import CoreClient

    if isinstance(client, CoreClient):
        sent = client.build_request("POST", url, json=body, headers=headers, timeout=timeout)
        return await client.send(sent, stream=True)
    parsed = _parsed(url)
    request = client.build_request("POST", parsed, json=body, headers=headers, timeout=timeout)
    return await client.send(request, stream=True)


def _closed_stream(response: AnyResponse) -> Any:
    """What a closed response keeps as its body stream: an empty one of its kind."""
    from rho_adapters.model.core_client import CoreResponse

    if isinstance(response, CoreResponse):
        return None
    import httpx

    return httpx.ByteStream(b"")


@functools.lru_cache(maxsize=64)
def _parsed(url: str) -> httpx.URL:
    """``httpx.URL(url)``, once per URL: httpx parses a string URL again for every request
    (its host through ``ipaddress`` too), and takes a parsed one as it is. Raises what
    ``httpx.URL`` raises, and caches only what it returns."""
    import httpx

    return httpx.URL(url)
