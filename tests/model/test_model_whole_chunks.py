"""``batched_body._take_whole_chunks`` cuts the whole HTTP chunks out of h11's buffer in one
pass; whatever the bytes and however the reads split them, the body, the event after it and
the protocol errors are h11's own, read one ``next_event`` at a time."""

from __future__ import annotations

from types import SimpleNamespace

import h11
import pytest
from h11._readers import ChunkedReader
from h11._receivebuffer import ReceiveBuffer

from rho_adapters.model.batched_body import _take_whole_chunks

HEAD = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n"
DELTAS = [b'data: {"n": %d}\n\n' % i for i in range(6)]
WELL_FORMED = b"".join(b"%x\r\n%s\r\n" % (len(d), d) for d in DELTAS) + b"0\r\n\r\n"

BODIES = {
    "bare sizes": WELL_FORMED,
    "upper-case hex and a trailer": b"A\r\n0123456789\r\n0\r\nx-t: 1\r\n\r\n",
    "zero-padded size": b"0005\r\nhello\r\n0\r\n\r\n",
    "an extension, then bare": b"5;name=v\r\nhello\r\n5\r\nworld\r\n0\r\n\r\n",
    "spaces after the size": b"5 \r\nhello\r\n3\r\nabc\r\n0\r\n\r\n",
    "a size h11 refuses: 0x": b"3\r\nabc\r\n0x5\r\nhello\r\n0\r\n\r\n",
    "a size h11 refuses: a sign": b"3\r\nabc\r\n+5\r\nhello\r\n0\r\n\r\n",
    "a size h11 refuses: an underscore": b"3\r\nabc\r\n1_0\r\n0123456789abcdef\r\n0\r\n\r\n",
    "a size h11 refuses: a space first": b"3\r\nabc\r\n 5\r\nhello\r\n0\r\n\r\n",
    "a size too long": b"3\r\nabc\r\n" + b"0" * 21 + b"5\r\nhello\r\n0\r\n\r\n",
    "a bad footer": b"3\r\nabc\r\n5\r\nhelloXY3\r\nabc\r\n0\r\n\r\n",
    "an empty size line": b"3\r\nabc\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
}


def _connection() -> h11.Connection:
    connection = h11.Connection(h11.CLIENT)
    connection.send(h11.Request(method="POST", target="/", headers=[("host", "x")]))
    connection.send(h11.EndOfMessage())
    connection.receive_data(HEAD)
    assert isinstance(connection.next_event(), h11.Response)
    return connection


def _read(reads: list[bytes], *, whole_chunks: bool) -> tuple[bytes, str]:
    """The body's bytes and how it ended (the event after it, or the error's type), the reads
    given to h11 one at a time, with or without the one-pass cut before each event."""
    connection = _connection()
    got: list[bytes] = []
    pending = list(reads)
    try:
        while True:
            if whole_chunks:
                _take_whole_chunks(connection, got)
            event = connection.next_event()
            if isinstance(event, h11.Data):
                got.append(bytes(event.data))
            elif event is h11.NEED_DATA and pending:
                connection.receive_data(pending.pop(0))
            else:
                return b"".join(got), repr(event)
    except h11.RemoteProtocolError as exc:
        return b"".join(got), f"error: {exc}"


@pytest.mark.parametrize("body", list(BODIES.values()), ids=list(BODIES))
def test_a_body_read_whole_or_split_anywhere_reads_as_h11_reads_it(body: bytes) -> None:
    splits = [[body]] + [[body[:i], body[i:]] for i in range(1, len(body))]
    splits.append([body[i : i + 1] for i in range(len(body))])
    for reads in splits:
        assert _read(reads, whole_chunks=True) == _read(reads, whole_chunks=False), reads


def test_the_whole_chunks_of_one_read_are_cut_in_one_pass() -> None:
    connection = _connection()
    connection.receive_data(WELL_FORMED)
    got: list[bytes] = []
    _take_whole_chunks(connection, got)
    assert got == DELTAS
    assert isinstance(connection.next_event(), h11.EndOfMessage)


def test_a_body_that_is_not_chunked_is_left_to_h11() -> None:
    connection = h11.Connection(h11.CLIENT)
    connection.send(h11.Request(method="GET", target="/", headers=[("host", "x")]))
    connection.send(h11.EndOfMessage())
    connection.receive_data(b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\n5\r\nhello\r\n")
    assert isinstance(connection.next_event(), h11.Response)
    got: list[bytes] = []
    _take_whole_chunks(connection, got)
    assert got == []
    assert bytes(connection.next_event().data) == b"5\r\nhello\r\n"  # type: ignore[union-attr]


def test_an_h11_that_counts_the_footer_reads_every_chunk_itself() -> None:
    """h11 before 0.16 (earlier httpcore 1.0 releases take it) keeps the CRLF still to drop after a
    chunk as a count, not as bytes: the pass leaves such a reader and its buffer alone."""
    reader = ChunkedReader()
    reader._bytes_to_discard = 2  # type: ignore[assignment]
    buffer = ReceiveBuffer()
    buffer += b"\r\n" + WELL_FORMED
    state = SimpleNamespace(_reader=reader, their_state=h11.SEND_BODY, _receive_buffer=buffer)
    got: list[bytes] = []
    _take_whole_chunks(state, got)
    assert got == []
    assert bytes(buffer) == b"\r\n" + WELL_FORMED
