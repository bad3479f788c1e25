"""No HTTP client of rho-agent builds an SSL context for an http:// URL, and those for https://
share the process's one; each says so when an https:// URL meets a plain HTTP server.

httpx builds a context (loading the CA bundle: 50-80 ms of CPU) for every client made with its
own transport, whatever the URL's scheme: each ``rho-agent --server`` command, each MCP server
over HTTP and each Daytona sandbox paid it.
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import ssl
import threading
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, Protocol

import pytest
from _model_support import collect, request

from rho_adapters.daytona.api import SandboxAPI
from rho_adapters.daytona.settings import DaytonaSettings
from rho_adapters.fakes.clock import FakeClock
from rho_adapters.mcp.http import HttpTransport
from rho_adapters.model import AnthropicModel, ModelEndpoint, OpenAIChatModel
from rho_adapters.model.retry import RetryPolicy
from rho_adapters.model.tls import PLAIN_HTTP_ANSWER, shared_ssl_context
from rho_domain.errors import McpError, ModelProtocolError
from rho_entry.cli.remote import run_remote
from rho_entry.client import AgentClient


@pytest.fixture
def bundles_loaded(monkeypatch: pytest.MonkeyPatch) -> list[ssl.SSLContext]:
    """The SSL contexts that loaded a CA bundle while the test ran."""
    loaded: list[ssl.SSLContext] = []
    real = ssl.SSLContext.load_verify_locations

    def counting(self: ssl.SSLContext, *args: Any, **kwargs: Any) -> None:
        loaded.append(self)
        real(self, *args, **kwargs)

    monkeypatch.setattr(ssl.SSLContext, "load_verify_locations", counting)
    return loaded


class Closing(Protocol):
    async def aclose(self) -> None: ...


async def remote_client(url: str) -> Closing:
    return AgentClient(url, token="t", environ={})


async def mcp_client(url: str) -> Closing:
    transport = HttpTransport("docs", url, headers={})
    await transport.start(lambda _: None, lambda _: None)  # where it makes its client
    return transport


async def daytona_client(url: str) -> Closing:
    return SandboxAPI(DaytonaSettings(api_key="k", api_url=url))


MAKERS: dict[str, Callable[[str], Awaitable[Closing]]] = {
    "remote": remote_client,
    "mcp": mcp_client,
    "daytona": daytona_client,
}


@pytest.mark.parametrize("kind", MAKERS)
async def test_an_http_url_loads_no_ca_bundle(kind: str, bundles_loaded: list[object]) -> None:
    client = await MAKERS[kind]("http://127.0.0.1:9/api")
    await client.aclose()
    assert bundles_loaded == []


@pytest.mark.parametrize("kind", MAKERS)
async def test_https_clients_share_the_process_context(
    kind: str, bundles_loaded: list[object]
) -> None:
    shared = shared_ssl_context()  # made once: the clients below must make none
    bundles_loaded.clear()
    first = await MAKERS[kind]("https://one.example/api")
    second = await MAKERS[kind]("https://two.example/api")
    for client in (first, second):
        await client.aclose()
    assert bundles_loaded == []
    assert shared is shared_ssl_context()


@pytest.fixture
def plain_http_port() -> Iterator[tuple[int, list[int]]]:
    """A server on 127.0.0.1 that answers whatever comes as a plain HTTP server does (a TLS
    ClientHello gets ``400 Bad Request``), and the count of connections it took."""
    listener = socket.create_server(("127.0.0.1", 0))
    taken: list[int] = []

    def serve() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:  # closed: the test is over
                return
            with conn:
                taken.append(1)
                conn.recv(1)
                conn.sendall(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield listener.getsockname()[1], taken
    listener.shutdown(socket.SHUT_RDWR)  # wakes the accept (close alone does not, on Linux)
    listener.close()
    thread.join(30)


def test_https_to_a_plain_http_server_says_to_use_http(
    plain_http_port: tuple[int, list[int]], capsys: pytest.CaptureFixture[str]
) -> None:
    """``https://`` for a local server that speaks plain HTTP, over a real socket. Before:
    OpenSSL's "[SSL: WRONG_VERSION_NUMBER] wrong version number" from each client, and the
    model clients added "is the server running there?" after three attempts: it was running."""
    port, taken = plain_http_port
    url = f"https://127.0.0.1:{port}/v1"

    async def models() -> list[str]:
        said = []
        for cls in (OpenAIChatModel, AnthropicModel):
            endpoint = ModelEndpoint(base_url=url, retry=RetryPolicy(max_retries=2))
            model = cls(model="m", endpoint=endpoint, clock=FakeClock())
            try:
                with pytest.raises(ModelProtocolError) as caught:
                    await asyncio.wait_for(collect(model, request()), 30)
            finally:
                await model.aclose()
            said.append(str(caught.value))
        transport = HttpTransport("docs", url, headers={})
        await transport.start(lambda _: None, lambda _: None)
        try:
            with pytest.raises(McpError) as caught_mcp:
                await transport.send({"jsonrpc": "2.0", "id": 1, "method": "initialize"})
        finally:
            await transport.aclose()
        return [*said, str(caught_mcp.value)]

    said = asyncio.run(models())
    assert len(taken) == 3  # one handshake per model client: a retry meets the same server
    remote = argparse.Namespace(server=f"https://127.0.0.1:{port}", list=True)
    assert run_remote(remote, {"RHO_AGENT_SERVER_TOKEN": "t"}) == 1
    said.append(capsys.readouterr().err)
    for text in said:
        assert PLAIN_HTTP_ANSWER in text
        assert "WRONG_VERSION_NUMBER" not in text
