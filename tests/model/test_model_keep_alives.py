"""A server that answers a model call with keep-alives and nothing else, over a real socket:
SSE comments (``: ping``, OpenAI-compatible servers and proxies) or Anthropic's ``ping``
events. httpx's read timeout is reset by every byte, so such a stream held the run forever;
the idle timeout now counts only the response's own pieces (``KeepAliveWatch``). Keep-alives
between pieces of an answer that goes on are still fine.

Timeouts are real; the tests bound durations only against a hang (a keep-alive every 20 ms,
an idle timeout of 0.3 s: the old code never returned).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import pytest
from _model_support import collect, text_of

from rho_adapters.fakes import FakeClock
from rho_adapters.model import ModelEndpoint, OpenAIChatModel, RetryPolicy, Timeouts
from rho_adapters.model.anthropic import AnthropicModel
from rho_domain.errors import ModelHTTPError, ModelTimeout
from rho_domain.messages import UserMessage
from rho_domain.model import ModelRequest

OPENAI_PING = b": ping\n\n"
ANTHROPIC_PING = b'event: ping\ndata: {"type": "ping"}\n\n'


def _delta(text: str, finish: str | None = None) -> bytes:
    chunk = {"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": finish}]}
    return b"data: " + json.dumps(chunk).encode() + b"\n\n"


@asynccontextmanager
async def _server(
    pieces: Callable[[int], bytes | None],
    status: bytes = b"200 OK",
    content_type: bytes = b"text/event-stream",
    every: float = 0.02,
) -> AsyncIterator[int]:
    """A server answering any request with a chunked body (an event stream unless told):
    ``pieces(i)`` for i = 0, 1, ... every ``every`` seconds, until it gives None; its port."""

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = next(
            (
                int(line.split(b":")[1])
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length")
            ),
            0,
        )
        await reader.readexactly(length)
        writer.write(
            b"HTTP/1.1 %s\r\ncontent-type: %s\r\ntransfer-encoding: chunked\r\n\r\n"
            % (status, content_type)
        )
        index = 0
        try:
            while (piece := pieces(index)) is not None:
                writer.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                await writer.drain()
                await asyncio.sleep(every)
                index += 1
            writer.write(b"0\r\n\r\n")
            await writer.drain()
        except ConnectionError:
            return
        finally:
            writer.close()

    listener = await asyncio.start_server(answer, "127.0.0.1", 0)
    try:
        yield listener.sockets[0].getsockname()[1]
    finally:
        listener.close()


def _endpoint(port: int, path: str = "/v1", *, idle: float = 0.3) -> ModelEndpoint:
    return ModelEndpoint(
        base_url=f"http://127.0.0.1:{port}{path}",
        api_key="k",
        timeouts=Timeouts(idle=idle),
        retry=RetryPolicy(max_retries=0),
    )


def _request() -> ModelRequest:
    return ModelRequest(model="m", system="s", messages=(UserMessage("hi"),))


async def test_comments_forever_end_the_call_at_the_idle_timeout() -> None:
    async with _server(lambda _: OPENAI_PING) as port:
        model = OpenAIChatModel(model="m", endpoint=_endpoint(port), clock=FakeClock())
        with pytest.raises(ModelTimeout, match=r"no complete event for 0\.3 s"):
            await asyncio.wait_for(collect(model, _request()), 20)
        await model.aclose()


async def test_comments_forever_after_some_text_end_the_call_keeping_the_text() -> None:
    def pieces(index: int) -> bytes:
        return _delta("partial ") if index == 0 else b": OPENROUTER PROCESSING\n\n"

    async with _server(pieces) as port:
        model = OpenAIChatModel(model="m", endpoint=_endpoint(port), clock=FakeClock())
        with pytest.raises(ModelTimeout) as info:
            await asyncio.wait_for(collect(model, _request()), 20)
        await model.aclose()
    assert info.value.partial_text == "partial "


async def test_comments_between_pieces_of_an_answer_are_fine() -> None:
    """Longer than the idle timeout in all, each gap shorter: the answer comes whole."""

    def pieces(index: int) -> bytes | None:
        # 2 s in all against an idle timeout of 1.2 s: a piece every 5th chunk (0.25 s),
        # comments between, so a gap may run 0.95 s late (a loaded machine once made one
        # 0.1 s gap run past a 0.3 s timeout).
        if index < 40:
            return _delta(f"{index} ") if index % 5 == 0 else OPENAI_PING
        return _delta("end", "stop") if index == 40 else None

    async with _server(pieces, every=0.05) as port:
        endpoint = _endpoint(port, idle=1.2)
        model = OpenAIChatModel(model="m", endpoint=endpoint, clock=FakeClock())
        events = await asyncio.wait_for(collect(model, _request()), 20)
        await model.aclose()
    assert text_of(events) == "0 5 10 15 20 25 30 35 end"


async def test_anthropic_pings_forever_end_the_call_at_the_idle_timeout() -> None:
    async with _server(lambda _: ANTHROPIC_PING) as port:
        model = AnthropicModel(model="m", endpoint=_endpoint(port), clock=FakeClock())
        with pytest.raises(ModelTimeout, match=r"no complete event for 0\.3 s"):
            await asyncio.wait_for(collect(model, _request()), 20)
        await model.aclose()


def _trickle(head: bytes) -> Callable[[int], bytes]:
    """``head`` whole, then one byte of a ``data:`` line that never ends, each time."""
    return lambda index: head if index == 0 else (b"data: {" if index == 1 else b" ")


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_an_event_that_never_completes_ends_the_call_at_the_idle_timeout(
    provider: str,
) -> None:
    """A byte every 0.05 s (each resets httpx's read timeout of 0.3 s; at 0.2 s a loaded
    machine's stall let the read timeout come first) of an event that never ends: no
    completed event for 0.3 s is the timeout, the text streamed before kept."""
    cls: type[OpenAIChatModel | AnthropicModel]
    if provider == "openai":
        head, cls = _delta("partial "), OpenAIChatModel
    else:
        start = b'event: message_start\ndata: {"type": "message_start", "message": {}}\n\n'
        block = (
            b'event: content_block_start\ndata: {"type": "content_block_start", "index": 0, '
            b'"content_block": {"type": "text", "text": ""}}\n\n'
            b'event: content_block_delta\ndata: {"type": "content_block_delta", "index": 0, '
            b'"delta": {"type": "text_delta", "text": "partial "}}\n\n'
        )
        head, cls = start + block, AnthropicModel
    async with _server(_trickle(head), every=0.05) as port:
        model = cls(model="m", endpoint=_endpoint(port), clock=FakeClock())
        with pytest.raises(ModelTimeout, match=r"no complete event for 0\.3 s") as info:
            await asyncio.wait_for(collect(model, _request()), 20)
        await model.aclose()
    assert info.value.partial_text == "partial "


@asynccontextmanager
async def _trickling_server() -> AsyncIterator[int]:
    """A server answering every GET (the probe's /props and /models) with a body that never
    ends, a byte every 20 ms, and every POST with one streamed text answer."""

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        try:
            if head.startswith(b"GET"):
                writer.write(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n")
                while True:
                    writer.write(b"1\r\n \r\n")
                    await writer.drain()
                    await asyncio.sleep(0.02)
            length = next(
                int(line.split(b":")[1])
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length")
            )
            await reader.readexactly(length)
            body = _delta("hello", "stop") + b"data: [DONE]\n\n"
            writer.write(
                b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                b"content-length: %d\r\n\r\n%s" % (len(body), body)
            )
            await writer.drain()
        except ConnectionError:
            return
        finally:
            writer.close()

    listener = await asyncio.start_server(answer, "127.0.0.1", 0)
    try:
        yield listener.sockets[0].getsockname()[1]
    finally:
        listener.close()


async def test_a_probe_answered_a_byte_at_a_time_forever_gives_up_and_the_call_goes_on() -> None:
    """The probe's GETs read the body with httpx's read timeout, reset by every byte: the
    run waited for the server's window forever (and a SIGTERM with it)."""
    async with _trickling_server() as port:
        endpoint = _endpoint(port)  # the probe's questions: within 0.3 s each, as the calls
        model = OpenAIChatModel(model="m", endpoint=endpoint, clock=FakeClock(), detect=True)
        window = await asyncio.wait_for(model.context_window(), 20)
        events = await asyncio.wait_for(collect(model, _request()), 20)
        await model.aclose()
    assert window is None  # nothing learned; the configured window is used
    assert text_of(events) == "hello"


async def test_an_error_whose_body_never_ends_is_said_at_the_idle_timeout() -> None:
    """A 500 whose body came a space at a time forever: the error was never raised."""
    async with _server(lambda _: b" ", status=b"500 Internal Server Error") as port:
        model = OpenAIChatModel(model="m", endpoint=_endpoint(port), clock=FakeClock())
        with pytest.raises(ModelHTTPError) as info:
            await asyncio.wait_for(collect(model, _request()), 20)
        await model.aclose()
    assert info.value.status == 500


async def test_a_whole_answer_of_whitespace_forever_ends_at_the_idle_timeout() -> None:
    """``stream: false``: spaces are legal JSON before the answer, and kept the read going."""
    async with _server(lambda _: b" ", content_type=b"application/json") as port:
        model = OpenAIChatModel(
            model="m", endpoint=_endpoint(port), clock=FakeClock(), stream=False
        )
        with pytest.raises(ModelTimeout, match=r"only keep-alives for 0\.3 s, no response"):
            await asyncio.wait_for(collect(model, _request()), 20)
        await model.aclose()


async def test_a_whole_answer_after_whitespace_is_read() -> None:
    answer = json.dumps(
        {"choices": [{"index": 0, "message": {"content": "hi"}, "finish_reason": "stop"}]}
    ).encode()

    def pieces(index: int) -> bytes | None:
        return b" " if index < 5 else (answer if index == 5 else None)

    async with _server(pieces, content_type=b"application/json") as port:
        model = OpenAIChatModel(
            model="m", endpoint=_endpoint(port), clock=FakeClock(), stream=False
        )
        events = await asyncio.wait_for(collect(model, _request()), 20)
        await model.aclose()
    assert text_of(events) == "hi"
