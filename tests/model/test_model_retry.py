"""Retries and timeouts with a fake clock: which status codes and failures are retried (as
openai-python does), backoff, Retry-After, and the timeouts that bound a stalled endpoint."""

from __future__ import annotations

import random

import pytest
from _model_support import collect, make_model, request, text_of

from rho_adapters.fakes.wire import drop, http_error, stall, text_reply
from rho_adapters.model import RetryPolicy, Timeouts
from rho_adapters.model.retry import parse_duration, server_delay
from rho_domain.errors import (
    AuthenticationError,
    BadRequest,
    ModelConnectionError,
    ModelHTTPError,
    ModelNotFoundError,
    ModelTimeout,
    RateLimited,
    ServerError,
)


async def test_429_with_retry_after_is_honoured_then_succeeds() -> None:
    model, transport, clock = make_model(http_error(429, "slow", retry_after=2), text_reply("ok"))
    assert text_of(await collect(model)) == "ok"
    assert clock.sleeps == [2.0]
    assert len(transport.requests) == 2


@pytest.mark.parametrize("status", [408, 409, 429, 498, 500, 502, 503, 504, 529])
async def test_retryable_statuses_back_off_exponentially_with_jitter(status: int) -> None:
    model, _transport, clock = make_model(
        http_error(status),
        http_error(status),
        text_reply("ok"),
        retry=RetryPolicy(max_retries=3),
    )
    assert text_of(await collect(model)) == "ok"
    assert len(clock.sleeps) == 2
    assert 0.375 <= clock.sleeps[0] <= 0.5
    assert 0.75 <= clock.sleeps[1] <= 1.0


@pytest.mark.parametrize(
    ("status", "error"),
    [
        (400, BadRequest),
        (401, AuthenticationError),
        (403, AuthenticationError),
        (404, ModelNotFoundError),
        (422, BadRequest),
    ],
)
async def test_client_errors_are_not_retried(status: int, error: type[ModelHTTPError]) -> None:
    model, transport, clock = make_model(http_error(status), text_reply("never"))
    with pytest.raises(error) as raised:
        await collect(model)
    assert raised.value.status == status
    assert (len(transport.requests), clock.sleeps) == (1, [])


async def test_insufficient_quota_429_is_not_retried() -> None:
    model, transport, _clock = make_model(
        http_error(
            429,
            error_body={
                "error": {
                    "message": "You exceeded your current quota",
                    "type": "insufficient_quota",
                }
            },
        ),
        text_reply("never"),
    )
    with pytest.raises(RateLimited):
        await collect(model)
    assert len(transport.requests) == 1


async def test_retry_after_above_the_cap_is_not_retried() -> None:
    model, transport, clock = make_model(http_error(429, retry_after=600), text_reply("never"))
    with pytest.raises(RateLimited) as info:
        await collect(model)
    assert info.value.retry_after == 600
    assert (len(transport.requests), clock.sleeps) == (1, [])


async def test_retry_count_is_configurable_and_the_last_error_is_raised() -> None:
    model, transport, clock = make_model(
        *[http_error(503, f"down {i}") for i in range(5)], retry=RetryPolicy(max_retries=4)
    )
    with pytest.raises(ServerError, match="down 4"):
        await collect(model)
    assert len(transport.requests) == 5
    assert len(clock.sleeps) == 4
    bases = [0.5, 1.0, 2.0, 4.0]
    assert all(0.75 * b <= s <= b for s, b in zip(clock.sleeps, bases, strict=True))
    model, transport, _ = make_model(http_error(503), retry=RetryPolicy(max_retries=0))
    with pytest.raises(ServerError):
        await collect(model)
    assert len(transport.requests) == 1


async def test_x_ratelimit_reset_headers_are_honoured() -> None:
    model, _, clock = make_model(
        http_error(
            429, headers={"x-ratelimit-reset-tokens": "7.66s", "x-ratelimit-reset-requests": "1s"}
        ),
        text_reply("ok"),
    )
    await collect(model)
    assert clock.sleeps == [7.66]


def test_server_delay_header_forms() -> None:
    assert server_delay({"retry-after-ms": "250", "retry-after": "9"}, 0) == 0.25
    assert server_delay({"Retry-After": "1.5"}, 0) == 1.5
    assert server_delay({"retry-after": "Wed, 21 Oct 2015 07:28:10 GMT"}, 1445412480.0) == 10.0
    assert server_delay({"x-ratelimit-reset-tokens-minute": "11.38"}, 0) == 11.38
    assert server_delay({}, 0) is None
    assert server_delay({"retry-after": "soon"}, 0) is None


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("1s", 1.0),
        ("6m0s", 360.0),
        ("2m59.56s", 179.56),
        ("11.38", 11.38),
        ("250ms", 0.25),
        ("1h", 3600.0),
        ("x", None),
        ("1s2", None),
        ("9" * 400 + "s", None),  # inf, not a wait
        ("1" * 400 + "ms", None),
    ],
)
def test_parse_duration(text: str, seconds: float | None) -> None:
    if seconds is None:
        assert parse_duration(text) is None
    else:
        assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize(
    "said", ["-5", "Wed, 21 Oct 2015 07:28:00 GMT", "Mon, 01 Jan 0001 00:00:00 GMT"]
)
def test_a_retry_after_in_the_past_waits_the_backoff(said: str) -> None:
    """Before: a past date or a negative number was a wait of 0 s, each retry sent at once
    (an explicit 0 stays the server's "now": test_model_loopback honours it)."""
    policy = RetryPolicy(base_delay=0.5)
    delay = policy.delay(0, {"retry-after": said}, random.Random(1), 1.8e9)
    assert delay is not None
    assert 0.375 <= delay <= 0.5


