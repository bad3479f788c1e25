"""Error shapes: an error object in the middle of a stream, a stream cut short, and HTTP
errors as OpenAI, vLLM, Cerebras and the other compatible servers send them."""

from __future__ import annotations

import json

import pytest
from _model_support import DONE, chunk, collect, data, make_model, run_body, text_of

from rho_adapters.fakes.wire import garbage, http_error, raw_reply, stream_error, text_reply
from rho_adapters.model import RetryPolicy
from rho_domain.errors import (
    AuthenticationError,
    BadRequest,
    ContextLengthExceeded,
    ModelError,
    ModelNotFoundError,
    ModelProtocolError,
    RateLimited,
    ServerError,
    StreamError,
    TruncatedStream,
)


async def expect(error: type[ModelError], *pieces: bytes) -> ModelError:
    with pytest.raises(error) as info:
        await run_body(*pieces)
    return info.value


async def test_data_event_with_error_keeps_partial_text_vllm_then_done() -> None:
    exc = await expect(
        StreamError,
        chunk({"content": "partial "}),
        data({"error": {"message": "boom", "type": "InternalServerError", "code": 500}}),
        DONE,
    )
    assert exc.partial_text == "partial "
    assert "boom" in str(exc)


async def test_groq_event_error_without_done() -> None:
    error = {
        "error": {
            "message": "tool call validation failed",
            "type": "invalid_request_error",
            "code": "tool_use_failed",
            "failed_generation": "<bad>",
            "status_code": 400,
        }
    }
    exc = await expect(
        StreamError,
        chunk({"content": "a"}),
        b"event: error\ndata: " + json.dumps(error).encode() + b"\n\n",
    )
    assert "tool_use_failed" in str(exc)
    assert "<bad>" in str(exc)
    assert exc.partial_text == "a"


async def test_event_error_whose_data_has_no_error_key_is_still_an_error() -> None:
    await expect(StreamError, b'event: error\ndata: {"message": "overloaded"}\n\n')


async def test_openrouter_error_beside_normal_choices_then_done() -> None:
    exc = await expect(
        StreamError,
        chunk({"content": "half"}),
        data(
            {
                "id": "gen-1",
                "error": {"code": 502, "message": "upstream died"},
                "choices": [{"index": 0, "delta": {"content": "!"}, "finish_reason": "error"}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1},
            }
        ),
        DONE,
    )
    assert exc.partial_text == "half"
    assert "upstream died" in str(exc)


async def test_llama_cpp_error_event_without_choices_is_not_dropped() -> None:
    await expect(
        StreamError,
        data({"error": {"code": 500, "message": "slot unavailable", "type": "server_error"}}),
    )


async def test_mid_stream_context_overflow_is_context_length_exceeded() -> None:
    await expect(
        ContextLengthExceeded,
        data(
            {
                "error": {
                    "code": 400,
                    "message": "request exceeds the available context size",
                    "type": "exceed_context_size_error",
                }
            }
        ),
    )


async def test_empty_200_stream_is_resent_without_streaming_and_truncated_if_empty_again() -> None:
    model, transport, _ = make_model(raw_reply(), raw_reply())
    with pytest.raises(TruncatedStream, match="empty") as info:
        await collect(model)
    assert "fake.test" in str(info.value)
    assert [r["stream"] for r in transport.requests] == [True, False]


async def test_eof_with_neither_finish_reason_nor_done_is_truncated_with_partial_text() -> None:
    exc = await expect(TruncatedStream, chunk({"content": "so far"}), chunk({"content": "!"}))
    assert exc.partial_text == "so far!"


async def test_only_comments_then_eof_is_an_empty_stream_answered_without_streaming() -> None:
    model, transport, _ = make_model(
        raw_reply(b": OPENROUTER PROCESSING\n\n" * 3), text_reply("there it is")
    )
    assert text_of(await collect(model)) == "there it is"
    assert [r["stream"] for r in transport.requests] == [True, False]


