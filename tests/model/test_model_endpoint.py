"""One endpoint value, one HTTP seam, and quirks declared per model name (issue 25, item 7).

``OpenAIChatModel`` took 16 constructor parameters and ``AnthropicModel`` 12, with three ways
to bring HTTP (``transport``, ``http_client``, ``pool``). Now a model takes its server as one
``ModelEndpoint`` (URL, key, headers, timeouts, retry) and HTTP through ``http``: a
``ClientPool`` (a transport goes in as ``ClientPool(transport=...)``) or the caller's
``httpx.AsyncClient``; what a model accepts beyond its server's row is ``MODEL_QUIRKS``.
"""

from __future__ import annotations

import inspect
import json
from typing import Any

import attrs
import httpx
import pytest
from _model_support import collect, request

from rho_adapters.fakes import FakeClock, WireTransport
from rho_adapters.fakes.wire import text_reply
from rho_adapters.model import (
    PROVIDERS,
    AnthropicModel,
    ClientPool,
    ModelEndpoint,
    ModelQuirk,
    OpenAIChatModel,
    RetryPolicy,
)
from rho_adapters.model.providers import for_model
from rho_domain.errors import ConfigError


def _openai(model: str, transport: httpx.AsyncBaseTransport, **kw: Any) -> OpenAIChatModel:
    return OpenAIChatModel(
        model=model,
        endpoint=ModelEndpoint(base_url="https://api.openai.com/v1", api_key="sk-test"),
        http=ClientPool(transport=transport),
        clock=FakeClock(),
        **kw,
    )


def test_the_adapters_take_a_handful_of_parameters() -> None:
    openai = inspect.signature(OpenAIChatModel).parameters
    anthropic = inspect.signature(AnthropicModel).parameters
    assert list(openai) == [
        "model",
        "endpoint",
        "provider",
        "defaults",
        "stream",
        "http",
        "clock",
        "rng",
        "detect",
    ]
    assert list(anthropic) == ["model", "endpoint", "defaults", "http", "clock", "rng"]


def test_the_key_is_never_shown() -> None:
    endpoint = ModelEndpoint(base_url="https://x.test/v1", api_key="sk-secret-123")
    assert "sk-secret" not in repr(endpoint)
    assert "sk-secret" not in repr(attrs.evolve(endpoint, retry=RetryPolicy(max_retries=1)))


def test_a_key_or_header_an_http_header_cannot_carry_is_refused_naming_its_variable() -> None:
    # At the first request: a non-ASCII key raised a bare "UnicodeEncodeError: 'ascii' codec
    # can't encode...", and a trailing space or a line break h11's "Illegal header value",
    # retried three times as a connection failure ("the server answered, then closed...").
    refused = {
        "sk-PASTED\u201d": "has a non-ASCII character at character 10",
        "sk-PASTED ": "begins or ends with a space or tab",
        "sk-PAS\nTED": "has a line break at character 7",
        "sk-PAS\x00TED": "has a control character ('\\x00') at character 7",
    }
    for key, problem in refused.items():
        with pytest.raises(ConfigError) as caught:
            ModelEndpoint(api_key=key, key_variable="OPENAI_API_KEY")
        assert str(caught.value).startswith(f"OPENAI_API_KEY (the API key) {problem}, which")
        assert "PAS" not in str(caught.value)  # the key itself is never shown
    with pytest.raises(ConfigError, match=r"^header 'X-Team' begins or ends with a space"):
        ModelEndpoint(headers={"X-Team": "sre\t"})
    assert ModelEndpoint(api_key="sk-a b\tc", headers={"X-Team": "s r e"}).api_key == "sk-a b\tc"


async def test_a_model_name_brings_its_quirks_on_its_server() -> None:
    """o-series models answer 400 to a temperature: it is not sent to them, and still is to
    other OpenAI models."""
    for name, sent in (("o3-mini", False), ("o1", False), ("gpt-4.1", True)):
        transport = WireTransport([text_reply("ok")])
        model = _openai(name, transport)
        await collect(model, request(model="", temperature=0.2))
        await model.aclose()
        (body,) = transport.requests
        assert ("temperature" in body) is sent, name
        assert body["model"] == name


