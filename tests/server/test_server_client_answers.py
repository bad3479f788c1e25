"""What ``AgentClient`` reads of a hostile or broken server's answers: never more than a bound.

Before, ``_call`` read a non-stream answer whole (``response.json()``: an answer of endless
bytes grew the client until it died), an error answer whole too, httpx inflated a gzip body
one network chunk at a time whole (a stream's 16 KB of gzip became 16 MB before the event
bound could count it), a JSON answer nested past the parser raised ``RecursionError`` (a
crash, not an ``ApiError``), and a server that never answered held a call for good (no read
timeout: the streams' setting).
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import tracemalloc
from collections.abc import AsyncIterator, Callable

import httpx
import pytest

from rho_entry.client import AgentClient
from rho_entry.server.errors import ApiError, Busy, Internal

LIMIT = 64 * 1024
CHUNK = 4096


class Endless:
    """A body of ``x`` that stops only after ``stop`` bytes (so the old reader ends too),
    counting what was read of it."""

    def __init__(self, head: bytes = b'{"a": "', stop: int = 4 * 1024 * 1024) -> None:
        self.head = head
        self.stop = stop
        self.sent = 0

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield self.head
        while self.sent < self.stop:
            self.sent += CHUNK
            yield b"x" * CHUNK


async def _sent(data: bytes) -> AsyncIterator[bytes]:
    """``data`` as a server sends it, a chunk at a time (bytes given whole are read by
    httpx before the client sees the response)."""
    for start in range(0, len(data), CHUNK):
        yield data[start : start + CHUNK]


def _client(answer: Callable[[httpx.Request], httpx.Response]) -> AgentClient:
    transport = httpx.MockTransport(answer)
    client = AgentClient("http://server.test", token="t", environ={}, transport=transport)
    client.answer_bytes = LIMIT
    client.event_bytes = LIMIT
    return client


async def test_an_endless_answer_or_error_is_refused_at_its_bound() -> None:
    ok, failed = Endless(), Endless(head=b"<html>")

    def answer(request: httpx.Request) -> httpx.Response:
        body = ok if request.method == "GET" else failed
        return httpx.Response(200 if body is ok else 500, content=body)

    async with _client(answer) as client:
        with pytest.raises(ApiError, match=f"an answer of more than {LIMIT} bytes to GET"):
            await client.get_session("s1")
        with pytest.raises(Internal, match=r"HTTP 500 .* from POST .*: <html>xxx"):
            await client.cancel("s1")
    assert ok.sent <= LIMIT + CHUNK
    assert failed.sent <= 65_536 + CHUNK  # client_bodies.ERROR_BYTES


async def test_a_gzip_bomb_is_inflated_no_further_than_the_bound() -> None:
    """16 MiB of zeros in 16 KB of gzip, as an answer and as an event stream. The peak of
    memory the client took shows it: httpx's own decoding held the whole 16 MiB at once."""
    bomb = gzip.compress(b'{"a": "' + b"0" * (16 << 20), compresslevel=1)
    stream = gzip.compress(b"id: 1\ndata: " + b"0" * (16 << 20), compresslevel=1)

    def answer(request: httpx.Request) -> httpx.Response:
        body = stream if request.url.path.endswith("/stream") else bomb
        headers = {"content-encoding": "gzip"}
        return httpx.Response(200, headers=headers, content=_sent(body))

    async with _client(answer) as client:
        tracemalloc.start()
        try:
            with pytest.raises(ApiError, match=f"an answer of more than {LIMIT} bytes"):
                await client.get_session("s1")
            with pytest.raises(ApiError, match=f"an event of more than {LIMIT} bytes"):
                async for _ in client.events("s1", until_idle=True):
                    pass
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert peak < 4 << 20, peak