async def test_a_garbage_event_between_text_chunks_is_skipped_with_a_warning() -> None:
    """Issue 16: one unparseable event ended the run although the answer was whole."""
    from rho_domain.model import StreamWarning

    model, _, _ = make_model(text_reply("one two three", faults=(garbage(after=2),)))
    events = await collect(model)
    assert text_of(events) == "one two three"
    warnings = [e for e in events if isinstance(e, StreamWarning)]
    assert len(warnings) == 1
    assert "not JSON" in warnings[0].message
    assert warnings[0].name == "parse_error"
    assert warnings[0].detail  # the raw event, for the trace


async def test_unknown_events_are_traced_and_the_stream_goes_on() -> None:
    """The design documents' TraceEvent: an event of another type, or a JSON object that is
    not a chunk, is skipped and reported; the answer is whole."""
    from rho_domain.model import StreamWarning

    events = await run_body(
        chunk({"content": "one "}),
        b"event: ping\ndata: {}\n\n",
        data({"type": "keepalive", "seq": 3}),
        chunk({"content": "two"}),
        chunk({}, "stop"),
        DONE,
    )
    assert text_of(events) == "one two"
    traces = [e for e in events if isinstance(e, StreamWarning)]
    assert [(t.name, t.detail) for t in traces] == [
        ("unknown_event", "{}"),
        ("unknown_event", json.dumps({"type": "keepalive", "seq": 3})),
    ]
    assert "of type 'ping'" in traces[0].message


async def test_a_garbage_event_inside_a_tool_call_is_a_protocol_error() -> None:
    """The event may have carried part of the arguments: the call cannot be trusted."""
    start = {"index": 0, "id": "c1", "type": "function", "function": {"name": "f"}}
    args = {"index": 0, "function": {"arguments": '{"a": 1}'}}
    with pytest.raises(ModelProtocolError, match="not JSON"):
        await run_body(
            chunk({"content": "one "}),
            chunk({"tool_calls": [start]}),
            b"data: {garbage\n\n",
            chunk({"tool_calls": [args]}),
            chunk({}, "tool_calls"),
            DONE,
        )


async def test_injected_mid_stream_error_fault() -> None:
    model, transport, _ = make_model(text_reply("one two", faults=(stream_error(2, "bad"),)))
    with pytest.raises(StreamError, match="bad") as info:
        await collect(model)
    assert info.value.partial_text == "one "
    assert len(transport.requests) == 1  # a stream error is not retried


