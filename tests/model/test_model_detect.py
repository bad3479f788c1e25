"""Server detection from what the server says (/props, /v1/models), never from the port."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest
from _model_support import collect, make_model, request

from rho_adapters.fakes import WireTransport
from rho_adapters.fakes.wire import Exchange, Reply, raw_reply, text_reply
from rho_adapters.model.anthropic_request import messages_body
from rho_adapters.model.detect import server_root
from rho_domain.model import StreamFinished, ToolSpec


def serving(path: str, payload: Any, headers: dict[str, str] | None = None) -> Any:
    def rule(exchange: Exchange) -> Reply | None:
        if exchange.method == "GET" and exchange.path == path:
            return raw_reply(json.dumps(payload).encode(), headers=headers or {})
        return None

    return rule


VLLM = {"data": [{"id": "qwen", "owned_by": "vllm", "max_model_len": 32768}]}
OLLAMA = {"data": [{"id": "llama3", "owned_by": "library"}]}
LLAMA_SERVER = {"default_generation_settings": {"n_ctx": 8192}}


@pytest.mark.parametrize(
    ("rule", "profile", "window"),
    [
        (serving("/v1/models", VLLM), "vllm", 32768),
        (serving("/v1/models", OLLAMA), "ollama", None),
        (serving("/props", LLAMA_SERVER), "llamacpp", 8192),
        (serving("/v1/models", {"data": [{"id": "m", "owned_by": "acme"}]}), "generic", None),
    ],
)
async def test_the_server_says_what_it_is(rule: Any, profile: str, window: int | None) -> None:
    model, transport, _ = make_model(text_reply("ok"), detect=True)
    transport.rules = [rule]
    await collect(model, request(max_output_tokens=5))
    assert model.provider.name == profile
    assert await model.context_window() == window
    assert transport.other_requests[:2] == ["GET /props", "GET /v1/models"]  # asked once
    assert len(transport.other_requests) == 2


async def test_a_server_that_answers_nothing_stays_generic_with_max_tokens() -> None:
    model, transport, _ = make_model(text_reply("ok"), detect=True)
    await collect(model, request(max_output_tokens=5))
    assert model.provider.name == "generic"
    assert transport.requests[0]["max_tokens"] == 5


def slow_questions(transport: WireTransport, order: list[str]) -> None:
    """Each request's arrival goes to ``order``; the server's GETs (the probe) take 20 ms."""
    answer: Callable[[httpx.Request], Awaitable[httpx.Response]] = transport.handle_async_request

    async def handle(request: httpx.Request) -> httpx.Response:
        order.append(f"{request.method} {request.url.path}")
        if request.method == "GET":
            await asyncio.sleep(0.02)
        return await answer(request)

    transport.handle_async_request = handle  # type: ignore[method-assign]


async def test_a_call_arriving_while_the_probe_is_out_waits_for_its_answer() -> None:
    # A run asks for the window ahead, beside its start: its first call must still go out
    # as the server's answer says (llama-server here), never before the probe answered.
    model, transport, _ = make_model(text_reply("ok"), detect=True)
    transport.rules = [serving("/props", LLAMA_SERVER)]
    order: list[str] = []
    slow_questions(transport, order)
    ahead = asyncio.create_task(model.context_window())
    await asyncio.sleep(0)  # the probe's first GET is out
    window, events = await asyncio.gather(model.context_window(), collect(model, request()))
    assert (await ahead, window) == (8192, 8192)
    assert order == ["GET /props", "GET /v1/models", "POST /v1/chat/completions"]
    assert model.provider.name == "llamacpp"
    assert isinstance(events[-1], StreamFinished)


async def test_a_probe_cancelled_midway_is_asked_again() -> None:
    model, transport, _ = make_model(text_reply("ok"), detect=True)
    transport.rules = [serving("/props", LLAMA_SERVER)]
    order: list[str] = []
    slow_questions(transport, order)
    ahead = asyncio.create_task(model.context_window())
    await asyncio.sleep(0.005)
    ahead.cancel()
    with pytest.raises(asyncio.CancelledError):
        await ahead
    assert await model.context_window() == 8192
    assert order == ["GET /props", "GET /props", "GET /v1/models"]


def test_server_root_drops_the_api_prefix() -> None:
    assert server_root("http://127.0.0.1:8000/v1") == "http://127.0.0.1:8000"
    assert server_root("http://box/llm/v1/") == "http://box/llm"


def test_anthropic_named_tool_choice() -> None:
    spec = ToolSpec(name="read", description="Read", parameters={"type": "object"})
    body = messages_body(request(tools=(spec,), tool_choice="read"))
    assert body["tool_choice"] == {"type": "tool", "name": "read"}
