"""LeanConnectionPool against a real HTTP/1.1 server on loopback: keep-alive reuse, the
connection bound, a connection the server closed never handed out, and no per-request scan of
every pooled socket (what stalled the loop with hundreds of sessions)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpcore
import httpx
import pytest

from rho_adapters.model import lean_pool
from rho_adapters.model.lean_pool import LeanConnectionPool, pool_class
from rho_adapters.model.tls import PlainTransport


class _Server:
    """Answers every request ``ok`` with keep-alive; ``close_after_reply`` drops the socket
    after each answer without saying so (a server's idle timeout, seen by the client later)."""

    def __init__(self, *, close_after_reply: bool = False, delay: float = 0.0) -> None:
        self.close_after_reply = close_after_reply
        self.delay = delay
        self.connections = 0
        self.requests = 0
        self.open_now = 0
        self.open_most = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        self.open_now += 1
        self.open_most = max(self.open_most, self.open_now)
        try:
            while await reader.readuntil(b"\r\n\r\n"):
                self.requests += 1
                await asyncio.sleep(self.delay)
                writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
                await writer.drain()
                if self.close_after_reply:
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            self.open_now -= 1
            writer.close()


@asynccontextmanager
async def _client(server: _Server, max_connections: int) -> AsyncIterator[httpx.AsyncClient]:
    listener = await asyncio.start_server(server.handle, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    limits = httpx.Limits(max_connections=max_connections, max_keepalive_connections=None)
    transport = PlainTransport(limits)
    assert isinstance(transport._pool, LeanConnectionPool)
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", transport=transport) as c:
        yield c
    listener.close()
    await listener.wait_closed()


async def test_sequential_requests_reuse_one_kept_alive_connection() -> None:
    server = _Server()
    async with _client(server, 10) as client:
        for _ in range(20):
            assert (await client.get("/")).text == "ok"
    assert (server.requests, server.connections) == (20, 1)


async def test_concurrent_requests_stay_within_the_connection_bound_and_all_complete() -> None:
    server = _Server(delay=0.01)
    async with _client(server, 5) as client:
        answers = await asyncio.gather(*(client.get("/") for _ in range(40)))
    assert [a.text for a in answers] == ["ok"] * 40
    assert server.requests == 40
    assert server.open_most <= 5
    assert server.connections == 5  # all reused once opened, none beyond the bound


async def test_a_connection_the_server_closed_is_never_handed_out() -> None:
    server = _Server(close_after_reply=True)
    async with _client(server, 10) as client:
        for _ in range(5):
            assert (await client.get("/")).text == "ok"
            await asyncio.sleep(0.02)  # the server's close reaches the client's socket
    # Each request found the previous connection dead before using it, and opened another.
    assert (server.requests, server.connections) == (5, 5)


async def test_a_request_asks_only_the_connection_it_takes_not_every_pooled_socket(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server = _Server(delay=0.02)
    async with _client(server, 30) as client:
        await asyncio.gather(*(client.get("/") for _ in range(30)))  # 30 idle connections now
        pool = client._transport._pool  # type: ignore[attr-defined]
        assert len(pool.connections) == 30
        asked: list[int] = []
        for connection in pool.connections:
            original = connection.has_expired

            def counted(original: Any = original, who: int = id(connection)) -> bool:
                asked.append(who)
                return bool(original())

            monkeypatch.setattr(connection, "has_expired", counted)
        monkeypatch.setattr(lean_pool, "SWEEP_SECONDS", 3600.0)
        pool._next_sweep = float("inf")
        for _ in range(20):
            assert (await client.get("/")).text == "ok"
    # httpcore's own pool asks all 30 at each request's start and end (1,200 asks here).
    assert len(asked) == 20
    assert set(asked) == {asked[0]}  # always the first idle one, the one that is used
    assert server.connections == 30


async def test_a_pool_within_its_keepalive_bound_is_not_asked_for_surplus_idle_ones(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No idle connection can be beyond ``max_keepalive_connections`` when the pool holds no
    more than that: the pass that counts them is skipped (it asked every connection
    ``is_idle()`` at each request's start and end)."""
    server = _Server(delay=0.02)
    async with _client(server, 30) as client:
        await asyncio.gather(*(client.get("/") for _ in range(30)))
        pool = client._transport._pool  # type: ignore[attr-defined]
        # The expiry sweep asks every connection once per SWEEP_SECONDS (its own test is
        # below): at load 20 the ten requests outlasted it and read 40 asks
        pool._next_sweep = float("inf")
        asked: list[int] = []
        for connection in pool.connections:
            original = connection.is_idle

            def counted(original: Any = original) -> bool:
                asked.append(1)
                return bool(original())

            monkeypatch.setattr(connection, "is_idle", counted)
        for _ in range(10):
            assert (await client.get("/")).text == "ok"
    # before: all 30 at each request's start and end (600 asks), and the one taken
    assert len(asked) <= 20
    assert server.connections == 30


async def test_idle_connections_are_swept_for_expiry_once_per_interval() -> None:
    server = _Server(close_after_reply=True)
    async with _client(server, 10) as client:
        await asyncio.gather(*(client.get("/") for _ in range(4)))
        pool = client._transport._pool  # type: ignore[attr-defined]
        await asyncio.sleep(0.05)  # the server closed all four; none is in use
        pool._next_sweep = 0.0  # the interval has passed
        assert (await client.get("/")).text == "ok"
        # The sweep dropped the four dead ones; only the new connection remains.
        assert len(pool.connections) == 1


async def test_a_request_waiting_for_the_only_connection_gets_it_or_a_pool_timeout() -> None:
    server = _Server(delay=0.2)
    async with _client(server, 1) as client:
        slow = asyncio.ensure_future(client.get("/"))
        await asyncio.sleep(0.05)  # the one connection is taken
        with pytest.raises(httpx.PoolTimeout):
            await client.get("/", timeout=httpx.Timeout(5, pool=0.01))
        waiting = asyncio.ensure_future(client.get("/", timeout=httpx.Timeout(5, pool=5)))
        assert (await slow).text == "ok"
        assert (await waiting).text == "ok"  # woken when the first gave the connection back
        pool = client._transport._pool  # type: ignore[attr-defined]
        assert pool._requests == []
    assert (server.requests, server.connections) == (2, 1)


async def test_a_response_abandoned_mid_body_gives_its_connection_back() -> None:
    async def slow_body(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while await reader.readuntil(b"\r\n\r\n"):
                writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 4\r\n\r\nok")
                await writer.drain()
                await asyncio.sleep(0.2)
                writer.write(b"ok")
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    listener = await asyncio.start_server(slow_body, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    transport = PlainTransport(httpx.Limits(max_connections=1))
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", transport=transport) as c:

        async def read_all() -> bytes:
            async with c.stream("GET", "/") as response:
                return b"".join([part async for part in response.aiter_raw()])

        reading = asyncio.ensure_future(read_all())
        await asyncio.sleep(0.05)  # the head and half the body are in
        reading.cancel()
        with pytest.raises(asyncio.CancelledError):
            await reading
        assert transport._pool._requests == []
        # the only connection slot is free again (the abandoned connection closed)
        assert await read_all() == b"okok"
    listener.close()
    await listener.wait_closed()


def test_the_lean_pool_only_under_the_httpcore_line_it_was_written_for() -> None:
    # it overrides a private method of httpcore 1.0's pool: another line gets httpcore's own
    assert pool_class("1.0.9") is LeanConnectionPool
    assert pool_class("1.1.0") is httpcore.AsyncConnectionPool
    assert pool_class("2.0.0") is httpcore.AsyncConnectionPool
