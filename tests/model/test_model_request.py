"""Request bodies per provider row, choosing the row, non-streaming."""

from __future__ import annotations

import pytest
from _model_support import calls_of, collect, finish_of, make_model, request, text_of, usage_of

from rho_adapters.fakes.wire import call, http_error, text_reply, tool_reply
from rho_adapters.model import build_model
from rho_adapters.model.providers import (
    PROVIDERS,
    guess_provider_name,
    provider_owning,
    resolve_provider,
)
from rho_adapters.model.tokens import prompt_chars, prompt_text
from rho_domain.errors import ConfigError
from rho_domain.messages import (
    AssistantMessage,
    Message,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from rho_domain.model import ModelRequest, ToolSpec

SPEC = ToolSpec(name="list", description="List files", parameters={"type": "object"})
FULL = {
    "tools": (SPEC,),
    "tool_choice": "auto",
    "parallel_tool_calls": False,
    "response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": {}}},
    "reasoning_effort": "low",
    "service_tier": "flex",
    "max_output_tokens": 100,
    "temperature": 0.2,
}


@pytest.mark.parametrize(
    ("url", "name"),
    [
        # A host that says nothing is "generic" (max_tokens) until the server is asked.
        (None, "openai"),
        ("https://api.openai.com/v1", "openai"),
        ("https://api.cerebras.ai/v1", "cerebras"),
        ("https://api.groq.com/openai/v1", "groq"),
        ("http://localhost:11434/v1", "generic"),
        ("https://ollama.com/v1", "ollama"),
        ("http://127.0.0.1:8080/v1", "generic"),
        ("http://gpu-box:8000/v1", "generic"),
        ("https://openrouter.ai/api/v1", "openrouter"),
        ("https://res.openai.azure.com/openai/v1", "azure"),
        ("https://my-proxy.example/v1", "generic"),
    ],
)
def test_profile_guessed_from_base_url(url: str | None, name: str) -> None:
    assert guess_provider_name(url) == name


def test_profile_chosen_by_config_overrides_the_guess_and_unknown_names_fail() -> None:
    assert resolve_provider("ollama", "https://api.openai.com/v1").name == "ollama"
    assert resolve_provider("llama.cpp", None).name == "llamacpp"
    with pytest.raises(ConfigError, match="unknown provider 'nope'"):
        resolve_provider("nope", None)


def test_every_provider_row_is_found_by_name_and_by_its_own_url_or_server() -> None:
    """Adding a server is one row: its name, host or owner hints and key variable need nothing
    else. A hosted row is found by its own URL; a local row's URL (localhost) names no host, so
    it is ``generic`` until detection finds the row by what the server says (never the port)."""
    for row in PROVIDERS.values():
        assert resolve_provider(row.name, None) is row
        if row.owners:  # a local server: its default URL is localhost
            assert guess_provider_name(row.default_base_url) == "generic"
            assert all(provider_owning(owner) == row.name for owner in row.owners)
        elif row.default_base_url:
            assert guess_provider_name(row.default_base_url) == row.name
        assert row.key_variable


async def body_for(provider: str, **req: object) -> dict[str, object]:
    model, transport, _ = make_model(text_reply("ok"), provider=provider)
    await collect(model, request(**req))
    return transport.requests[0]


async def test_openai_body_has_every_option_and_asks_for_usage() -> None:
    body = await body_for("openai", **FULL)
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True, "include_obfuscation": False}
    assert body["max_completion_tokens"] == 100
    assert "max_tokens" not in body
    assert body["tools"] == [SPEC.to_openai()]
    assert (body["tool_choice"], body["parallel_tool_calls"]) == ("auto", False)
    assert body["response_format"]["type"] == "json_schema"  # type: ignore[index]
    assert (body["reasoning_effort"], body["service_tier"], body["temperature"]) == (
        "low",
        "flex",
        0.2,
    )


async def test_ollama_reads_only_max_tokens_and_ignores_tool_choice() -> None:
    body = await body_for("ollama", **FULL)
    assert body["max_tokens"] == 100
    assert "max_completion_tokens" not in body
    assert "tool_choice" not in body
    assert "parallel_tool_calls" not in body
    assert body["stream_options"] == {"include_usage": True}


async def test_llamacpp_gets_max_tokens() -> None:
    body = await body_for("llamacpp", **FULL)
    assert body["max_tokens"] == 100


async def test_cerebras_drops_the_parameters_it_rejects() -> None:
    body = await body_for("cerebras", **FULL)
    assert "parallel_tool_calls" not in body
    assert "service_tier" not in body
    assert body["max_completion_tokens"] == 100
    assert body["reasoning_effort"] == "low"


async def test_openrouter_sends_reasoning_as_an_object() -> None:
    body = await body_for("openrouter", **FULL)
    assert body["reasoning"] == {"effort": "low"}
    assert "reasoning_effort" not in body


async def test_groq_body_never_has_message_names() -> None:
    body = await body_for("groq")
    assert all("name" not in m for m in body["messages"])  # type: ignore[attr-defined]


