"""Anthropic Messages streaming (content blocks, tool-use input deltas, usage, errors)
through MockTransport, with a fake clock."""

from __future__ import annotations

import json
import random
from typing import Any

import httpx
import pytest
from _model_support import calls_of, finish_of, reasoning_of, request, text_of, usage_of

from rho_adapters.fakes.clock import FakeClock
from rho_adapters.model import AnthropicModel, ClientPool, ModelEndpoint, RetryPolicy
from rho_adapters.model.anthropic_request import messages_body
from rho_domain.errors import (
    AuthenticationError,
    ModelNotFoundError,
    ServerError,
    StreamError,
    TruncatedStream,
)
from rho_domain.messages import AssistantMessage, ToolCall, ToolResultMessage, UserMessage
from rho_domain.model import StreamEvent, ToolCallChunk, ToolSpec


def ev(name: str, **body: Any) -> bytes:
    return f"event: {name}\ndata: {json.dumps({'type': name, **body})}\n\n".encode()


START = ev(
    "message_start",
    message={
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "content": [],
        "model": "claude",
        "stop_reason": None,
        "usage": {
            "input_tokens": 472,
            "output_tokens": 1,
            "cache_read_input_tokens": 100,
            "cache_creation_input_tokens": 0,
        },
    },
)
TOOL_STREAM = [
    START,
    ev("content_block_start", index=0, content_block={"type": "text", "text": ""}),
    ev("ping"),
    ev("content_block_delta", index=0, delta={"type": "text_delta", "text": "Okay, let me "}),
    ev("content_block_delta", index=0, delta={"type": "text_delta", "text": "check."}),
    ev("content_block_stop", index=0),
    ev(
        "content_block_start",
        index=1,
        content_block={"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {}},
    ),
    ev("content_block_delta", index=1, delta={"type": "input_json_delta", "partial_json": ""}),
    ev(
        "content_block_delta",
        index=1,
        delta={"type": "input_json_delta", "partial_json": '{"location":'},
    ),
    ev(
        "content_block_delta",
        index=1,
        delta={"type": "input_json_delta", "partial_json": ' "Paris"}'},
    ),
    ev("content_block_stop", index=1),
    ev(
        "message_delta",
        delta={"stop_reason": "tool_use", "stop_sequence": None},
        usage={"output_tokens": 65},
    ),
    ev("message_stop"),
]


def model_for(
    *responses: httpx.Response | list[bytes],
    seen: list[httpx.Request] | None = None,
    clock: FakeClock | None = None,
) -> AnthropicModel:
    queue = list(responses)
    seen = seen if seen is not None else []

    def handler(req: httpx.Request) -> httpx.Response:
        seen.append(req)
        item = queue.pop(0)
        if isinstance(item, httpx.Response):
            return item
        return httpx.Response(
            200, headers={"content-type": "text/event-stream"}, content=b"".join(item)
        )

    return AnthropicModel(
        model="claude",
        endpoint=ModelEndpoint(api_key="sk-ant", retry=RetryPolicy(max_retries=2)),
        http=ClientPool(transport=httpx.MockTransport(handler)),
        clock=clock or FakeClock(),
        rng=random.Random(1),
    )


async def run(model: AnthropicModel, **req: Any) -> list[StreamEvent]:
    return [e async for e in model.stream(request(**req))]


async def test_text_then_tool_use_with_input_json_deltas_and_usage() -> None:
    seen: list[httpx.Request] = []
    events = await run(model_for(TOOL_STREAM, seen=seen))
    assert text_of(events) == "Okay, let me check."
    assert calls_of(events) == [("toolu_01", "get_weather", '{"location": "Paris"}')]
    usage = usage_of(events)
    assert (usage.input_tokens, usage.cached_tokens, usage.output_tokens) == (572, 100, 65)
    assert usage.estimated is False
    assert finish_of(events) == "tool_calls"
    chunks = [e for e in events if isinstance(e, ToolCallChunk)]
    assert chunks[0].name == "get_weather"
    assert seen[0].headers["x-api-key"] == "sk-ant"
    assert seen[0].headers["anthropic-version"] == "2023-06-01"
    assert str(seen[0].url) == "https://api.anthropic.com/v1/messages"


async def test_thinking_blocks_and_signature_and_empty_tool_input() -> None:
    events = await run(
        model_for(
            [
                START,
                ev(
                    "content_block_start",
                    index=0,
                    content_block={"type": "thinking", "thinking": "", "signature": ""},
                ),
                ev(
                    "content_block_delta",
                    index=0,
                    delta={"type": "thinking_delta", "thinking": "hmm"},
                ),
                ev(
                    "content_block_delta",
                    index=0,
                    delta={"type": "signature_delta", "signature": "s"},
                ),
                ev("content_block_stop", index=0),
                ev(
                    "content_block_start",
                    index=1,
                    content_block={"type": "tool_use", "id": "t1", "name": "list", "input": {}},
                ),
                ev("content_block_stop", index=1),
                ev("message_delta", delta={"stop_reason": "tool_use"}, usage={"output_tokens": 3}),
                ev("message_stop"),
            ]
        )
    )
    assert reasoning_of(events) == "hmm"
    assert calls_of(events) == [("t1", "list", "{}")]


async def test_error_event_mid_stream_keeps_partial_text() -> None:
    stream = [
        *TOOL_STREAM[:4],
        ev("error", error={"type": "overloaded_error", "message": "Overloaded"}),
    ]
    with pytest.raises(StreamError, match="Overloaded") as info:
        await run(model_for(stream))
    assert info.value.partial_text == "Okay, let me "


async def test_eof_without_message_stop_is_truncated() -> None:
    with pytest.raises(TruncatedStream) as info:
        await run(model_for(TOOL_STREAM[:5]))
    assert info.value.partial_text == "Okay, let me check."


async def test_message_delta_without_message_stop_is_complete() -> None:
    events = await run(model_for(TOOL_STREAM[:-1]))
    assert finish_of(events) == "tool_calls"


async def test_529_overloaded_is_retried_with_backoff_and_401_is_not() -> None:
    clock = FakeClock()
    overloaded = httpx.Response(
        529, json={"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    )
    events = await run(model_for(overloaded, TOOL_STREAM, clock=clock))
    assert text_of(events) == "Okay, let me check."
    assert len(clock.sleeps) == 1
    with pytest.raises(ServerError):
        await run(model_for(overloaded, overloaded, overloaded))
    denied = httpx.Response(
        401,
        json={
            "type": "error",
            "error": {"type": "authentication_error", "message": "invalid x-api-key"},
        },
    )
    with pytest.raises(AuthenticationError, match="invalid x-api-key"):
        await run(model_for(denied))


def test_body_maps_system_tools_tool_use_and_tool_results() -> None:
    spec = ToolSpec(name="list", description="List", parameters={"type": "object"})
    history = (
        UserMessage("list"),
        AssistantMessage(
            text="Sure.",
            tool_calls=(ToolCall("t1", "list", '{"path": "."}'), ToolCall("t2", "list", "{bad")),
        ),
        ToolResultMessage(call_id="t1", tool_name="list", content="a.txt"),
        ToolResultMessage(call_id="t2", tool_name="list", content="bad json", is_error=True),
        UserMessage("thanks"),
    )
    body = messages_body(
        request(
            messages=history,
            tools=(spec,),
            tool_choice="required",
            parallel_tool_calls=False,
            max_output_tokens=50,
            temperature=0.3,
        )
    )
    assert body["system"] == "sys"
    assert body["max_tokens"] == 50
    assert body["temperature"] == 0.3
    assert body["tools"] == [
        {"name": "list", "description": "List", "input_schema": {"type": "object"}}
    ]
    assert body["tool_choice"] == {"type": "any", "disable_parallel_tool_use": True}
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "list"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Sure."},
                {"type": "tool_use", "id": "t1", "name": "list", "input": {"path": "."}},
                {
                    "type": "tool_use",
                    "id": "t2",
                    "name": "list",
                    "input": {"_unparsed_arguments": "{bad"},
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "a.txt"},
                {
                    "type": "tool_result",
                    "tool_use_id": "t2",
                    "content": "bad json",
                    "is_error": True,
                },
                {"type": "text", "text": "thanks"},
            ],
        },
    ]


def test_reasoning_effort_enables_thinking_with_room_under_max_tokens() -> None:
    body = messages_body(
        request(reasoning_effort="medium", temperature=0.5, max_output_tokens=1000)
    )
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 8192}
    assert body["max_tokens"] > 8192
    assert "temperature" not in body


async def test_a_404_on_anthropic_says_which_api_the_server_must_speak() -> None:
    # --provider anthropic pointed at an OpenAI-compatible server (llama.cpp, vLLM): its
    # 404 at .../v1/messages said to check that the base URL includes "/v1", which it did.
    with pytest.raises(ModelNotFoundError) as raised:
        await run(model_for(httpx.Response(404, text="Not Found")))
    said = str(raised.value)
    assert "usually /v1" not in said
    assert "the server speaks Anthropic's Messages API (POST /v1/messages" in said
    assert said.endswith("an OpenAI-compatible server takes --provider openai)")
