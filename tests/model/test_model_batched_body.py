"""BatchedHTTP11Connection against a real HTTP/1.1 server on loopback: the HTTP chunks one
socket read brought come up as one piece, nothing waits for chunks not sent yet, a kept-alive
connection serves the next request, and a body cut short fails as httpcore's does."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import httpx
import pytest

from rho_adapters.model.batched_body import BatchedHTTP11Connection
from rho_adapters.model.lean_connection import LeanConnection
from rho_adapters.model.tls import PlainTransport

Writer = Callable[[asyncio.StreamWriter], Awaitable[bool]]
HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"


def chunked(*pieces: bytes) -> bytes:
    return b"".join(b"%x\r\n%s\r\n" % (len(piece), piece) for piece in pieces)


@asynccontextmanager
async def served(answer: Writer) -> AsyncIterator[tuple[httpx.AsyncClient, list[int]]]:
    """A client of a server that reads each request's head and lets ``answer`` write the
    response (False: close the connection); the list counts the connections accepted."""
    accepted: list[int] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted.append(1)
        try:
            while await reader.readuntil(b"\r\n\r\n"):
                if not await answer(writer):
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    listener = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    transport = PlainTransport(httpx.Limits(max_connections=4, max_keepalive_connections=4))
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", transport=transport) as c:
        yield c, accepted
    listener.close()
    await listener.wait_closed()


async def pieces_of(client: httpx.AsyncClient) -> list[bytes]:
    async with client.stream("POST", "/chat") as response:
        return [piece async for piece in response.aiter_raw()]


DELTAS = [b'data: {"n": %d}\n\n' % i for i in range(20)]


async def test_the_chunks_one_read_brought_come_up_as_one_piece_with_every_byte() -> None:
    async def at_once(writer: asyncio.StreamWriter) -> bool:
        writer.write(HEAD + chunked(*DELTAS) + b"0\r\n\r\n")
        await writer.drain()
        return True

    joined_before = BatchedHTTP11Connection.reads_joined
    async with served(at_once) as (client, _):
        pieces = await pieces_of(client)
        pool = client._transport._pool  # type: ignore[attr-defined]
        assert all(isinstance(c, LeanConnection) for c in pool.connections)
    assert b"".join(pieces) == b"".join(DELTAS)
    # httpcore's own connection gives 20 pieces, one per HTTP chunk
    assert len(pieces) < 5
    assert BatchedHTTP11Connection.reads_joined - joined_before == 20 - len(pieces)


async def test_a_chunk_comes_up_before_the_next_one_is_sent() -> None:
    """Nothing waits for more: the server sends the second chunk only once the client has
    read the first (a connection that waited for more data would never see it)."""
    first_read = asyncio.Event()

    async def one_then_another(writer: asyncio.StreamWriter) -> bool:
        writer.write(HEAD + chunked(DELTAS[0]))
        await writer.drain()
        await first_read.wait()
        writer.write(chunked(DELTAS[1], DELTAS[2]) + b"0\r\n\r\n")
        await writer.drain()
        return True

    async with served(one_then_another) as (client, _):
        got: list[bytes] = []
        async with asyncio.timeout(5), client.stream("POST", "/chat") as response:
            async for piece in response.aiter_raw():
                got.append(piece)
                first_read.set()
    assert got[0] == DELTAS[0]
    assert b"".join(got) == b"".join(DELTAS[:3])


async def test_a_kept_alive_connection_serves_the_next_request_after_a_joined_body() -> None:
    async def at_once(writer: asyncio.StreamWriter) -> bool:
        writer.write(HEAD + chunked(*DELTAS) + b"0\r\n\r\n")
        await writer.drain()
        return True

    async with served(at_once) as (client, accepted):
        for _ in range(3):
            assert b"".join(await pieces_of(client)) == b"".join(DELTAS)
    assert len(accepted) == 1


async def test_a_body_cut_short_fails_after_the_chunks_that_came_whole() -> None:
    async def cut(writer: asyncio.StreamWriter) -> bool:
        writer.write(HEAD + chunked(DELTAS[0], DELTAS[1]) + b"ff\r\npartial")
        await writer.drain()
        return False  # closes mid-chunk

    got: list[bytes] = []
    async with served(cut) as (client, _):

        async def read() -> None:
            async with client.stream("POST", "/chat") as response:
                async for piece in response.aiter_raw():
                    got.append(piece)

        with pytest.raises(httpx.RemoteProtocolError):
            await read()
    assert b"".join(got).startswith(DELTAS[0] + DELTAS[1])
