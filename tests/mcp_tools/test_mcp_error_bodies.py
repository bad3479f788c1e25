"""An MCP server over HTTP does not choose how much memory we spend on its error answers.

A success body was read through ``_bounded`` (at most ``max_body`` bytes); an answer with an
error status was read whole (``response.aread()``) for the 300 characters the message shows,
so a server answering ``500`` with an endless body held the client reading, and filling its
memory, until the call's deadline. Now only the head of an error body is read.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import AsyncIterator, Iterator

import pytest

from rho_adapters.mcp.http import HttpTransport
from rho_domain.errors import McpError

CHUNK = b"x" * 65536
BODY = 64 * 1024 * 1024  # what the server offers: far beyond what a message shows


class ErrorServer:
    """Answers every request with ``500`` and a ``BODY``-byte body; counts what it sent."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.sent = 0
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        conn, _ = self.listener.accept()
        with conn:
            conn.settimeout(30)
            data = b""
            while b"\r\n\r\n" not in data:
                data += conn.recv(65536)
            head = (
                b"HTTP/1.1 500 Internal Server Error\r\nContent-Type: text/plain\r\n"
                + f"Content-Length: {BODY}\r\n\r\n".encode()
                + b"the server broke: "
            )
            conn.sendall(head)
            try:
                while self.sent < BODY:
                    conn.sendall(CHUNK)
                    self.sent += len(CHUNK)
            except OSError:
                pass  # the client hung up: what it did not read was never sent

    def close(self) -> None:
        self.listener.close()
        self.thread.join(30)


@pytest.fixture
def error_server() -> Iterator[ErrorServer]:
    server = ErrorServer()
    yield server
    server.close()


async def test_an_error_answer_is_read_only_as_far_as_its_message(
    error_server: ErrorServer,
) -> None:
    url = f"http://127.0.0.1:{error_server.port}/mcp"
    transport = HttpTransport("flood", url, headers={}, max_body=1_000_000)
    await transport.start(lambda message: None, lambda why: None)
    try:
        with pytest.raises(McpError) as info:
            async with asyncio.timeout(20):
                await transport.send({"jsonrpc": "2.0", "id": 1, "method": "initialize"})
    finally:
        await transport.aclose()
    # the socket is closed by the event loop: wait for the server off the loop
    await asyncio.to_thread(error_server.thread.join, 20)
    assert not error_server.thread.is_alive()
    message = str(info.value)
    assert "answered initialize with HTTP 500: the server broke: xxx" in message
    assert len(message) < 600
    # What was read, and what the kernel's socket buffers took: far from the whole body.
    assert error_server.sent < 16 * 1024 * 1024, error_server.sent


class DeepServer:
    """Answers every request with one JSON-RPC answer nested 100,000 arrays deep (200 KB:
    far under any size bound; Python's json decoder gives up on it with RecursionError)."""

    BODY = b'{"jsonrpc":"2.0","id":0,"result":' + b"[" * 100_000 + b"]" * 100_000 + b"}"

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(0.1)  # accept() wakes to see ``stopped``
        self.port = self.listener.getsockname()[1]
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stopped.is_set():
            try:
                conn, _ = self.listener.accept()
            except TimeoutError:
                continue
            with conn:
                conn.settimeout(10)
                data = b""
                while b"\r\n\r\n" not in data:
                    data += conn.recv(65536)
                head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                conn.sendall(head + f"Content-Length: {len(self.BODY)}\r\n\r\n".encode())
                conn.sendall(self.BODY)

    def close(self) -> None:
        self.stopped.set()
        self.thread.join(10)
        self.listener.close()


async def test_an_answer_too_deep_to_decode_is_a_problem_not_a_crash() -> None:
    from rho_adapters.mcp import McpToolSource
    from rho_domain.mcp_config import McpServerConfig

    server = DeepServer()
    config = McpServerConfig(url=f"http://127.0.0.1:{server.port}/mcp", startup_timeout=1)
    tools = McpToolSource({"deep": config}, environ={"PATH": "/usr/bin"}, output_limit=2_000)
    try:
        sourced = await tools.current()  # raised RecursionError out of the run before
    finally:
        await tools.aclose()
        server.close()
    assert sourced.handlers == ()
    assert len(sourced.problems) == 1
    assert "MCP server 'deep'" in sourced.problems[0]


async def _login_error(port: int) -> str:
    url = f"http://bot:pw-mcp-3e8d@127.0.0.1:{port}/mcp"
    transport = HttpTransport("docs", url, headers={}, max_body=1_000_000)
    await transport.start(lambda message: None, lambda why: None)
    try:
        with pytest.raises(McpError) as info:
            async with asyncio.timeout(20):
                await transport.send({"jsonrpc": "2.0", "id": 1, "method": "initialize"})
    finally:
        await transport.aclose()
    message = str(info.value)
    assert f"MCP server 'docs' at http://bot:***@127.0.0.1:{port}/mcp" in message
    return message


async def test_an_url_login_is_not_in_an_answers_error(error_server: ErrorServer) -> None:
    """An MCP URL carrying a login (https://user:PW@host/mcp): the error naming the server
    and its URL, a tool result or start-up warning the trace keeps, showed the password."""
    message = await _login_error(error_server.port)
    assert "HTTP 500" in message
    assert "pw-mcp-3e8d" not in message


async def test_an_url_login_is_not_in_a_refused_connections_error() -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    message = await _login_error(port)
    assert "ConnectError" in message
    assert "pw-mcp-3e8d" not in message


def test_the_body_of_the_answer_to_our_answer_is_never_read() -> None:
    # redmcp21: the POST carrying our answer to a server's request (or a notification of
    # ours) had its body read as an answer's, up to max_body (256 MiB) each, for each of the
    # 64 answers a server's requests may keep waiting, and the messages in it delivered. The
    # specification's answer there is 202 with no body: a 2xx is taken as accepted, unread.
    import httpx

    from rho_adapters.mcp.jsonrpc import RpcPeer

    pulled: list[int] = []
    notified: list[str] = []
    posted: list[bytes] = []

    class Counted(httpx.AsyncByteStream):
        async def __aiter__(self) -> AsyncIterator[bytes]:
            yield b'[{"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}'
            for _ in range(16):
                pulled.append(len(CHUNK))
                yield b', "' + CHUNK + b'"'
            yield b"]"

    def handler(request: httpx.Request) -> httpx.Response:
        if request.method != "POST":
            return httpx.Response(405)  # no stream of its own notifications
        posted.append(request.content)
        return httpx.Response(200, headers={"content-type": "application/json"}, stream=Counted())

    async def main() -> None:
        client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
        http = HttpTransport("h", "http://mcp.invalid/mcp", headers={}, http_client=client)
        peer = RpcPeer("h", http, on_notification=lambda method, _: notified.append(method))
        await peer.start()
        peer.receive('{"jsonrpc": "2.0", "id": "p1", "method": "ping"}')
        await http.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        for _ in range(20):  # the answer's task, and its POST, run
            await asyncio.sleep(0)
        await client.aclose()

    asyncio.run(main())
    assert sorted(b'"id": "p1"' in body for body in posted) == [False, True]  # both posted
    assert pulled == []
    assert notified == []