def test_backoff_is_capped() -> None:
    policy = RetryPolicy(base_delay=0.5, max_delay=8.0)
    rng = random.Random(1)
    assert all(6.0 <= policy.backoff(n, rng) <= 8.0 for n in range(4, 12))


async def test_connection_dropped_before_any_output_is_retried() -> None:
    model, transport, _clock = make_model(text_reply("x", faults=(drop(0),)), text_reply("ok"))
    assert text_of(await collect(model)) == "ok"
    assert len(transport.requests) == 2


async def test_never_retried_once_output_reached_the_caller() -> None:
    model, transport, clock = make_model(
        text_reply("one two three", faults=(drop(after=3),)), text_reply("never")
    )
    with pytest.raises(ModelConnectionError) as info:
        await collect(model)
    assert info.value.partial_text == "one two "
    assert (len(transport.requests), clock.sleeps) == (1, [])


async def test_stall_before_output_times_out_after_the_idle_timeout_then_retries() -> None:
    model, transport, clock = make_model(
        text_reply("x", faults=(stall(0),)), text_reply("ok"), timeouts=Timeouts(idle=30.0)
    )
    assert text_of(await collect(model)) == "ok"
    assert clock.sleeps[0] == 30.0  # the fake stall waited exactly the client's read timeout
    assert len(transport.requests) == 2


async def test_stall_after_output_raises_timeout_with_partial_text() -> None:
    model, transport, _clock = make_model(
        text_reply("one two", faults=(stall(2),)), timeouts=Timeouts(idle=30.0)
    )
    with pytest.raises(ModelTimeout, match="30 s") as info:
        await collect(model)
    assert info.value.partial_text == "one "
    assert len(transport.requests) == 1


async def test_flex_tier_gets_the_longer_idle_timeout() -> None:
    timeouts = Timeouts(idle=30.0, flex_idle=900.0)
    model, _, clock = make_model(text_reply("x", faults=(stall(2),)), timeouts=timeouts)
    with pytest.raises(ModelTimeout):
        await collect(model, request(service_tier="flex"))
    assert clock.sleeps == [900.0]


async def test_short_stall_within_the_timeout_is_just_slow() -> None:
    model, _, clock = make_model(
        text_reply("a b", faults=(stall(2, seconds=5.0),)), timeouts=Timeouts(idle=30.0)
    )
    assert text_of(await collect(model)) == "a b"
    assert clock.sleeps == [5.0]


async def test_bad_request_naming_stream_falls_back_to_non_streaming_for_tools() -> None:
    from rho_domain.model import ToolSpec

    spec = ToolSpec(name="list", description="d", parameters={"type": "object"})
    model, transport, _ = make_model(
        http_error(400, "Streaming is not supported with tools for this model"),
        text_reply("fine"),
        text_reply("again"),
    )
    assert text_of(await collect(model, request(tools=(spec,)))) == "fine"
    assert [r["stream"] for r in transport.requests] == [True, False]
    await collect(model, request(tools=(spec,)))
    assert transport.requests[-1]["stream"] is False  # remembered
    model, transport, _ = make_model(http_error(400, "bad stream"), text_reply("x"))
    with pytest.raises(BadRequest):  # without tools there is nothing to fall back to
        await collect(model)


async def test_each_retry_is_announced_with_its_wait_reason_and_attempt() -> None:
    """Issue 16: retries were silent. The stream says "retrying in 2.0 s (429, attempt 2/3)"
    before waiting; the loop turns it into a ``retry`` event (stderr, --json, trace)."""
    from rho_domain.model import RetryNotice

    model, _, clock = make_model(
        http_error(429, "slow", retry_after=2), http_error(503), text_reply("ok")
    )
    events = await collect(model)
    notices = [e for e in events if isinstance(e, RetryNotice)]
    assert [(n.reason, n.attempt, n.attempts) for n in notices] == [("429", 2, 3), ("503", 3, 3)]
    assert notices[0].delay == 2.0 == clock.sleeps[0]
    assert text_of(events) == "ok"


async def test_a_retry_after_over_the_cap_is_named_in_the_error() -> None:
    model, _, _ = make_model(http_error(429, "busy", retry_after=600), text_reply("never"))
    with pytest.raises(RateLimited) as info:
        await collect(model)
    assert "retry after 600 s, longer than the 120 s this client waits" in str(info.value)
    # a wait no one would count in seconds (before: a 298-digit number of seconds)
    for header, said in (("1e300", "more than a year"), ("259200000", "3 days")):
        model, _, _ = make_model(http_error(429, headers={"retry-after-ms": header}))
        with pytest.raises(RateLimited) as info:
            await collect(model)
        assert f"retry after {said}, longer than the 120 s" in str(info.value)