@pytest.mark.parametrize(
    ("status", "body", "error", "text"),
    [
        (
            401,
            {"error": {"message": "Incorrect API key", "code": "invalid_api_key"}},
            AuthenticationError,
            "Incorrect API key",
        ),
        (
            403,
            {"error": {"message": "unsupported_country_region_territory"}},
            AuthenticationError,
            "unsupported",
        ),
        (
            404,
            {"error": {"message": "The model `x` does not exist", "code": "model_not_found"}},
            ModelNotFoundError,
            "does not exist",
        ),
        (
            404,
            {"error": {"message": "model 'q' not found", "type": "not_found_error"}},
            ModelNotFoundError,
            "not found",
        ),  # Ollama: model not pulled
        (
            400,
            {
                "error": {
                    "message": "This model's maximum context length is 8192 tokens",
                    "code": "context_length_exceeded",
                    "param": "messages",
                }
            },
            ContextLengthExceeded,
            "maximum context length",
        ),
        (
            400,
            {
                "error": {
                    "code": 400,
                    "message": "too long",
                    "type": "exceed_context_size_error",
                    "n_prompt_tokens": 9000,
                    "n_ctx": 4096,
                }
            },
            ContextLengthExceeded,
            "too long",
        ),  # llama.cpp, current builds
        (
            400,
            {
                "object": "error",
                "message": "This model's maximum context length is 4096",
                "type": "BadRequestError",
                "code": 400,
            },
            ContextLengthExceeded,
            "4096",
        ),  # old vLLM: flat body
        (
            400,
            {
                "error": {
                    "message": "Unsupported parameter: 'max_tokens'",
                    "code": "unsupported_parameter",
                }
            },
            BadRequest,
            "max_tokens",
        ),
        (
            400,
            {
                "message": "property 'store' is unsupported",
                "type": "invalid_request_error",
                "param": "validation_error",
                "code": "wrong_api_format",
            },
            BadRequest,
            "property 'store'",
        ),  # Cerebras: flat body
        (
            400,
            {"error": {"code": 400, "message": "Provider returned error", "metadata": {}}},
            BadRequest,
            "Provider returned error",
        ),  # OpenRouter: integer code
        (422, {"message": "structured output timed out", "type": "x"}, BadRequest, "timed out"),
        (402, {"error": {"code": 402, "message": "Insufficient credits"}}, BadRequest, "credits"),
        (
            413,
            {"error": {"message": "Request Entity Too Large"}},
            ContextLengthExceeded,
            "client_max_body_size",
        ),  # a proxy's size limit (nginx: 1 MiB): compacted, not a BadRequest that ends the run
    ],
)
async def test_http_errors_map_to_typed_errors_with_the_servers_message(
    status: int, body: dict[str, object], error: type[ModelError], text: str
) -> None:
    model, transport, _ = make_model(http_error(status, error_body=body))
    with pytest.raises(error, match=text) as info:
        await collect(model)
    assert getattr(info.value, "status", status) == status
    assert len(transport.requests) == 1  # none of these is retried


async def test_500_context_size_exceeded_from_old_llama_cpp() -> None:
    model, transport, _ = make_model(
        http_error(
            500,
            error_body={
                "error": {
                    "code": 500,
                    "type": "server_error",
                    "message": "Context size has been exceeded.",
                }
            },
        )
    )
    with pytest.raises(ContextLengthExceeded):
        await collect(model)
    assert len(transport.requests) == 1


async def test_rate_limited_carries_retry_after_and_server_error_after_retries() -> None:
    model, transport, _ = make_model(
        http_error(429, "slow down", retry_after=1),
        http_error(429, "slow down", retry_after=1),
        http_error(429, "slow down", retry_after=1.5),
    )
    with pytest.raises(RateLimited) as info:
        await collect(model)
    assert info.value.retry_after == 1.5
    model, transport, _ = make_model(*[http_error(502, "bad gateway")] * 3)
    with pytest.raises(ServerError, match="bad gateway"):
        await collect(model)
    assert len(transport.requests) == 3


async def test_non_json_error_body_is_kept_as_text() -> None:
    from rho_adapters.model._errors import error_from_response

    err = error_from_response(502, "<html>Bad Gateway</html>")
    assert isinstance(err, ServerError)
    assert "Bad Gateway" in str(err)


def test_nginx_413_page_is_said_as_a_size_limit_not_a_wrong_base_url() -> None:
    """nginx answers a body over client_max_body_size with its own HTML page: before, the
    error said 'is the base URL an OpenAI-compatible or Anthropic API? it usually ends in
    /v1', sending the user to fix a URL that is right."""
    from rho_adapters.model._errors import error_from_response

    page = (
        "<html>\r\n<head><title>413 Request Entity Too Large</title></head>\r\n<body>\r\n"
        "<center><h1>413 Request Entity Too Large</h1></center>\r\n<hr><center>nginx"
        "</center>\r\n</body>\r\n</html>\r\n"
    )
    err = error_from_response(413, page)
    assert isinstance(err, ContextLengthExceeded)
    assert str(err) == (
        "HTTP 413: the server or a proxy before it answered with a page: '413 Request Entity "
        "Too Large 413 Request Entity Too Large nginx' (the request is larger than the "
        "server, or a proxy before it, accepts: its request size limit, such as nginx's "
        "client_max_body_size)"
    )


