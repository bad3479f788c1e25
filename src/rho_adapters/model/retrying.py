"""The retry loop of a model call: each attempt's facts (``Attempt``), and ``with_retries``,
which runs attempts until one succeeds, announcing each retry with a ``RetryNotice`` and never
retrying once output reached the caller. When and how long to wait is ``retry``'s policy.
"""

from __future__ import annotations

import random
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping
from contextlib import aclosing
from typing import TYPE_CHECKING

import attrs

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
from rho_domain.model import StreamFinished
from rho_domain.ports.clock import Clock
from rho_domain.value_methods import value_eq, value_repr

if TYPE_CHECKING:
    from rho_domain.model import StreamEvent


@attrs.define
class Attempt:
    """What one attempt learned that the retry decision needs."""

    __repr__ = value_repr
    __eq__ = value_eq

    headers: Mapping[str, str] = attrs.field(factory=dict)
    started: float | None = None  # time.monotonic() when the request was sent
    queue_wait: float = 0.0  # seconds queued for a request slot (``Endpoint.slot``)
    gated: bool = False  # the request went through a gated slot


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
    retries, queued, gated = 0, 0.0, False
    while True:
        state = Attempt()
        yielded = False
        try:
            async with aclosing(attempt(state)) as events:
                async for event in events:
                    yielded = True
                    if (gated or state.gated) and isinstance(event, StreamFinished):
                        event = attrs.evolve(event, queue_wait=queued + state.queue_wait)
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
                    f"the server asked to retry after {_wait_text(asked)}, longer than the "
                    f"{policy.max_server_delay:g} s this client waits: try again later",
                )
                raise
            reason = _reason(exc)
        finally:
            queued, gated = queued + state.queue_wait, gated or state.gated
        retries += 1
        from rho_domain.model_extras import RetryNotice  # with the first retry

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


def _wait_text(seconds: float) -> str:
    """A server's long wait as a person reads it: ``600 s``, ``3 days``; a wait of a year or
    more (``retry-after-ms: 1e300``, before printed as a 298-digit number of seconds) is
    ``more than a year``."""
    if seconds < 86_400:
        return f"{seconds:,.0f} s"
    if seconds < 365 * 86_400:
        return f"{seconds / 86_400:,.0f} days"
    return "more than a year"