async def test_messages_system_user_assistant_tool_calls_and_tool_results() -> None:
    history = (
        UserMessage("list it"),
        AssistantMessage(
            text="", tool_calls=(ToolCall("c1", "list", '{"path": "."}'),), reasoning="think"
        ),
        ToolResultMessage(call_id="c1", tool_name="list", content="a.txt"),
        AssistantMessage(text="Found a.txt"),
    )
    body = await body_for("vllm", messages=history)
    assert body["messages"] == [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "list it"},
        {
            "role": "assistant",
            "content": "",  # never null: llama-cpp-python answers 500 (capture 17)
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "list", "arguments": '{"path": "."}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "a.txt"},
        {"role": "assistant", "content": "Found a.txt"},
    ]


async def test_constructor_defaults_fill_options_the_request_leaves_none() -> None:
    model = build_model(
        model="cfg-model",
        base_url="http://x.test/v1",
        api_key="k",
        temperature=0.5,
        max_output_tokens=10,
        reasoning_effort="high",
    )
    assert model.defaults.temperature == 0.5  # type: ignore[attr-defined]
    await model.aclose()
    from rho_adapters.model.openai_request import RequestDefaults

    m, transport, _ = make_model(
        text_reply("ok"), defaults=RequestDefaults(temperature=0.5, max_output_tokens=10)
    )
    await collect(m, request(model="", temperature=0.9))
    body = transport.requests[0]
    assert (body["model"], body["temperature"], body["max_tokens"]) == ("m", 0.9, 10)


async def test_auth_headers_bearer_and_azure_api_key_and_url_query_kept() -> None:
    model, transport, _ = make_model(text_reply("ok"))
    await collect(model)
    assert transport.headers[0]["authorization"] == "Bearer sk-test"
    assert transport.urls[0] == "http://fake.test/v1/chat/completions"
    model, transport, _ = make_model(
        text_reply("ok"),
        provider="azure",
        base_url="https://r.openai.azure.com/openai/v1?api-version=preview",
    )
    await collect(model)
    assert transport.headers[0]["api-key"] == "sk-test"
    assert "authorization" not in transport.headers[0]
    assert transport.urls[0] == (
        "https://r.openai.azure.com/openai/v1/chat/completions?api-version=preview"
    )


async def test_non_streaming_mode_yields_the_same_events() -> None:
    reply = tool_reply(
        call("list", {"path": "."}, "c1"),
        call("read", '{"path"', "c2"),
        text="Looking.",
        reasoning="plan it",
    )
    streamed, _, _ = make_model(reply)
    whole, transport, _ = make_model(reply, stream=False)
    s_events, w_events = await collect(streamed), await collect(whole)
    assert transport.requests[0]["stream"] is False
    assert "stream_options" not in transport.requests[0]
    for events in (s_events, w_events):
        assert text_of(events) == "Looking."
        assert calls_of(events) == [("c1", "list", '{"path": "."}'), ("c2", "read", '{"path"')]
        assert usage_of(events).input_tokens == 10
        assert finish_of(events) == "length"  # '{"path"' was cut: not a finished call


def test_build_model_picks_the_adapter_and_validates() -> None:
    from rho_adapters.model import AnthropicModel, OpenAIChatModel

    assert isinstance(build_model(model="m", base_url=None, api_key=None), OpenAIChatModel)
    m = build_model(model="c", base_url=None, api_key="k", provider="anthropic")
    assert isinstance(m, AnthropicModel)
    m2 = build_model(model="c", base_url="https://api.anthropic.com", api_key="k")
    assert isinstance(m2, AnthropicModel)
    with pytest.raises(ConfigError, match="needs base_url"):
        build_model(model="m", base_url=None, api_key="k", provider="azure")
    ollama = build_model(model="q", base_url=None, api_key=None, provider="ollama")
    assert ollama.url == "http://localhost:11434/v1/chat/completions"  # type: ignore[attr-defined]


@pytest.mark.parametrize("stream", [None, True])
async def test_a_400_naming_stream_on_a_tool_turn_is_resent_unstreamed(stream: bool | None) -> None:
    """``stream`` None and True both mean "stream where the server can": a server that says
    it cannot stream tool calls gets the request again without streaming, and so do later
    tool turns."""
    refusal = http_error(400, "stream is not supported with tools")
    reply = tool_reply(call("list", {"path": "."}, "c1"))
    model, transport, _ = make_model(refusal, reply, text_reply("ok"), stream=stream)
    events = await collect(model, request(tools=(SPEC,)))
    assert calls_of(events) == [("c1", "list", '{"path": "."}')]
    await collect(model, request(tools=(SPEC,)))
    assert [r["stream"] for r in transport.requests] == [True, False, False]


@pytest.mark.parametrize(
    ("system", "messages", "tools"),
    [
        ("", (), ()),
        ("sys", (), ()),
        ("", (UserMessage("hi"),), ()),
        (
            "You are a helper.",
            (
                UserMessage("list it"),
                AssistantMessage(
                    text="", tool_calls=(ToolCall(id="c1", name="list", arguments="{}"),)
                ),
                ToolResultMessage(call_id="c1", tool_name="list", content="a\nb"),
                AssistantMessage(text="Two files."),
                UserMessage(""),
            ),
            (ToolSpec(name="list", description="List.", parameters={"type": "object"}),),
        ),
    ],
)
def test_prompt_chars_is_the_length_of_prompt_text(
    system: str, messages: tuple[Message, ...], tools: tuple[ToolSpec, ...]
) -> None:
    """Estimates count characters without building the text; the count must be its length."""
    req = ModelRequest(model="m", system=system, messages=messages, tools=tools)
    assert prompt_chars(req) == len(prompt_text(req))
