"""No HTTP client of rho-agent builds an SSL context for an http:// URL, and those for https://
share the process's one.

httpx builds a context (loading the CA bundle: 50-80 ms of CPU) for every client made with its
own transport, whatever the URL's scheme: each ``rho-agent --server`` command, each MCP server
over HTTP and each Daytona sandbox paid it.
"""

from __future__ import annotations

import ssl
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import pytest

from rho_adapters.daytona.api import SandboxAPI
from rho_adapters.daytona.settings import DaytonaSettings
from rho_adapters.mcp.http import HttpTransport
from rho_adapters.model.tls import shared_ssl_context
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
