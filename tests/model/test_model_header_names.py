"""Configured headers are one header a name, whatever their case (RFC 9110: names ignore
case): a configured ``Authorization`` replaces the adapter's ``authorization`` rather than
going out beside it (two credentials in one request), and a name that is not an HTTP token
or two spellings of one name are refused where the endpoint is made."""

from __future__ import annotations

import random

import httpx
import pytest
from _model_support import collect, make_model

from rho_adapters.fakes.clock import FakeClock
from rho_adapters.fakes.wire import text_reply
from rho_adapters.model import AnthropicModel, ClientPool, ModelEndpoint
from rho_domain.errors import ConfigError
from rho_domain.header_names import headers_over


async def test_a_configured_header_in_another_case_replaces_the_adapters_own() -> None:
    model, transport, _ = make_model(
        text_reply("ok"), headers={"Authorization": "Bearer gateway", "ACCEPT": "text/x"}
    )
    try:
        await collect(model)
    finally:
        await model.aclose()
    sent = transport.headers[0]
    # one value each: httpx joins a repeated header's values with ", "
    assert sent["authorization"] == "Bearer gateway"
    assert sent["accept"] == "text/x"


async def test_anthropic_takes_a_configured_key_header_in_any_case_once() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(400, json={"type": "error", "error": {"type": "x", "message": "no"}})

    model = AnthropicModel(
        model="claude",
        endpoint=ModelEndpoint(api_key="sk-ant", headers={"X-Api-Key": "sk-gateway"}),
        http=ClientPool(transport=httpx.MockTransport(handler)),
        clock=FakeClock(),
        rng=random.Random(1),
    )
    try:
        with pytest.raises(Exception):  # noqa: B017, PT011 - the 400; only the request matters
            await collect(model)
    finally:
        await model.aclose()
    names = [name.lower() for name, _ in seen[0].headers.raw]
    assert names.count(b"x-api-key") == 1
    assert seen[0].headers["x-api-key"] == "sk-gateway"


@pytest.mark.parametrize(
    ("headers", "said"),
    [
        ({"X-Team": "a", "x-team": "b"}, "'X-Team' and 'x-team' are one header"),
        ({"X Team": "a"}, "'X Team' is not an HTTP header name"),
        ({"X-Team:": "a"}, "'X-Team:' is not an HTTP header name"),
        ({"": "a"}, "'' is not an HTTP header name"),
    ],
)
def test_header_names_that_cannot_be_sent_are_refused_at_the_endpoint(
    headers: dict[str, str], said: str
) -> None:
    with pytest.raises(ConfigError, match=r"ModelEndpoint\.headers") as caught:
        ModelEndpoint(headers=headers)
    assert said in str(caught.value)


def test_headers_over_keeps_one_header_a_name_the_configured_value_winning() -> None:
    own = {"accept": "a", "Authorization": "Bearer own", "x-kept": "k"}
    merged = headers_over(own, {"AUTHORIZATION": "Bearer mine"})
    assert merged == {"accept": "a", "x-kept": "k", "AUTHORIZATION": "Bearer mine"}
