"""What a model server sends, within ``model_answer_bytes``, costs the session no more than
it sent: variants of the bounds the answer limits set (round 16's re-try).

Before: each skipped event of a stream (an event of another type, one that is not JSON, a
JSON object that is not a chunk) was a ``trace`` event the session kept, some 200 bytes of
trace for an 18-byte event; an error event inside a 200 stream was quoted whole in the
error's message, which the trace keeps twice. Servers here speak the real protocol.
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import zlib
from pathlib import Path
from typing import Any

import httpx
import pytest
from _model_support import (
    DONE,
    chunk,
    collect,
    data,
    make_model,
    request,
    run_body,
    text_of,
    usage_of,
)
from test_model_anthropic import START, ev

from rho_adapters.fakes.clock import FakeClock
from rho_adapters.fakes.loopback import LoopbackServer
from rho_adapters.fakes.wire import Exchange, Reply, http_error, raw_reply, text_reply
from rho_adapters.model import (
    AnthropicModel,
    ClientPool,
    ModelEndpoint,
    OpenAIChatModel,
    RetryPolicy,
    Timeouts,
)
from rho_adapters.model._errors import SAID_CHARS
from rho_adapters.model.answer_limits import AnswerLimits
from rho_adapters.model.skipped_events import MAX_WARNINGS
from rho_domain.errors import (
    BadRequest,
    ContextLengthExceeded,
    ModelConnectionError,
    ModelProtocolError,
    ServerError,
    StreamError,
)
from rho_domain.model import StreamWarning
from rho_domain.run import RunStatus
from rho_entry import Agent, AgentConfig, Session


async def test_skipped_events_are_reported_a_few_each_then_counted() -> None:
    """1,500 skipped events of each kind: ``MAX_WARNINGS`` warnings and one count, not
    4,500 warnings (each a trace line of its own)."""
    kinds = (b"event: x\ndata: 1\n\n", b"data: {\n\n", b'data: {"k":1}\n\n')
    events = await run_body(
        chunk({"content": "one "}),
        *(kind * 1500 for kind in kinds),
        chunk({"content": "two"}),
        chunk({}, "stop"),
        DONE,
    )
    assert text_of(events) == "one two"
    warnings = [e for e in events if isinstance(e, StreamWarning)]
    assert len(warnings) == MAX_WARNINGS + 1
    assert "skipped 4,480 more events that are not chunks (not recorded each)" in (
        warnings[-1].message
    )
    assert "fake.test" in warnings[-1].message


@pytest.mark.parametrize("shape", ["message", "string", "failed_generation", "tags"])
async def test_a_long_error_message_in_a_stream_is_quoted_cut(shape: str) -> None:
    """An error event of 200 KB inside a 200 stream: the error quotes its first
    ``SAID_CHARS`` characters and says how many more there were."""
    long = "E" * 200_000
    error: object = {
        "message": {"message": long, "type": "server_error"},
        "string": long,
        "failed_generation": {"message": "tool_use_failed", "failed_generation": long},
        "tags": {"message": "boom", "type": long},
    }[shape]
    with pytest.raises(StreamError) as info:
        await run_body(chunk({"content": "partial "}), data({"error": error}), DONE)
    message = str(info.value)
    assert len(message) < 3 * SAID_CHARS
    assert "more characters not shown]" in message
    assert info.value.partial_text == "partial "


async def test_a_long_error_body_is_quoted_cut_too() -> None:
    """An HTTP 400 whose JSON message is 60 KB (under the 64 KiB read of an error body)."""
    model, _, _ = make_model(http_error(400, "M" * 60_000))
    with pytest.raises(BadRequest, match=r"HTTP 400: M+\.\.\. \[59,000 more characters") as info:
        await collect(model)
    assert len(str(info.value)) < 3 * SAID_CHARS


@pytest.mark.parametrize("encoding", ["deflate", "DEFLATE", "gzip, deflate"])
async def test_a_deflate_body_whose_first_chunk_is_one_byte_is_read(encoding: str) -> None:
    """A zlib stream (``Content-Encoding: deflate``) whose first network chunk is its first
    byte alone: that byte was taken for raw deflate, and the answer was 'not valid
    deflate'. The spelling and a stack of two do not change it."""
    body = chunk({"content": "hello"}) + chunk({}, "stop") + DONE
    sent = zlib.compress(body)
    if encoding == "gzip, deflate":
        sent = zlib.compress(gzip.compress(body))
    headers = {"content-type": "text/event-stream", "content-encoding": encoding}
    model, _, _ = make_model(raw_reply(sent[:1], sent[1:], headers=headers))
    assert text_of(await collect(model)) == "hello"


HUGE = 10**400  # JSON parses it exactly; no float holds it