def test_a_quirk_holds_only_on_the_servers_it_names() -> None:
    assert "temperature" in for_model(PROVIDERS["openai"], "O3-pro").dropped_params
    assert "temperature" not in for_model(PROVIDERS["vllm"], "o3-local").dropped_params
    assert for_model(PROVIDERS["openai"], "gpt-4o") == PROVIDERS["openai"]
    # a quirk may change any field of the row, and keeps the row's own dropped parameters
    slow = ModelQuirk(prefixes=("old-",), dropped_params=frozenset({"seed"}), changes={})
    tools = ModelQuirk(prefixes=("old-",), changes={"stream_tools": False})
    row = for_model(PROVIDERS["cerebras"], "old-llama", (slow, tools))
    assert row.stream_tools is False
    assert row.dropped_params == PROVIDERS["cerebras"].dropped_params | {"seed"}


async def test_a_callers_client_carries_the_endpoints_key_and_stays_open() -> None:
    seen: list[httpx.Request] = []

    def answer(req: httpx.Request) -> httpx.Response:
        seen.append(req)
        return httpx.Response(
            200,
            json={
                "id": "c",
                "object": "chat.completion",
                "model": "m",
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": "hi"},
                        "finish_reason": "stop",
                    }
                ],
            },
        )

    async with httpx.AsyncClient(transport=httpx.MockTransport(answer)) as client:
        model = OpenAIChatModel(
            model="m",
            endpoint=ModelEndpoint(
                base_url="https://x.test/v1", api_key="sk-mine", headers={"x-team": "blue"}
            ),
            http=client,
            stream=False,
            clock=FakeClock(),
        )
        await collect(model, request(model=""))
        await model.aclose()
        assert not client.is_closed  # the caller's client is theirs to close
        (sent,) = seen
        assert sent.headers["authorization"] == "Bearer sk-mine"
        assert sent.headers["x-team"] == "blue"
        assert json.loads(sent.content)["model"] == "m"


async def test_a_pools_transport_serves_every_request_and_outlives_the_model() -> None:
    transport = WireTransport([text_reply("one"), text_reply("two")])
    pool = ClientPool(transport=transport)
    first = _openai("gpt-4.1", transport)
    second = OpenAIChatModel(
        model="gpt-4.1",
        endpoint=ModelEndpoint(base_url="https://api.openai.com/v1", api_key="sk-test"),
        http=pool,
        clock=FakeClock(),
    )
    await collect(first, request(model=""))
    await first.aclose()
    await collect(second, request(model=""))
    await second.aclose()
    await pool.aclose()
    assert len(transport.requests) == 2


async def test_each_request_is_sent_to_its_own_url_parsed_once_per_url() -> None:
    """httpx parsed a string URL again for each request (its host through ``ipaddress``);
    the endpoint hands it one parsed per URL, and every request still goes where it says."""
    from rho_adapters.model._http import _parsed

    wire = WireTransport([text_reply("one"), text_reply("two"), text_reply("three")])
    urls: list[str] = []

    class Recording(httpx.AsyncBaseTransport):
        async def handle_async_request(self, sent: httpx.Request) -> httpx.Response:
            urls.append(str(sent.url))
            return await wire.handle_async_request(sent)

    pool = ClientPool(transport=Recording())
    models = [
        OpenAIChatModel(
            model="m",
            endpoint=ModelEndpoint(base_url=f"http://127.0.0.1:{port}/v1", api_key="k"),
            http=pool,
            clock=FakeClock(),
        )
        for port in (8001, 8001, 8002)
    ]
    parsed_before = _parsed.cache_info()
    for model in models:
        await collect(model, request(model=""))
        await model.aclose()
    await pool.aclose()
    assert urls == [
        "http://127.0.0.1:8001/v1/chat/completions",
        "http://127.0.0.1:8001/v1/chat/completions",
        "http://127.0.0.1:8002/v1/chat/completions",
    ]
    assert _parsed.cache_info().hits - parsed_before.hits >= 1
    with pytest.raises(httpx.InvalidURL):
        _parsed("http://x:not-a-port/v1")
