"""Shared HTTP machinery of the model adapters: client pool, timeouts and the retry loop.

One ``httpx.AsyncClient`` per endpoint (base URL + credentials + event loop) is shared by every
model object, call and session that uses it, so connections are reused. Models lease it and
release it in ``aclose``; the last release closes it.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping
from contextlib import aclosing

import attrs
import httpx

from rho_adapters.model._errors import add_hint
from rho_adapters.model.retry import RetryPolicy, server_delay
from rho_domain.errors import (
    AuthenticationError,
    ContextLengthExceeded,
    ModelConnectionError,
    ModelError,
    ModelHTTPError,
    ModelNotFoundError,
    ModelTimeout,
)
from rho_domain.model import RetryNotice, StreamEvent
from rho_domain.ports.clock import Clock


@attrs.frozen(kw_only=True)
class Timeouts:
    """Seconds. ``idle`` is the longest wait for the next chunk (a read); ``flex_idle``
    replaces it for ``service_tier: flex``, which OpenAI says can be much slower."""

    connect: float = 10.0
    idle: float = 120.0
    flex_idle: float = 900.0

    def for_tier(self, service_tier: str | None) -> httpx.Timeout:
        idle = self.flex_idle if service_tier == "flex" else self.idle
        return httpx.Timeout(idle, connect=self.connect)


_Key = tuple[str, tuple[tuple[str, str], ...], int]


@attrs.define
class _Entry:
    client: httpx.AsyncClient
    leases: int = 0


class ClientPool:
    """Reference-counted ``AsyncClient`` per (base URL, headers, event loop).

    The loop is part of the key because httpx connections belong to the loop that opened them.
    """

    def __init__(self) -> None:
        self._entries: dict[_Key, _Entry] = {}

    def acquire(self, base_url: str, headers: Mapping[str, str]) -> tuple[_Key, httpx.AsyncClient]:
        """A client for this endpoint on the running loop; pair it with ``release``."""
        key = (base_url, tuple(sorted(headers.items())), id(asyncio.get_running_loop()))
        entry = self._entries.get(key)
        if entry is None:
            limits = httpx.Limits(max_connections=200, max_keepalive_connections=50)
            # Timeouts are set per request (idle timeout depends on the service tier).
            client = httpx.AsyncClient(headers=dict(headers), limits=limits, timeout=None)  # noqa: S113
            entry = self._entries[key] = _Entry(client)
        entry.leases += 1
        return key, entry.client

    def leases(self, base_url: str) -> int:
        """How many live leases hold clients of ``base_url`` (for tests and diagnostics)."""
        return sum(e.leases for k, e in self._entries.items() if k[0] == base_url)

    async def release(self, key: _Key) -> None:
        """Give a lease back; the last one closes the client."""
        entry = self._entries.get(key)
        if entry is None:
            return
        entry.leases -= 1
        if entry.leases <= 0:
            del self._entries[key]
            await entry.client.aclose()


SHARED_POOL = ClientPool()


class Endpoint:
    """A lazily leased client for one endpoint, or a caller-provided client/transport."""

    def __init__(
        self,
        headers: Mapping[str, str],
        *,
        pool: ClientPool | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        http_client: httpx.AsyncClient | None = None,
        pool_key: str = "",
    ) -> None:
        self.headers = dict(headers)
        self._pool = pool or SHARED_POOL
        self._pool_key = pool_key
        self._transport = transport
        self._client = http_client
        self._owned: httpx.AsyncClient | None = None
        self._lease: _Key | None = None
        self.closed = False

    def client(self) -> httpx.AsyncClient:
        if self.closed:
            raise ModelConnectionError("this model client was closed")
        if self._client is not None:
            return self._client
        if self._transport is not None:
            self._owned = httpx.AsyncClient(headers=self.headers, transport=self._transport)
            self._client = self._owned
            return self._owned
        self._lease, self._client = self._pool.acquire(self._pool_key, self.headers)
        return self._client

    async def aclose(self) -> None:
        if self.closed:
            return
        self.closed = True
        if self._owned is not None:
            await self._owned.aclose()
        if self._lease is not None:
            await self._pool.release(self._lease)


@attrs.define
class Attempt:
    """What one attempt learned that the retry decision needs."""

    headers: Mapping[str, str] = attrs.field(factory=dict)


async def with_retries(
    attempt: Callable[[Attempt], AsyncGenerator[StreamEvent, None]],
    *,
    policy: RetryPolicy,
    clock: Clock,
    rng: random.Random,
) -> AsyncIterator[StreamEvent]:
    """Run ``attempt`` until it succeeds, retrying retryable failures with backoff.

    Each retry is announced first with a ``RetryNotice`` (the wait, the reason, the attempt).
    Never retries once an event has been yielded: the caller already saw output, so the error
    is raised with what was received (``partial_text``). When the server asks for a longer
    wait than ``policy.max_server_delay``, the error says so and is raised at once.
    """
    retries = 0
    while True:
        state = Attempt()
        yielded = False
        try:
            async with aclosing(attempt(state)) as events:
                async for event in events:
                    yielded = True
                    yield event
            return
        except ModelError as exc:
            if yielded or retries >= policy.max_retries or not _retryable(exc, policy):
                raise
            delay = policy.delay(retries, state.headers, rng, clock.now())
            if delay is None:
                asked = server_delay(state.headers, clock.now()) or 0.0
                add_hint(
                    exc,
                    f"the server asked to retry after {asked:,.0f} s, longer than the "
                    f"{policy.max_server_delay:g} s this client waits: try again later",
                )
                raise
            reason = _reason(exc)
        retries += 1
        yield RetryNotice(
            delay=delay, reason=reason, attempt=retries + 1, attempts=policy.max_retries + 1
        )
        await clock.sleep(delay)


def _reason(exc: ModelError) -> str:
    if isinstance(exc, ModelHTTPError):
        return str(exc.status)
    if isinstance(exc, ModelTimeout):
        return "timeout"
    return "connection failed"


def _retryable(exc: ModelError, policy: RetryPolicy) -> bool:
    if isinstance(exc, (ContextLengthExceeded, AuthenticationError, ModelNotFoundError)):
        return False  # llama.cpp reports context overflow as 500: waiting will not shrink it
    if isinstance(exc, ModelHTTPError):
        return policy.should_retry_status(exc.status, exc.body)
    return isinstance(exc, (ModelConnectionError, ModelTimeout))
