"""One model answer, bounded: its body's bytes once decompressed, its duration, its tool calls
(``AnswerLimits``), and a compressed body undone a bounded piece at a time.

Before: the clients read a compressed body through httpx's ``aiter_bytes``, which inflates
each network chunk whole (a 971-byte ``gzip, gzip`` body took 858 MB, traced), and nothing
bounded an answer's size or duration: a ``data:`` line without an end grew until the idle
timeout, and deltas that never end kept a run going forever. Servers here speak the real
protocol (SSE chunks of Chat Completions, Anthropic's events, the OpenAI error envelope);
the bounds are set small, the bodies are small before they inflate.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import random
import tracemalloc
import zlib
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import httpx
import pytest
from _model_support import DONE, chunk, collect, request, text_of
from test_model_anthropic import START, ev

from rho_adapters.fakes.clock import FakeClock
from rho_adapters.fakes.loopback import LoopbackServer
from rho_adapters.fakes.wire import raw_reply
from rho_adapters.model import AnthropicModel, ClientPool, ModelEndpoint, OpenAIChatModel
from rho_adapters.model.answer_limits import AnswerLimits
from rho_adapters.model.bodies import body_chunks
from rho_adapters.model.encodings import PIECE
from rho_adapters.model.retry import RetryPolicy
from rho_adapters.store import FileSessionStore
from rho_domain.errors import AnswerTooLong, ConfigError, ModelProtocolError, ServerError
from rho_domain.model import StreamEvent
from rho_domain.run import RunStatus
from rho_entry import Agent, AgentConfig, Session

URL = "http://fake.test/v1"
Handler = Callable[[httpx.Request], httpx.Response]


class _Pieces(httpx.AsyncByteStream):
    """A body sent as these pieces (``forever``: the last one again and again, yielding to
    the loop between, as a server that never ends)."""

    def __init__(self, pieces: list[bytes], *, forever: bool = False) -> None:
        self.pieces, self.forever = pieces, forever

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for piece in self.pieces:
            yield piece
        while self.forever:
            await asyncio.sleep(0)
            yield self.pieces[-1]


def _answering(
    status: int, pieces: list[bytes], headers: dict[str, str], *, forever: bool = False
) -> Handler:
    def handler(_: httpx.Request) -> httpx.Response:
        return httpx.Response(status, headers=headers, stream=_Pieces(pieces, forever=forever))

    return handler


def _openai(
    handler: Callable[[httpx.Request], httpx.Response], **limits: float | None
) -> OpenAIChatModel:
    return OpenAIChatModel(
        model="m",
        endpoint=ModelEndpoint(
            base_url=URL,
            api_key="sk-test",
            retry=RetryPolicy(max_retries=0),
            limits=AnswerLimits(**limits),  # type: ignore[arg-type]
        ),
        http=ClientPool(transport=httpx.MockTransport(handler)),
        clock=FakeClock(),
        rng=random.Random(1),
    )


def _anthropic(body: list[bytes], **limits: float | None) -> AnthropicModel:
    return AnthropicModel(
        model="claude",
        endpoint=ModelEndpoint(
            api_key="sk-ant",
            retry=RetryPolicy(max_retries=0),
            limits=AnswerLimits(**limits),  # type: ignore[arg-type]
        ),
        http=ClientPool(
            transport=httpx.MockTransport(
                _answering(200, body, {"content-type": "text/event-stream"})
            )
        ),
        clock=FakeClock(),
        rng=random.Random(1),
    )


SSE = {"content-type": "text/event-stream"}
GZIP2 = {**SSE, "content-encoding": "gzip, gzip"}


def _bomb(inflated: int) -> bytes:
    """A stream that starts well, then a comment line of ``inflated`` spaces, gzipped twice:
    about a thousandth of a thousandth of what it inflates to."""
    body = chunk({"content": "Hel"}) + b": " + b" " * inflated + b"\n\n" + DONE
    return gzip.compress(gzip.compress(body, 9), 9)


async def test_a_compressed_body_is_undone_a_bounded_piece_at_a_time() -> None:
    """body_chunks gives a gzip bomb's content in pieces of at most PIECE bytes, as the
    reader asks, for both encodings (deflate with or without its zlib header); before, the
    first chunk was the 2 MB whole."""
    raw = b" " * (2 << 20)
    deflated = zlib.compress(raw, 9)
    for encoding, sent in (
        ("gzip, gzip", gzip.compress(gzip.compress(raw, 9), 9)),
        ("deflate", deflated),
        ("deflate", deflated[2:-4]),  # raw deflate, as some servers send
    ):
        response = httpx.Response(
            200, headers={"content-encoding": encoding}, stream=_Pieces([sent])
        )
        sizes = [len(piece) async for piece in body_chunks(response)]
        assert sum(sizes) == len(raw), encoding
        assert max(sizes) <= PIECE, (encoding, max(sizes))


async def test_a_gzip_bomb_stream_ends_at_the_byte_bound_naming_it() -> None:
    """A 1 KB body that inflates to 4 MB, under a bound of 200 KB: the call ends with
    AnswerTooLong naming the URL, the bound and both settings, the text so far kept; what
    was held stays near the bound, not the 4 MB (traced)."""
    model = _openai(_answering(200, [_bomb(4 << 20)], GZIP2), max_bytes=200_000)
    tracemalloc.start()
    try:
        with pytest.raises(AnswerTooLong) as caught:
            await collect(model, request())
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    message = str(caught.value)
    assert f"{URL}/chat/completions passed 200,000 bytes" in message
    assert "model_answer_bytes, AnswerLimits.max_bytes" in message
    assert caught.value.partial_text == "Hel"
    assert peak < 2 << 20, peak


async def test_an_error_body_that_inflates_is_read_a_bounded_piece_too() -> None:
    """A 503 whose gzip body inflates to 4 MB of the OpenAI envelope's padding: the error
    is the 503's, its body cut at 64 KiB, and only about that much was inflated."""
    envelope = json.dumps({"error": {"message": "overloaded", "pad": " " * (4 << 20)}})
    bomb = gzip.compress(envelope.encode(), 9)
    headers = {"content-type": "application/json", "content-encoding": "gzip"}
    model = _openai(_answering(503, [bomb], headers))
    tracemalloc.start()
    try:
        with pytest.raises(ServerError) as caught:
            await collect(model, request())
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert caught.value.status == 503
    assert peak < 2 << 20, peak


