"""A UTF-8 byte order mark at the start of a model server's body (what some gateways on
Windows stacks write): dropped, as the SSE standard and JSON's RFC 8259 allow.

Before: in a stream the first line became the unknown field ``\\ufeffdata`` and the first
delta was lost without a word (Chat Completions answered "" for "hi"; Anthropic lost its
``message_start``); a whole JSON answer was "a chunk that is not JSON"; an error's JSON was
quoted whole instead of its message."""

from __future__ import annotations

import httpx
from _model_support import DONE, chunk, make_model, request, run_body, text_of
from test_model_anthropic import TOOL_STREAM, model_for, run

from rho_adapters.fakes.wire import raw_reply
from rho_adapters.model._errors import error_payload
from rho_adapters.model.bodies import error_body
from rho_adapters.model.sse import SSEDecoder, SSEEvent
from rho_domain.model import StreamEvent, UsageReport

BOM = "\ufeff".encode()


def test_the_decoder_drops_a_bom_before_the_first_line_only() -> None:
    body = BOM + b"data: one\n\ndata: two\n\n"
    for cut in range(len(BOM), len(body) + 1):  # wherever the first chunk ends after it
        decoder = SSEDecoder()
        events = decoder.feed(body[:cut]) + decoder.feed(body[cut:]) + decoder.flush()
        assert events == [SSEEvent("one"), SSEEvent("two")]
    for first in (1, 2):  # the BOM itself split across chunks, one byte at a time too
        decoder = SSEDecoder()
        events = decoder.feed(body[:first]) + decoder.feed(body[first:3]) + decoder.feed(body[3:])
        assert events == [SSEEvent("one"), SSEEvent("two")]
    later = SSEDecoder()
    assert later.feed(b"data: a\n\n") == [SSEEvent("a")]
    assert later.feed(b"event: x\n" + BOM + b"data: b\n\n") == []  # not at the start: a field


async def test_a_bom_before_a_stream_or_a_whole_answer_loses_nothing() -> None:
    events = await run_body(BOM + chunk({"content": "hi"}), chunk({}, "stop"), DONE)
    assert text_of(events) == "hi"
    whole = b'{"choices": [{"index": 0, "message": {"content": "hi"}, "finish_reason": "stop"}]}'
    model, transport, _ = make_model(
        raw_reply(b""),  # an empty stream: the client asks again without streaming
        raw_reply(BOM + whole, headers={"content-type": "application/json"}),
    )
    try:
        events = [e async for e in model.stream(request())]
    finally:
        await model.aclose()
    assert text_of(events) == "hi"
    assert [r["stream"] for r in transport.requests] == [True, False]
    anthropic: list[StreamEvent] = await run(model_for([BOM + TOOL_STREAM[0], *TOOL_STREAM[1:]]))
    usage = [e.usage for e in anthropic if isinstance(e, UsageReport)]
    assert usage[0].input_tokens == 572  # message_start's count, read


async def test_an_error_body_with_a_bom_gives_its_message() -> None:
    answer = httpx.Response(400, content=BOM + b'{"error": {"message": "bad key"}}')
    body = await error_body(answer, idle=None)
    assert error_payload(body)[0] == "bad key"
