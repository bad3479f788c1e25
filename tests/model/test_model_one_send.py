"""OneSendBackend against a real HTTP/1.1 server on loopback: a request's head and body reach
the socket in one send, every request is still answered (no body, a body in several chunks,
keep-alive reuse), and the readability check sees a connection the server closed."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpcore
import httpx

from rho_adapters.model.lean_pool import LeanConnectionPool
from rho_adapters.model.one_send import OneSendBackend
from rho_adapters.model.tls import PlainTransport


class _Recording(httpcore.AnyIOBackend):
    """httpcore's AnyIO backend, its streams' writes recorded (what reaches the socket)."""

    def __init__(self) -> None:
        self.writes: list[bytes] = []

    async def connect_tcp(self, *args: Any, **kwargs: Any) -> httpcore.AsyncNetworkStream:
        stream = await super().connect_tcp(*args, **kwargs)
        real_write = stream.write

        async def write(buffer: bytes, timeout: float | None = None) -> None:
            self.writes.append(buffer)
            await real_write(buffer, timeout)

        stream.write = write  # type: ignore[method-assign]
        return stream


async def _echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Answers each request with its body (Content-Length or chunked), kept alive."""
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode().lower().split("\r\n")
            sizes = [int(x.split(":")[1]) for x in lines if x.startswith("content-length")]
            length = sizes[0] if sizes else 0
            if any(x.startswith("transfer-encoding: chunked") for x in lines):
                body = b""
                while size := int((await reader.readuntil(b"\r\n")).strip(), 16):
                    body += (await reader.readexactly(size + 2))[:-2]
                await reader.readuntil(b"\r\n")
            else:
                body = await reader.readexactly(length)
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body))
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


@asynccontextmanager
async def _client(inner: httpcore.AsyncNetworkBackend) -> AsyncIterator[httpx.AsyncClient]:
    listener = await asyncio.start_server(_echo, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    transport = PlainTransport(httpx.Limits(max_connections=4))
    transport._pool = LeanConnectionPool(network_backend=OneSendBackend(inner))
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", transport=transport) as c:
        yield c
    listener.close()
    await listener.wait_closed()


async def test_a_post_goes_out_in_one_send_and_is_answered() -> None:
    recording = _Recording()
    async with _client(recording) as client:
        for i in range(3):
            answer = await client.post("/chat", json={"n": i})
            assert answer.json() == {"n": i}
    assert len(recording.writes) == 3  # httpcore alone: 6 (head, then body)
    for i, sent in enumerate(recording.writes):
        assert sent.startswith(b"POST /chat HTTP/1.1\r\n")
        assert sent.endswith(b'\r\n\r\n{"n":%d}' % i)


async def test_a_request_without_a_body_and_a_chunked_one_are_sent_whole() -> None:
    recording = _Recording()

    async def chunks() -> AsyncIterator[bytes]:
        for part in (b"one ", b"two ", b"three"):
            yield part

    async with _client(recording) as client:
        assert (await client.get("/")).content == b""
        assert (await client.post("/", content=chunks())).content == b"one two three"
    joined = b"".join(recording.writes)
    assert joined.count(b"HTTP/1.1\r\n") == 2
    # The GET in one send; the chunked POST's head with its first chunk, then the others.
    assert recording.writes[0].startswith(b"GET / ")
    assert recording.writes[0].endswith(b"\r\n\r\n")
    assert recording.writes[1].startswith(b"POST / ")
    assert recording.writes[1].endswith(b"\r\n\r\n4\r\none \r\n")


async def test_the_readability_check_sees_a_connection_the_server_closed() -> None:
    closed = asyncio.Event()

    async def answer_once(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
        await writer.drain()
        writer.close()
        closed.set()

    listener = await asyncio.start_server(answer_once, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    backend = OneSendBackend()
    stream = await backend.connect_tcp("127.0.0.1", port)
    assert stream.get_extra_info("is_readable") is False
    await stream.write(b"GET / HTTP/1.1\r\nhost: x\r\n\r\n")
    assert b"ok" in await stream.read(1024)
    await closed.wait()
    for _ in range(100):  # the FIN arrives a moment after the close
        if stream.get_extra_info("is_readable"):
            break
        await asyncio.sleep(0.01)
    assert stream.get_extra_info("is_readable") is True
    assert stream.get_extra_info("socket") is not None
    await stream.aclose()
    listener.close()
    await listener.wait_closed()
