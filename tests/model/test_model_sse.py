"""SSE framing, one test per rule a robust decoder must follow (line endings, comments,
multi-line data, fields split across chunks, ``[DONE]``)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from rho_adapters.model.sse import SSEDecoder, SSEEvent, aiter_sse


def decode(*chunks: bytes) -> list[SSEEvent]:
    decoder = SSEDecoder()
    events = [e for c in chunks for e in decoder.feed(c)]
    return events + decoder.flush()


def every_split(body: bytes) -> list[list[SSEEvent]]:
    """Decode ``body`` split into two network chunks at every position."""
    return [decode(body[:i], body[i:]) for i in range(len(body) + 1)]


@pytest.mark.parametrize("eol", [b"\n", b"\r", b"\r\n"])
def test_lf_cr_and_crlf_line_ends_at_every_split_point(eol: bytes) -> None:
    body = b"data: one" + eol + eol + b"event: x" + eol + b"data: two" + eol + eol
    expected = [SSEEvent("one"), SSEEvent("two", "x")]
    for events in every_split(body):
        assert events == expected


def test_cr_at_end_of_one_chunk_and_lf_at_start_of_next_is_one_line_end() -> None:
    # If the LF were a second line end, "a" would be dispatched alone and "b" separately.
    assert decode(b"data: a\r", b"\ndata: b\r", b"\n\r", b"\n") == [SSEEvent("a\nb")]


def test_multibyte_utf8_split_across_chunks() -> None:
    body = 'data: {"t": "héllo ✓ 你好"}\n\n'.encode()
    for events in every_split(body):
        assert events == [SSEEvent('{"t": "héllo ✓ 你好"}')]


def test_byte_at_a_time() -> None:
    body = b': keep-alive\n\ndata: {"a": 1}\r\n\r\ndata: [DONE]\n\n'
    assert decode(*[body[i : i + 1] for i in range(len(body))]) == [
        SSEEvent('{"a": 1}'),
        SSEEvent("[DONE]"),
    ]


def test_comment_lines_are_skipped() -> None:
    body = b": OPENROUTER PROCESSING\n\n" * 17 + b": ping\ndata: x\n: keep-alive\n\n"
    assert decode(body) == [SSEEvent("x")]


def test_data_with_or_without_the_space_and_only_one_space_stripped() -> None:
    assert decode(b"data:x\n\ndata: x\n\ndata:  x\n\n") == [
        SSEEvent("x"),
        SSEEvent("x"),
        SSEEvent(" x"),
    ]


def test_several_data_lines_are_joined_with_newline() -> None:
    assert decode(b'data: {"a":\ndata: 1}\n\n') == [SSEEvent('{"a":\n1}')]


def test_named_events_and_event_name_resets_after_dispatch() -> None:
    body = b'event: error\ndata: {"error": {}}\n\ndata: next\n\n'
    assert decode(body) == [SSEEvent('{"error": {}}', "error"), SSEEvent("next")]


def test_id_retry_and_unknown_fields_are_ignored() -> None:
    assert decode(b"id: 7\nretry: 100\nfoo: bar\ndata: x\n\n") == [SSEEvent("x")]


def test_field_without_colon_is_an_empty_value() -> None:
    assert decode(b"data\n\n") == [SSEEvent("")]


def test_done_is_just_data() -> None:
    assert decode(b"data: [DONE]\n\n") == [SSEEvent("[DONE]")]


@pytest.mark.parametrize("tail", [b"data: last\n", b"data: last", b"data: last\r"])
def test_last_event_without_blank_line_is_dispatched_at_eof(tail: bytes) -> None:
    assert decode(b"data: first\n\n", tail) == [SSEEvent("first"), SSEEvent("last")]


def test_blank_lines_without_data_dispatch_nothing() -> None:
    assert decode(b"\n\n\r\n\n") == []


def test_no_size_cap_on_one_event() -> None:
    big = b"x" * (8 * 1024 * 1024 + 1)
    pieces = [b"data: "] + [big[i : i + 65536] for i in range(0, len(big), 65536)] + [b"\n\n"]
    events = decode(*pieces)
    assert len(events) == 1
    assert len(events[0].data) == len(big)


async def test_aiter_sse_decodes_an_async_byte_stream() -> None:
    async def chunks() -> AsyncIterator[bytes]:
        for c in (b"data: a\n", b"\ndata: b"):
            yield c

    assert [e async for e in aiter_sse(chunks())] == [SSEEvent("a"), SSEEvent("b")]


def test_a_whole_event_chunk_meets_what_came_before_it() -> None:
    """A chunk shaped as one whole event (``data: x`` and a blank line, the common case read
    without splitting lines) still joins a name, a data line or a CR left by earlier chunks."""
    assert decode(b"event: x\n", b"data: y\n\n") == [SSEEvent("y", "x")]
    assert decode(b"data: a\n", b"data: b\n\n") == [SSEEvent("a\nb")]
    assert decode(b"data: a", b"data: b\n\n") == [SSEEvent("adata: b")]
    assert decode(b"data: a\r", b"data: b\n\n") == [SSEEvent("a\nb")]
    assert decode(b"data: a\n\ndata: b\n\n") == [SSEEvent("a"), SSEEvent("b")]
    assert decode(b"data: \xc3\xa9\n\n", b"data:  two\n\n") == [SSEEvent("é"), SSEEvent(" two")]


def test_whole_gives_a_lone_events_data_only_when_feed_would_give_just_that_event() -> None:
    """``whole`` (``whole_events`` for one event) answers for a chunk that is one whole
    unnamed event with nothing pending, and for nothing else; it consumes nothing."""
    decoder = SSEDecoder()
    assert decoder.whole(b'data: {"a": 1}\n\n') == '{"a": 1}'
    assert decoder.feed(b'data: {"a": 1}\n\n') == [SSEEvent('{"a": 1}')]
    for other in (b"event: x\ndata: y\n\n", b"data: a\n\ndata: b\n\n", b"data: a\r\n\r\n"):
        assert decoder.whole(other) is None
    for before in (b"event: x\n", b"data: a\n", b"data: a", b"data: a\r"):
        decoder = SSEDecoder()
        decoder.feed(before)
        assert decoder.whole(b"data: y\n\n") is None
        assert decoder.whole(b"data: y\n\n") is None  # still pending: whole kept nothing


@pytest.mark.parametrize(
    ("chunk", "datas"),
    [
        (b"data: a\n\n", ["a"]),
        (b"data: a\n\ndata: b\n\ndata:  c\n\n", ["a", "b", " c"]),
        (b'data: {"x": "\xc3\xa9"}\n\ndata: \xc3\n\n', ['{"x": "\xe9"}', "\ufffd"]),
        (b"data: a\n\nevent: x\ndata: b\n\n", None),
        (b"data: a\n\n: keep-alive\n\n", None),
        (b"data: a\ndata: b\n\n", None),
        (b"data: a\n\n\n\n", None),
        (b"data: a\n\ndata: b", None),
        (b"data: a\r\n\r\n", None),
        (b"id: 1\ndata: a\n\n", None),
    ],
)
def test_whole_events_gives_each_events_data_only_for_whole_unnamed_one_line_events(
    chunk: bytes, datas: list[str] | None
) -> None:
    """``whole_events`` (a network chunk holding one delta or several, read without building
    the events) answers for whole unnamed one-line events with what ``feed`` makes of them,
    and for nothing else; it consumes nothing."""
    decoder = SSEDecoder()
    assert decoder.whole_events(chunk) == datas
    fed = decoder.feed(chunk)
    if datas is not None:
        assert fed == [SSEEvent(d) for d in datas]


def test_whole_events_answers_none_while_something_is_pending() -> None:
    for before in (b"event: x\n", b"data: a\n", b"data: a", b"data: a\r"):
        decoder = SSEDecoder()
        decoder.feed(before)
        assert decoder.whole_events(b"data: y\n\ndata: z\n\n") is None
        assert decoder.whole_events(b"data: y\n\ndata: z\n\n") is None  # still pending