async def test_endpoint_errors_name_the_url_the_model_and_what_to_check() -> None:
    """Issue 16: a 404 suggests --model and the /v1 path; a 401 names the key's variable;
    every error names the URL and the model."""
    from rho_adapters.fakes.wire import drop

    model, _, _ = make_model(http_error(404, "no such model"), key_variable="MY_KEY")
    with pytest.raises(ModelNotFoundError) as not_found:
        await collect(model)
    text = str(not_found.value)
    assert "'m' at http://fake.test/v1/chat/completions" in text
    assert "--model" in text
    assert "/v1" in text
    model, _, _ = make_model(http_error(401, "bad key"), key_variable="MY_KEY")
    with pytest.raises(AuthenticationError) as refused:
        await collect(model)
    assert "the API key from MY_KEY was refused" in str(refused.value)
    dropped = text_reply("x", faults=(drop(0),))
    model, _, _ = make_model(dropped, dropped, dropped)
    with pytest.raises(ModelError) as down:
        await collect(model)
    assert "http://fake.test/v1" in str(down.value)
    # the server answered (a 200), then the stream broke: the URL is not what to check
    assert "closed the connection mid-response" in str(down.value)
    assert "--base-url" not in str(down.value)


@pytest.mark.parametrize(
    ("status", "said"),
    [
        (401, "Incorrect API key provided: {key}"),
        (400, "This model's maximum context length is 8192 tokens (key {key})"),
        (500, "upstream refused Authorization: Bearer {key}"),
    ],
)
async def test_an_error_body_echoing_the_api_key_does_not_show_it(status: int, said: str) -> None:
    """A gateway or local server that quotes the key it was sent (in a 401, a context-length
    400, a 500): its words are the error the trace, --json and the terminal show."""
    key = "sk-live-Q9xT2mV7bK4c"
    model, _, _ = make_model(
        http_error(status, said.format(key=key)), api_key=key, retry=RetryPolicy(max_retries=0)
    )
    with pytest.raises(ModelError) as caught:
        await collect(model)
    await model.aclose()
    assert key not in str(caught.value)
    assert "***" in str(caught.value)


async def test_a_refused_key_of_another_provider_says_whose_it_is() -> None:
    """An Anthropic key in OPENAI_API_KEY (or an OpenAI key in ANTHROPIC_API_KEY). Before:
    "the API key from OPENAI_API_KEY was refused", and the user checked a key that was right,
    for another service."""
    import httpx

    from rho_adapters.fakes import FakeClock
    from rho_adapters.model import AnthropicModel, ClientPool, ModelEndpoint

    key = "sk-ant-api03-0123456789abcdef"
    model, _, _ = make_model(http_error(401, "bad key"), api_key=key, key_variable="OPENAI_API_KEY")
    with pytest.raises(AuthenticationError) as refused:
        await collect(model)
    assert "the key is an Anthropic key (sk-ant-...)" in str(refused.value)
    assert "--provider anthropic" in str(refused.value)
    assert key not in str(refused.value)

    answer = {"type": "error", "error": {"type": "authentication_error", "message": "bad key"}}
    said = []
    for sent in ("sk-proj-0123456789abcdef", key):
        anthropic = AnthropicModel(
            model="claude-x",
            endpoint=ModelEndpoint(
                base_url="http://fake.test", api_key=sent, key_variable="ANTHROPIC_API_KEY"
            ),
            http=ClientPool(
                transport=httpx.MockTransport(lambda _: httpx.Response(401, json=answer))
            ),
            clock=FakeClock(),
        )
        with pytest.raises(AuthenticationError) as refused:
            await collect(anthropic)
        said.append(str(refused.value))
    assert "looks like an OpenAI key (sk-...), not an Anthropic one" in said[0]
    assert "key is" not in said[1]  # Anthropic's own kind of key: nothing to add
    assert "looks like" not in said[1]