@pytest.mark.parametrize(
    "usage",
    [
        {"prompt_tokens": HUGE, "completion_tokens": 5},
        {"prompt_tokens": "9" * 5000, "completion_tokens": 5},
        {"input_tokens": 2**53 + 1, "output_tokens": 5},
        {"prompt_tokens": 7, "completion_tokens": 5, "cost": HUGE},
        {
            "prompt_tokens": 7,
            "completion_tokens": 5,
            "prompt_tokens_details": {"cached_tokens": HUGE},
        },
    ],
)
async def test_a_count_no_float_holds_is_no_count(usage: dict[str, object]) -> None:
    """A usage block whose numbers are too large to be tokens or dollars: the number is
    left out as a word would be, the answer kept. Before: the count was taken (the loop's
    pricing then raised OverflowError), a string of 5,000 digits raised ValueError."""
    events = await run_body(
        chunk({"content": "hi"}), chunk({}, "stop"), chunk(choices=[], usage=usage), DONE
    )
    assert text_of(events) == "hi"
    got = usage_of(events)
    assert got.output_tokens == 5
    assert max(got.input_tokens, got.cached_tokens) <= 7
    assert got.cost_usd is None


async def test_an_anthropic_count_no_float_holds_is_no_count() -> None:
    delta = ev("content_block_delta", index=0, delta={"type": "text_delta", "text": "hi"})
    stop = ev("message_delta", delta={"stop_reason": "end_turn"}, usage={"output_tokens": HUGE})
    body = b"".join([START, delta, stop, ev("message_stop")])
    model = AnthropicModel(
        model="claude",
        endpoint=ModelEndpoint(api_key="sk-ant", retry=RetryPolicy(max_retries=0)),
        http=ClientPool(transport=httpx.MockTransport(lambda _: httpx.Response(200, content=body))),
        clock=FakeClock(),
    )
    events = [event async for event in model.stream(request())]
    assert text_of(events) == "hi"
    assert usage_of(events).output_tokens < 2**53


@pytest.mark.parametrize(
    "body",
    [
        {"error": {"message": "exceeds the available context size", "n_ctx": HUGE}},
        {"error": {"message": f"maximum context length is {'9' * 5000} tokens"}},
    ],
)
async def test_an_overflow_error_with_a_number_no_float_holds_says_no_window(
    body: dict[str, object],
) -> None:
    """Before: the window 10**400 was taken (the loop's arithmetic on it overflows), and
    5,000 digits in the message raised int()'s ValueError instead of the error."""
    model = OpenAIChatModel(
        model="m",
        endpoint=ModelEndpoint(base_url="http://fake.test/v1", retry=RetryPolicy(max_retries=0)),
        http=ClientPool(transport=httpx.MockTransport(lambda _: httpx.Response(400, json=body))),
        clock=FakeClock(),
    )
    with pytest.raises(ContextLengthExceeded) as info:
        await collect(model)
    assert info.value.window is None


async def test_a_run_whose_usage_no_float_holds_completes(tmp_path: Path) -> None:
    """Through the library, over a socket, a priced model: before, the run ended in error
    'OverflowError: int too large to convert to float' (its cost), outside the error tree."""
    usage = chunk(choices=[], usage={"prompt_tokens": HUGE, "completion_tokens": 5})
    with LoopbackServer(
        [raw_reply(chunk({"content": "hi"}), chunk({}, "stop"), usage, DONE)]
    ) as server:
        config = AgentConfig(model="gpt-4o", base_url=server.base_url, working_dir=str(tmp_path))
        async with Session(Agent(config)) as session:
            result = await asyncio.wait_for(session.run("talk"), 30)
    assert (result.status, result.error, result.text) == (RunStatus.COMPLETED, None, "hi")


def _answering_json(method: str, path: str, payload: str) -> Any:
    def rule(exchange: Exchange) -> Reply | None:
        if exchange.method == method and exchange.path == path:
            return raw_reply(payload.encode(), headers={"content-type": "application/json"})
        return None

    return rule


async def test_a_window_or_a_token_count_no_float_holds_is_none() -> None:
    """What a server says about itself: /props' n_ctx, /v1/models' max_model_len and a
    /tokenize count of 10**400. Before, each was taken (the window then overflowed the
    loop's float arithmetic: compaction's threshold, the overflow guess)."""
    model, transport, _ = make_model(text_reply("ok"), detect=True)
    transport.rules = [
        _answering_json("GET", "/props", f'{{"n_ctx": {HUGE}}}'),
        _answering_json(
            "GET", "/v1/models", f'{{"data": [{{"id": "m", "max_model_len": {HUGE}}}]}}'
        ),
    ]
    assert await model.context_window() is None
    model, transport, _ = make_model(text_reply("ok"), provider="llamacpp")
    transport.rules = [_answering_json("POST", "/tokenize", f'{{"count": {HUGE}}}')]
    assert await model.count_tokens(request()) < 2**53
    assert transport.other_requests == ["POST /tokenize"]


_SSE_HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
_BROKEN_HTTP = {
    "Only Transfer-Encoding: chunked": _SSE_HEAD + b"transfer-encoding: gzip, chunked\r\n\r\n",
    "multiple Transfer-Encoding": _SSE_HEAD + b"transfer-encoding: chunked\r\n" * 2 + b"\r\n",
    "illegal chunk header": _SSE_HEAD + b"transfer-encoding: chunked\r\n\r\nzz\r\n",
}


