"""Issue 17, items 1-5, against llama-cpp-python 0.3.36's recorded answers.

The bodies are the server's own bytes (tests/fixtures/llama_cpp_python, see its README);
``llama_cpp_python_rules`` answers by the request the way that server does (500 on null
content, an empty 200 stream on overflow or automatic tool choice while streaming).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _model_support import calls_of, collect, finish_of, make_model, request, text_of, usage_of

from rho_adapters.fakes import WireTransport
from rho_adapters.fakes.llama_cpp_python import llama_cpp_python_rules
from rho_adapters.fakes.loopback import LoopbackServer
from rho_adapters.fakes.wire import Reply, raw_reply, text_reply
from rho_adapters.model import build_model
from rho_adapters.model.openai_chat import OpenAIChatModel
from rho_domain.errors import ContextLengthExceeded, ServerError, TruncatedStream
from rho_domain.messages import AssistantMessage, ToolCall, ToolResultMessage, UserMessage
from rho_domain.model import ToolSpec

CAPTURES = Path(__file__).parent.parent / "fixtures" / "llama_cpp_python"
PATH_SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
LIST = ToolSpec(name="list", description="List files in a directory", parameters=PATH_SCHEMA)
READ = ToolSpec(name="read", description="Read a file", parameters=PATH_SCHEMA)


def recorded(name: str) -> Reply:
    """The recorded answer ``name`` (e.g. ``"08"``) as a scripted reply."""
    (body_file,) = CAPTURES.glob(f"{name}_*.body.sse")
    head = next(CAPTURES.glob(f"{name}_*.headers")).read_text().splitlines()[0]
    status = int(head.split()[1])
    body = body_file.read_bytes()
    if status >= 400:
        error = json.loads(body, strict=False)  # the server's JSON has raw newlines
        return Reply(status=status, error_body=error, headers={"server": "uvicorn"})
    return raw_reply(*([body] if body else []), headers={"server": "uvicorn"})


def recorded_request(name: str) -> dict[str, Any]:
    (path,) = CAPTURES.glob(f"{name}_*.request.json")
    loaded: dict[str, Any] = json.loads(path.read_text())
    return loaded


def llama(*replies: Reply, n_ctx: int = 4096, **kw: Any) -> tuple[OpenAIChatModel, WireTransport]:
    model, transport, _ = make_model(*replies, provider="llama-cpp-python", **kw)
    transport.rules = llama_cpp_python_rules(n_ctx=n_ctx)
    return model, transport


ROUND_TRIP = (
    UserMessage("Read a.txt"),
    AssistantMessage(text="", tool_calls=(ToolCall("call_1", "read", '{"path": "a.txt"}'),)),
    ToolResultMessage(call_id="call_1", tool_name="read", content="hello"),
)


# ----------------------------------------------------------------- 1. content of tool turns


async def test_1_a_tool_round_trip_is_accepted_because_content_is_an_empty_string() -> None:
    model, transport = llama(recorded("18"))
    events = await collect(model, request(messages=ROUND_TRIP, tools=(READ,), tool_choice="none"))
    assert text_of(events).strip()  # the recorded answer after the round trip
    assistant = transport.requests[0]["messages"][2]
    assert assistant["content"] == ""
    assert assistant["tool_calls"][0]["id"] == "call_1"


@pytest.mark.parametrize("provider", ["openai", "vllm", "ollama", "llamacpp", "generic"])
async def test_1_every_profile_sends_an_empty_string_never_null(provider: str) -> None:
    model, transport, _ = make_model(recorded("18"), provider=provider)
    await collect(model, request(messages=ROUND_TRIP))
    assert transport.requests[0]["messages"][2]["content"] == ""


async def test_1_the_recorded_validation_500_is_not_retried() -> None:
    model, transport = llama(recorded("17"), recorded("18"))
    transport.rules = []  # replay the recorded 500 whatever we send
    with pytest.raises(ServerError, match="validation errors"):
        await collect(model, request(messages=ROUND_TRIP))
    assert len(transport.requests) == 1  # the same request would fail the same way


# ----------------------------------------------------------------- 2. overflow in every form


async def test_2_an_empty_200_stream_is_resent_and_the_400_says_overflow() -> None:
    model, transport = llama(recorded("07"), recorded("08"))
    transport.rules = []
    with pytest.raises(ContextLengthExceeded) as info:
        await collect(model)
    assert (info.value.window, info.value.prompt_tokens) == (4096, 5031)
    assert [r["stream"] for r in transport.requests] == [True, False]
    assert await model.context_window() == 4096  # learned from the server's message


async def test_2_overflow_by_the_rules_of_the_server() -> None:
    model, transport = llama(n_ctx=256)
    big = request(messages=(UserMessage("word " * 400),), max_output_tokens=16)
    with pytest.raises(ContextLengthExceeded) as info:
        await collect(model, big)
    assert info.value.window == 256
    assert len(transport.requests) == 2


def test_2_overflow_wordings_of_other_servers() -> None:
    from rho_adapters.model._errors import error_from_response

    llama_server = json.dumps(
        {
            "error": {
                "code": 400,
                "message": "the request exceeds the available context size, try increasing it",
                "type": "exceed_context_size_error",
                "n_prompt_tokens": 5000,
                "n_ctx": 4096,
            }
        }
    )
    exc = error_from_response(400, llama_server)
    assert isinstance(exc, ContextLengthExceeded)
    assert (exc.window, exc.prompt_tokens) == (4096, 5000)
    old = error_from_response(500, '{"error": {"message": "Context size has been exceeded."}}')
    assert isinstance(old, ContextLengthExceeded)
    python_old = error_from_response(
        400, '{"error": {"message": "Requested tokens (5000) exceed context window of 4096"}}'
    )
    assert isinstance(python_old, ContextLengthExceeded)
    assert (python_old.window, python_old.prompt_tokens) == (4096, 5000)


# ----------------------------------------------------------------- 3. tool choice and streaming


async def test_3_the_profile_sends_auto_and_does_not_stream_tool_turns() -> None:
    model, transport = llama(recorded("14"))
    events = await collect(model, request(tools=(LIST, READ)))
    body = transport.requests[0]
    assert (body["tool_choice"], body["stream"]) == ("auto", False)
    assert calls_of(events)[0][1:] == ("list", '{ "path": "data.txt"}')
    assert finish_of(events) == "tool_calls"


async def test_3_a_server_that_streams_auto_choice_empty_is_learned() -> None:
    # An unknown server (generic) with the recorded behaviour: 13 (empty), then 14.
    model, transport, _ = make_model(recorded("13"), recorded("14"), recorded("14"))
    req = request(tools=(LIST, READ), tool_choice="auto")
    assert calls_of(await collect(model, req))[0][1] == "list"
    assert calls_of(await collect(model, req))[0][1] == "list"
    assert [r["stream"] for r in transport.requests] == [True, False, False]


async def test_3_a_named_tool_choice_streams_and_assembles_the_recorded_call() -> None:
    model, transport = llama(recorded("15"))
    events = await collect(model, request(tools=(LIST, READ), tool_choice="list"))
    body = transport.requests[0]
    assert body["tool_choice"] == recorded_request("15")["tool_choice"]
    assert body["stream"] is True
    ((_, name, arguments),) = calls_of(events)
    assert name == "list"
    assert arguments.startswith('{ "path": "/Users/')
    # The recorded call ran into max_tokens mid-string, yet said "tool_calls".
    assert finish_of(events) == "length"


async def test_3_arguments_cut_by_max_tokens_finish_as_length_not_tool_calls() -> None:
    model, _ = llama(recorded("16"))
    events = await collect(model, request(tools=(READ,), tool_choice="read", max_output_tokens=4))
    ((_, name, arguments),) = calls_of(events)
    assert (name, arguments) == ("read", '{ "path')
    assert finish_of(events) == "length"


# ----------------------------------------------------------------- 4. the server, asked


@pytest.fixture
def llama_server() -> Iterator[LoopbackServer]:
    server = LoopbackServer([recorded("03")], rules=llama_cpp_python_rules())
    server.start()
    yield server
    server.stop()


async def test_4_the_server_is_detected_by_what_it_says_not_by_its_port(
    llama_server: LoopbackServer,
) -> None:
    model = build_model(model="x", base_url=llama_server.base_url, api_key=None, stream=False)
    events = await collect(model, request(max_output_tokens=16))
    await model.aclose()
    assert isinstance(model, OpenAIChatModel)
    assert model.provider.name == "llama-cpp-python"
    body = llama_server.requests[0]
    assert body["max_tokens"] == 16
    assert "max_completion_tokens" not in body  # ignored by this server (capture 05)
    assert "GET /v1/models" in llama_server.other_requests
    assert text_of(events).startswith("I'm here to help")


async def test_4_a_server_that_says_nothing_gets_max_tokens() -> None:
    with LoopbackServer([recorded("03")]) as server:
        url = server.base_url.replace("127.0.0.1", "localhost")
        model = build_model(model="x", base_url=url, api_key=None, stream=False)
        await collect(model, request(max_output_tokens=16))
        await model.aclose()
    assert model.provider.name == "generic"  # type: ignore[attr-defined]
    assert server.requests[0]["max_tokens"] == 16


# ----------------------------------------------------------------- 5. usage


async def test_5_streamed_usage_is_estimated_and_counts_the_tool_schemas() -> None:
    model, transport = llama(recorded("02"), recorded("02"), recorded("02"))
    plain = usage_of(await collect(model, request()))
    with_tools = usage_of(await collect(model, request(tools=(LIST, READ), tool_choice="read")))
    # With tool_choice "none" this server leaves the schemas out of the prompt: not counted.
    hidden = usage_of(await collect(model, request(tools=(LIST, READ), tool_choice="none")))
    assert hidden.input_tokens == plain.input_tokens
    assert transport.requests[0]["stream"] is True
    assert "stream_options" not in transport.requests[0]  # ignored by this server (02)
    assert plain.estimated
    assert with_tools.estimated
    schemas = len(json.dumps([LIST.to_openai(), READ.to_openai()], separators=(",", ":")))
    assert with_tools.input_tokens - plain.input_tokens >= schemas // 4


async def test_5_non_streamed_usage_is_real() -> None:
    model, transport = llama(recorded("03"), stream=False)
    usage = usage_of(await collect(model, request(messages=(UserMessage("Say hi."),))))
    assert transport.requests[0]["stream"] is False
    assert (usage.input_tokens, usage.output_tokens, usage.estimated) == (33, 16, False)


async def test_real_usage_calibrates_the_estimate() -> None:
    # SmolLM2 reads about two characters per token of this kind of text, not four.
    model, _ = llama(text_reply("ok", usage=(611, 1)), stream=False)
    long = request(messages=(UserMessage("ab, " * 300),))
    before = model.estimate_tokens(long)
    await collect(model, long)
    assert model.estimate_tokens(long) == 611
    assert before < 611 * 0.6


async def test_token_counts_come_from_the_tokenizer_endpoint() -> None:
    model, transport = llama()
    req = request(messages=(UserMessage("abcd" * 100),), tools=(LIST,))
    counted = await model.count_tokens(req)
    assert "POST /extras/tokenize/count" in transport.other_requests
    assert counted > model.meter.estimate_chars(400)  # tools and framing included
    assert model.estimate_tokens(req) == counted  # and the estimate now agrees


async def test_2_an_empty_answer_near_the_known_window_is_an_overflow() -> None:
    # A server that stays silent with and without streaming, once its window is known.
    model, transport = llama(recorded("08"), recorded("07"), recorded("07"))
    transport.rules = []
    with pytest.raises(ContextLengthExceeded):
        await collect(model)  # the 400: the window (4096) is now known
    near = request(messages=(UserMessage("word " * 4000),))
    with pytest.raises(ContextLengthExceeded, match="near the context window of 4096") as info:
        await collect(model, near)
    assert info.value.window == 4096
    small = request(messages=(UserMessage("hi"),))
    model2, transport2 = llama(recorded("07"), recorded("07"))
    transport2.rules = []
    with pytest.raises(TruncatedStream, match="empty"):  # far from any window: not guessed
        await collect(model2, small)