async def test_an_encoding_not_read_in_pieces_and_json_nested_past_the_parser_are_refused() -> None:
    deep = b"[" * 20_000

    def answer(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/cancel"):
            return httpx.Response(200, headers={"content-encoding": "br"}, content=_sent(b".."))
        if request.url.path.endswith("/stream"):
            return httpx.Response(200, content=b"id: 1\ndata: " + deep + b"\n\n")
        return httpx.Response(200 if request.method == "GET" else 409, content=deep)

    async with _client(answer) as client:
        with pytest.raises(ApiError, match="Content-Encoding 'br'"):
            await client.cancel("s1")
        with pytest.raises(ApiError, match=r"HTTP 200 OK from GET .*rho-agent serve server"):
            await client.get_session("s1")
        with pytest.raises(ApiError, match=r"HTTP 409 .* from POST"):
            await client.chat("s1", "go")
        with pytest.raises(ApiError, match="an event that is not this API's"):
            async for _ in client.events("s1", until_idle=True):
                pass


async def test_a_retry_after_that_is_no_plain_number_is_one_second() -> None:
    """``Retry-After: ²`` (byte 0xB2, which httpx reads as Latin-1) passed ``isdigit`` and
    ``int`` raised ValueError out of the client; so did 5,000 digits."""
    given = iter([b"\xb2", b"9" * 5000, b"7"])

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(429, headers=[(b"retry-after", next(given))], content=b"busy")

    async with _client(answer) as client:
        waits = []
        for _ in range(3):
            with pytest.raises(Busy) as busy:
                await client.list_sessions()
            waits.append(busy.value.retry_after)
    assert waits == [1, 1, 7]


async def test_a_listing_of_another_shape_is_an_api_error_and_lists_what_it_has() -> None:
    """``{"sessions": [1]}`` or ``{}`` was indexed as this API's: a TypeError or a KeyError
    out of ``list_sessions``, a traceback from ``rho-agent --server URL --list``; a row
    without a field was a KeyError in the listing."""
    from rho_entry.cli.remote import _listing

    shapes = iter([b'{"sessions": [1]}', b"{}", b'{"sessions": {"id": "x"}}'])

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=next(shapes))

    async with _client(answer) as client:
        for _ in range(3):
            with pytest.raises(ApiError, match="holds no list of sessions"):
                await client.list_sessions()
    assert _listing([{"id": "s1"}])[1].split() == ["s1", "?", "?"]


async def test_a_server_that_never_answers_does_not_hold_a_call_for_good() -> None:
    """The socket accepts, reads the request and stays silent: the call ends by its
    ``timeout`` as a read timeout (the CLI's ``--server`` names the URL); the bound below is
    about hanging only."""
    heard = asyncio.Event()

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        heard.set()
        await reader.read()  # until the client gives up and closes
        writer.close()

    server = await asyncio.start_server(silent, "127.0.0.1", 0)
    url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
    async with server, AgentClient(url, token="t", environ={}, timeout=0.2) as client:
        async with asyncio.timeout(30):
            with pytest.raises(httpx.ReadTimeout):
                await client.get_session("s1")
    assert heard.is_set()


async def test_a_server_trickling_its_answer_does_not_hold_a_call_for_good() -> None:
    """Headers, then a byte each 50 ms: never silent for ``timeout``, so the read timeout
    alone let it hold the call as long as it liked (a byte every 29 s against 30 s). The
    call ends at its whole-answer deadline as a read timeout. The read timeout here is an
    hour, so that a loaded machine's pause between two bytes (once, at a load of 20, past
    the 0.2 s this used) cannot end the call first: only the deadline can, at 0.4 s."""
    sent = 0

    async def trickle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal sent
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n{")
        with contextlib.suppress(ConnectionError):
            while not reader.at_eof():
                await writer.drain()
                await asyncio.sleep(0.05)
                writer.write(b" ")
                sent += 1
        writer.close()

    server = await asyncio.start_server(trickle, "127.0.0.1", 0)
    url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
    client = AgentClient(url, token="t", environ={}, timeout=3600, answer_deadline=0.4)
    async with server, client:
        during = 0
        for _ in range(5):  # a call the machine paused through (no byte came) shows nothing
            sent = 0
            async with asyncio.timeout(10):  # the old client: this TimeoutError
                with pytest.raises(httpx.ReadTimeout, match=r"did not arrive whole within 0\.4"):
                    await client.get_session("s1")
            during = sent  # bytes that came while the call waited: the trickle was real
            if during:
                break
        assert during >= 1


async def test_an_event_stream_s_head_and_error_come_within_the_deadline() -> None:
    """A stream has no read timeout (it may be quiet for long), so ``events`` waited for good
    for a server that read the request and never answered, and for one that answered 500
    and trickled its body: both are now a read timeout at the whole-answer deadline."""
    heads = iter([b"", b"HTTP/1.1 500 Oops\r\nContent-Length: 1000000\r\n\r\n<html>"])

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        head = next(heads)
        writer.write(head)
        with contextlib.suppress(ConnectionError):
            while not reader.at_eof():  # silent, or a byte of the error's body each 50 ms
                await writer.drain()
                await asyncio.sleep(0.05)
                writer.write(b" " if head else b"")
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
    async with server, AgentClient(url, token="t", environ={}, timeout=0.2) as client:
        for _ in range(2):
            async with asyncio.timeout(10):  # the old client: this TimeoutError
                with pytest.raises(httpx.ReadTimeout, match=r"GET .*/stream: the server's"):
                    async for _ in client.events("s1"):
                        pass