@pytest.mark.parametrize(
    ("encoding", "body", "said"),
    [
        ("br", b"\x1b\x03\x00", "Content-Encoding 'br': 'br', which is not decoded here"),
        ("gzip, " * 5 + "gzip", b"x", "6 encodings stacked, more than 4"),
        ("gzip", b"not gzip at all", "is not valid gzip (its Content-Encoding)"),
    ],
)
async def test_an_encoding_that_cannot_be_bounded_or_decoded_is_refused(
    encoding: str, body: bytes, said: str
) -> None:
    """Before: br passed undecoded into the SSE parser (an empty stream, resent), and a
    broken gzip body was httpx's DecodingError, "connection failed", retried."""
    model = _openai(_answering(200, [body], {**SSE, "content-encoding": encoding}))
    with pytest.raises(ModelProtocolError) as caught:
        await collect(model, request())
    assert said in str(caught.value)


async def test_a_stream_closed_under_its_reader_is_a_model_connection_error() -> None:
    """httpx's StreamError (StreamClosed) is a RuntimeError, not an HTTPError: it left the
    adapter as httpx's own exception, so the run ended 'error' on "StreamClosed", exit 1,
    never retried. It is a broken connection, as httpx's other transport errors are."""
    from rho_domain.errors import ModelConnectionError

    class Closed(httpx.AsyncByteStream):
        async def __aiter__(self) -> AsyncIterator[bytes]:
            yield chunk({"content": "hi"})
            raise httpx.StreamClosed

    model = _openai(lambda _: httpx.Response(200, headers=SSE, stream=Closed()))
    try:
        with pytest.raises(ModelConnectionError, match="the stream has been closed"):
            await collect(model)
    finally:
        await model.aclose()


async def test_an_unreadable_error_body_still_gives_its_status() -> None:
    model = _openai(_answering(500, [b"\x00garbage"], {"content-encoding": "gzip"}))
    with pytest.raises(ServerError) as caught:
        await collect(model, request())
    assert caught.value.status == 500
    assert "the rest of the body was not read" in str(caught.value)


async def test_deltas_that_never_end_stop_at_the_byte_bound_and_the_time_bound() -> None:
    """A stream of deltas with no finish, forever (each one a completed event, so the idle
    timeout never fires): the byte bound ends it, and so does the time bound alone. Before,
    neither existed and the call never returned (wait_for turns that into a failure)."""
    delta = chunk({"content": "x"})
    endless = _answering(200, [chunk({"role": "assistant"}), delta], SSE, forever=True)
    by_bytes = _openai(endless, max_bytes=20_000, max_seconds=None)
    with pytest.raises(AnswerTooLong, match=r"passed 20,000 bytes \(model_answer_bytes"):
        await asyncio.wait_for(collect(by_bytes, request()), 30)
    by_time = _openai(endless, max_bytes=None, max_seconds=0.05)
    with pytest.raises(AnswerTooLong, match=r"took more than 0.05 s \(model_answer_timeout"):
        await asyncio.wait_for(collect(by_time, request()), 30)


