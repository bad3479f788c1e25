"""JSON nested past what Python's json parses (100,000 ``[`` deep, legal JSON) from a model
server, over a real socket: a tool call's arguments are the tool layer's to refuse as
malformed (the stream's check of cut arguments raised ``RecursionError``), the same arguments
sent back to Anthropic in the next request are kept visible as text, and an event nested so
deep is a protocol error, never a crash of the run."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from _model_support import calls_of, chunk, collect, finish_of, request

from rho_adapters.fakes import FakeClock
from rho_adapters.model import ModelEndpoint, OpenAIChatModel, RetryPolicy
from rho_adapters.model.anthropic_request import wire_messages
from rho_domain.errors import ModelProtocolError
from rho_domain.messages import AssistantMessage, ToolCall

DEEP = "[" * 100_000 + "]" * 100_000


@asynccontextmanager
async def _server(body: bytes) -> AsyncIterator[int]:
    """A server answering any request 200 with ``body`` as an event stream; its port."""

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = next(
            (
                int(h.split(b":")[1])
                for h in head.split(b"\r\n")
                if h.lower().startswith(b"content-length")
            ),
            0,
        )
        await reader.readexactly(length)
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: %d\r\n\r\n%s"
            % (len(body), body)
        )
        await writer.drain()
        writer.close()

    listener = await asyncio.start_server(answer, "127.0.0.1", 0)
    try:
        yield listener.sockets[0].getsockname()[1]
    finally:
        listener.close()


def _model(port: int) -> OpenAIChatModel:
    endpoint = ModelEndpoint(
        base_url=f"http://127.0.0.1:{port}/v1", api_key="k", retry=RetryPolicy(max_retries=0)
    )
    return OpenAIChatModel(model="m", endpoint=endpoint, clock=FakeClock())


async def test_a_tool_call_with_arguments_nested_too_deep_comes_through() -> None:
    arguments = '{"text": ' + DEEP + "}"
    call = {"index": 0, "id": "c1", "type": "function"}
    body = (
        chunk({"tool_calls": [{**call, "function": {"name": "echo", "arguments": arguments}}]})
        + chunk({}, finish="tool_calls")
        + b"data: [DONE]\n\n"
    )
    async with _server(body) as port:
        model = _model(port)
        events = await asyncio.wait_for(collect(model, request()), 20)
        await model.aclose()
    assert calls_of(events) == [("c1", "echo", arguments)]
    assert finish_of(events) == "tool_calls"


def test_such_arguments_go_back_to_anthropic_as_text() -> None:
    call = ToolCall(id="c1", name="echo", arguments=DEEP)
    [message] = wire_messages((AssistantMessage(text="", tool_calls=(call,)),))
    [block] = message["content"]
    assert block["input"] == {"_unparsed_arguments": DEEP}


async def test_an_event_nested_too_deep_is_a_protocol_error() -> None:
    async with _server(b"data: " + DEEP.encode() + b"\n\n") as port:
        model = _model(port)
        with pytest.raises(ModelProtocolError, match="not JSON"):
            await asyncio.wait_for(collect(model, request()), 20)
        await model.aclose()