async def test_an_answer_that_is_not_valid_http_is_no_answer_and_not_retried() -> None:
    """Framing h11 refuses, over a real socket: before, 'connection failed ... the server
    answered, then closed the connection mid-response; try again', and it was sent three
    times. A server that closes mid-answer is still a broken connection, tried again."""
    heads: list[bytes] = []
    said = iter([*_BROKEN_HTTP.values(), *[_SSE_HEAD + b"content-length: 900\r\n\r\n"] * 3])

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        heads.append(next(said))
        writer.write(heads[-1] + b"%x\r\n" % 9 + chunk({})[:9])
        with contextlib.suppress(ConnectionError):
            await writer.drain()
        writer.close()

    listener = await asyncio.start_server(answer, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    endpoint = ModelEndpoint(base_url=f"http://127.0.0.1:{port}/v1", retry=RetryPolicy())
    model = OpenAIChatModel(model="m", endpoint=endpoint, clock=FakeClock())
    try:
        for words in _BROKEN_HTTP:
            with pytest.raises(ModelProtocolError, match=f"not valid HTTP/1.1 \\({words}"):
                await asyncio.wait_for(collect(model, request()), 30)
        assert len(heads) == len(_BROKEN_HTTP)  # each sent once
        with pytest.raises(ModelConnectionError, match="closed the connection mid-response"):
            await asyncio.wait_for(collect(model, request()), 30)
        assert len(heads) == len(_BROKEN_HTTP) + 3  # tried again, twice
    finally:
        await model.aclose()
        listener.close()


async def test_an_error_body_is_read_no_longer_than_the_answer_deadline() -> None:
    """A 503 whose body drips a byte every 50 ms and never ends: its body was read for the
    idle timeout (30 s here) whatever model_answer_timeout said (0.5 s here), each attempt.
    Now the read stops at the deadline and the status says what failed."""

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 100000\r\n\r\n")
        with contextlib.suppress(ConnectionError):
            while True:
                writer.write(b"x")
                await writer.drain()
                await asyncio.sleep(0.05)

    listener = await asyncio.start_server(answer, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    endpoint = ModelEndpoint(
        base_url=f"http://127.0.0.1:{port}/v1",
        retry=RetryPolicy(max_retries=0),
        timeouts=Timeouts(idle=30.0),
        limits=AnswerLimits(max_seconds=0.5),
    )
    model = OpenAIChatModel(model="m", endpoint=endpoint, clock=FakeClock())
    try:
        with pytest.raises(ServerError, match=r"HTTP 503: x+"):
            await asyncio.wait_for(collect(model, request()), 10)
    finally:
        await model.aclose()
        listener.close()


async def test_a_skipped_event_that_quotes_the_api_key_is_traced_without_it() -> None:
    """A gateway that echoes the request's headers in an event of its own: the trace (and
    the terminal's warning) kept the key, which every error already hid."""
    key = "sk-live-0123456789abcdef"
    echo = b'event: debug\ndata: {"authorization": "Bearer ' + key.encode() + b'"}\n\n'
    model, _, _ = make_model(
        raw_reply(echo, chunk({"content": "hi"}), chunk({}, "stop"), DONE), api_key=key
    )
    events = await collect(model)
    (warning,) = [e for e in events if isinstance(e, StreamWarning)]
    assert key not in warning.message + warning.detail
    assert "Bearer ***" in warning.detail


async def test_interim_answers_before_the_answer_are_passed_over(tmp_path: Path) -> None:
    """``100 Continue``, ``102 Processing`` and ``103 Early Hints`` (a proxy's, a server's
    that honours ``Expect``) before the answer: the answer is read, not the interim head,
    and the connection serves the next call. Not tried before (a pin: it already held)."""
    body = chunk({"content": "hi"}) + chunk({}, "stop") + DONE
    interim = (
        b"HTTP/1.1 100 Continue\r\n\r\n"
        b"HTTP/1.1 102 Processing\r\n\r\n"
        b"HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n"
    )
    heads: list[bytes] = []
    connections: list[object] = []

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append(writer)
        with contextlib.suppress(ConnectionError, asyncio.IncompleteReadError):
            while head := await reader.readuntil(b"\r\n\r\n"):
                if not head.startswith(b"POST"):  # a local server's /props, asked first
                    writer.write(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n")
                    continue
                heads.append(head)
                length = next(
                    int(line.split(b":")[1])
                    for line in head.lower().split(b"\r\n")
                    if line.startswith(b"content-length:")
                )
                await reader.readexactly(length)
                writer.write(
                    interim + b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                    b"content-length: %d\r\n\r\n%s" % (len(body), body)
                )
                await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    config = AgentConfig(
        model="gpt-4o", base_url=f"http://127.0.0.1:{port}/v1", working_dir=str(tmp_path)
    )
    try:
        async with Session(Agent(config)) as session:
            for prompt in ("one", "two"):
                result = await asyncio.wait_for(session.run(prompt), 30)
                assert (result.status, result.error, result.text) == (
                    RunStatus.COMPLETED,
                    None,
                    "hi",
                )
    finally:
        server.close()
    assert (len(heads), len(connections)) == (2, 1)