def _calls(count: int) -> list[bytes]:
    return [
        chunk({"tool_calls": [{"index": i, "id": f"c{i}", "function": {"name": "ls"}}]})
        for i in range(count)
    ]


async def test_an_answer_with_more_tool_calls_than_allowed_is_refused() -> None:
    """Chat Completions, streamed and whole, and Anthropic, with and without each call's
    content_block_start: the call past max_tool_calls ends the answer; as many as allowed
    pass."""
    streamed = [*_calls(3), chunk({}, finish="tool_calls"), DONE]
    ok = await collect(_openai(_answering(200, streamed, SSE), max_tool_calls=3), request())
    assert sum(type(e).__name__ == "ToolCallReady" for e in ok) == 3
    whole = json.dumps(
        {
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "tool_calls",
                    "message": {
                        "tool_calls": [
                            {"id": f"c{i}", "function": {"name": "ls", "arguments": "{}"}}
                            for i in range(3)
                        ]
                    },
                }
            ]
        }
    ).encode()
    json_headers = {"content-type": "application/json"}
    for handler in (_answering(200, streamed, SSE), _answering(200, [whole], json_headers)):
        with pytest.raises(AnswerTooLong, match="more than 2 tool calls"):
            await collect(_openai(handler, max_tool_calls=2), request())

    def use(i: int) -> bytes:
        block = {"type": "tool_use", "id": f"t{i}", "name": "ls", "input": {}}
        return ev("content_block_start", index=i, content_block=block)

    def args(i: int) -> bytes:
        return ev(
            "content_block_delta", index=i, delta={"type": "input_json_delta", "partial_json": "{}"}
        )

    for body in ([START, *map(use, range(3))], [START, *map(args, range(3))]):
        with pytest.raises(AnswerTooLong, match="more than 2 tool calls"):
            await _run(_anthropic(body, max_tool_calls=2))


async def _run(model: AnthropicModel) -> list[StreamEvent]:
    return [event async for event in model.stream(request())]


async def test_anthropic_answers_are_bounded_in_bytes_too() -> None:
    """An Anthropic stream of text deltas past max_bytes; a whole one under it is read."""
    delta = ev("content_block_delta", index=0, delta={"type": "text_delta", "text": "x" * 500})
    head = [START, ev("content_block_start", index=0, content_block={"type": "text", "text": ""})]
    tail = [ev("message_delta", delta={"stop_reason": "end_turn"}), ev("message_stop")]
    with pytest.raises(AnswerTooLong, match=r"api.anthropic.com/v1/messages passed 5,000 bytes"):
        await _run(_anthropic([*head, *[delta] * 20, *tail], max_bytes=5_000))
    events = await _run(_anthropic([*head, delta, *tail], max_bytes=5_000))
    assert text_of(events) == "x" * 500


async def test_a_run_past_model_answer_bytes_ends_in_error_with_its_trace(tmp_path: Path) -> None:
    """Through the library, over a socket: AgentConfig.model_answer_bytes reaches the client,
    and the run ends with status error, the message naming the setting, the trace whole."""
    deltas = [chunk({"content": f"word{i} "}) for i in range(60)]  # ~6 KB, no finish
    with LoopbackServer([raw_reply(*deltas)]) as server:
        config = AgentConfig(
            model="m", base_url=server.base_url, working_dir=str(tmp_path), model_answer_bytes=3000
        )
        store = FileSessionStore(tmp_path / "sessions")
        async with Session(Agent(config), store=store) as session:
            result = await asyncio.wait_for(session.run("talk"), 30)
    assert result.status is RunStatus.ERROR
    assert result.error_type == "AnswerTooLong"
    assert "passed 3,000 bytes (model_answer_bytes" in (result.error or "")
    trace = (tmp_path / "sessions" / session.id / "trace.jsonl").read_text()
    assert '"run_end"' in trace
    assert "model_answer_bytes" in trace


def test_a_bound_that_is_not_a_positive_number_is_refused() -> None:
    for bad in ({"max_bytes": 0}, {"max_seconds": -1.0}, {"max_tool_calls": True}):
        with pytest.raises(ConfigError, match=r"AnswerLimits\.max_\w+ must be a number more"):
            AnswerLimits(**bad)
