"""What a model server sends, within ``model_answer_bytes``, costs the session no more than
it sent: variants of the bounds the answer limits set (round 16's re-try).

Before: each skipped event of a stream (an event of another type, one that is not JSON, a
JSON object that is not a chunk) was a ``trace`` event the session kept, some 200 bytes of
trace for an 18-byte event; an error event inside a 200 stream was quoted whole in the
error's message, which the trace keeps twice. Servers here speak the real protocol.
"""

from __future__ import annotations

import gzip
import zlib

import pytest
from _model_support import DONE, chunk, collect, data, make_model, run_body, text_of

from rho_adapters.fakes.wire import http_error, raw_reply
from rho_adapters.model._errors import SAID_CHARS
from rho_adapters.model.openai_read import MAX_WARNINGS
from rho_domain.errors import BadRequest, StreamError
from rho_domain.model import StreamWarning


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
