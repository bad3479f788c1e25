"""Requests go through the proxy the environment names, as httpx would route them.

rho-agent's HTTP clients bring their own transport (``tls.PlainTransport``), and httpx reads
``HTTP_PROXY``, ``HTTPS_PROXY``, ``ALL_PROXY`` and ``NO_PROXY`` only for a client that builds
its own: until ``ProxyRoutes``, a machine behind a proxy could not reach its model server.
httpx's own routing is the oracle for the rules; real sockets show each client using them.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from pathlib import Path

import attrs
import httpx
import pytest

from rho_adapters.daytona.api import SandboxAPI
from rho_adapters.daytona.making import create
from rho_adapters.daytona.settings import DaytonaSettings
from rho_adapters.fakes.loopback import LoopbackServer
from rho_adapters.fakes.wire import text_reply
from rho_adapters.mcp.servers import connect
from rho_adapters.model.proxies import ProxyRoutes
from rho_adapters.model.tls import transport_for
from rho_domain.config import AgentConfig
from rho_domain.errors import ConfigError, McpError, ModelConnectionError
from rho_domain.mcp_config import McpServerConfig
from rho_domain.url_logins import hide_url_logins as redacted
from rho_entry import Agent, Session
from rho_entry.client import AgentClient, proxy_for

ENVIRONMENTS: list[dict[str, str]] = [
    {},
    {"HTTPS_PROXY": "proxy.corp:3128"},
    {"https_proxy": "http://low:1", "HTTPS_PROXY": "http://up:2"},
    {"HTTPS_PROXY": "http://up:2", "https_proxy": ""},
    {"HTTP_PROXY": "http://p:8080", "REQUEST_METHOD": "GET"},
    {"ALL_PROXY": "http://all:9", "HTTP_PROXY": "http://p:8080"},
    {"HTTP_PROXY": "http://p:8080", "HTTPS_PROXY": "http://s:8443", "NO_PROXY": "*"},
    {
        "HTTP_PROXY": "http://p:8080",
        "HTTPS_PROXY": "https://user:pw@s:8443",
        "NO_PROXY": "example.com, .corp.net,10.0.0.1,localhost,::1,http://exact.org,host.io:8443",
    },
]
URLS = [
    "https://api.openai.com/v1",
    "http://127.0.0.1:8080/v1",
    "http://example.com/",
    "https://a.example.com/v1",
    "https://notexample.com/",
    "https://corp.net/",
    "https://x.corp.net/",
    "http://10.0.0.1:9/",
    "http://localhost:1/",
    "http://[::1]:8080/v1",
    "http://exact.org/x",
    "https://exact.org/",
    "http://sub.exact.org/",
    "https://host.io:8443/",
    "https://host.io/",
]


def httpx_route(environ: Mapping[str, str], url: str, monkeypatch: pytest.MonkeyPatch) -> object:
    """The proxy httpx's own client would send ``url`` through under ``environ`` (None:
    directly), as (scheme, host, port)."""
    for name in [n for n in __import__("os").environ if n.lower().endswith("_proxy")]:
        monkeypatch.delenv(name)
    monkeypatch.delenv("REQUEST_METHOD", raising=False)
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    # verify=False: no CA bundle to load, only the routes are asked; nothing is sent
    with httpx.Client(verify=False) as client:  # noqa: S501
        transport = client._transport_for_url(httpx.URL(url))
        if transport is client._transport:
            return None
        proxy = transport._pool._proxy_url  # type: ignore[attr-defined]
        return (proxy.scheme.decode(), proxy.host.decode(), proxy.port)


def ours(environ: Mapping[str, str], url: str) -> object:
    routes = attrs.evolve(ProxyRoutes.from_environ(environ), loopback_direct=False)
    proxy = routes.for_url(url)
    if proxy is None:
        return None
    parsed = httpx.URL(proxy)
    return (parsed.scheme, parsed.host, parsed.port)


@pytest.mark.parametrize("environ", ENVIRONMENTS)
def test_routes_are_httpx_own(environ: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    for url in URLS:
        assert ours(environ, url) == httpx_route(environ, url, monkeypatch), (environ, url)


def test_a_proxy_password_stays_out_of_reprs_and_messages() -> None:
    routes = ProxyRoutes.from_environ({"HTTPS_PROXY": "http://me:s3cret@proxy:3128"})
    assert "s3cret" not in repr(routes)
    assert redacted("http://me:s3cret@proxy:3128") == "http://me:***@proxy:3128"
    with pytest.raises(ConfigError) as refused:
        transport_for("https://x.example", proxy="ftp://me:s3cret@proxy:21")
    assert "s3cret" not in str(refused.value)
    assert "ftp://me:***@proxy:21" in str(refused.value)


# ---- real sockets: each client sends where the routes say ----------------------------------


class Recorder:
    """A proxy that writes down each request line and refuses it (a 403)."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.url = ""

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        self.lines.append(head.split(b"\r\n", 1)[0].decode())
        writer.write(b"HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
        await writer.drain()
        writer.close()


@pytest.fixture
async def recorder() -> AsyncIterator[Recorder]:
    found = Recorder()
    server = await asyncio.start_server(found.serve, "127.0.0.1", 0)
    found.url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
    async with server:
        yield found


async def test_mcp_over_http_goes_through_the_proxy(recorder: Recorder) -> None:
    server = McpServerConfig(url="http://mcp.example:8000/mcp")
    transport = connect("docs", server, {"HTTP_PROXY": recorder.url})
    await transport.start(lambda _: None, lambda _: None)
    try:
        with pytest.raises(McpError):
            await transport.send({"jsonrpc": "2.0", "id": 1, "method": "ping"})
    finally:
        await transport.aclose()
    assert recorder.lines == ["POST http://mcp.example:8000/mcp HTTP/1.1"]


async def test_the_remote_client_goes_through_the_proxy(recorder: Recorder) -> None:
    async with AgentClient(
        "http://agent.example:8765", token="t", environ={"http_proxy": recorder.url}
    ) as client:
        with pytest.raises(Exception):  # noqa: B017, PT011 - the proxy's 403, in any shape
            await client.list_sessions()
    assert recorder.lines[0].startswith("GET http://agent.example:8765/")


async def test_the_remote_client_reaches_a_loopback_server_directly(recorder: Recorder) -> None:
    """The recorder is the proxy and the server at once: through the proxy its request line
    names the absolute URL (and the proxy gets the bearer token); directly, only the path.
    ``NO_PROXY`` lists nothing: a loopback server is never reached through a proxy."""
    proxies = {"http_proxy": recorder.url, "ALL_PROXY": recorder.url, "NO_PROXY": "x.org"}
    async with AgentClient(recorder.url, token="t", environ=proxies) as client:
        with pytest.raises(Exception):  # noqa: B017, PT011 - the recorder's 403
            await client.list_sessions()
    assert recorder.lines == ["GET /api/sessions HTTP/1.1"]
    for url in (
        "http://localhost:8765",
        "http://[::1]:1",
        "https://127.0.0.2:8765",
        "http://localhost.:1",
        "http://app.localhost:1",
        "http://127.1:1",
        "http://0x7f.1:1",
        "http://2130706433:1",
        "http://[::ffff:127.0.0.1]:1",
    ):
        assert proxy_for(url, proxies) is None, url
    for url in ("http://agent.example:8765", "http://128.1:1", "http://[::ffff:10.0.0.1]:1"):
        assert proxy_for(url, proxies) == recorder.url, url


async def test_no_client_sends_its_secret_through_a_proxy_to_a_loopback_server(
    recorder: Recorder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The model client (its API key) and the MCP client (its ``Authorization`` header) to a
    loopback URL, with every proxy variable naming the recorder and ``NO_PROXY`` listing
    nothing local: the session's model answers (before, its request went to the recorder as
    ``POST http://127.0.0.1:PORT/v1/chat/completions``, key included, and the run failed on
    the 403), and the MCP request reaches the recorder as the server (a path, not an
    absolute URL), never as a proxy."""
    proxies = {"HTTP_PROXY": recorder.url, "ALL_PROXY": recorder.url, "NO_PROXY": "x.org"}
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    for name, value in proxies.items():
        monkeypatch.setenv(name, value)
    with LoopbackServer([text_reply("directly")], repeat=True) as model:
        async with Session(Agent(_config(tmp_path, model.base_url))) as session:
            result = await session.run("hello")
    assert result.text == "directly", result
    server = McpServerConfig(url=f"{recorder.url}/mcp", headers={"Authorization": "Bearer m"})
    transport = connect("docs", server, proxies)
    await transport.start(lambda _: None, lambda _: None)
    try:
        with pytest.raises(McpError):
            await transport.send({"jsonrpc": "2.0", "id": 1, "method": "ping"})
    finally:
        await transport.aclose()
    routes = ProxyRoutes.from_environ(proxies)
    for url in (
        f"{recorder.url}/v1",
        "http://localhost:11434/v1",
        "http://localhost.:1",
        "http://app.localhost:1",
        "http://[::1]:1",
        "http://127.1:1",
        "http://0x7f.1:1",
        "http://2130706433:1",
        "http://[::ffff:127.0.0.1]:1",
    ):
        assert routes.for_url(url) is None, url
    for url in ("http://model.example/v1", "http://128.1:1", "http://[::ffff:10.0.0.1]:1"):
        assert routes.for_url(url) == recorder.url, url
    assert recorder.lines == ["POST /mcp HTTP/1.1"]


async def test_daytona_goes_through_the_proxy_with_a_tunnel_for_https(
    recorder: Recorder,
) -> None:
    routes = ProxyRoutes.from_environ({"HTTPS_PROXY": recorder.url})
    api = SandboxAPI(
        DaytonaSettings(api_key="k", api_url="https://daytona.example/api", proxies=routes)
    )
    try:
        with pytest.raises(Exception):  # noqa: B017, PT011 - the tunnel refused
            await create(api, "rho-agent-test")
    finally:
        await api.aclose()
    assert recorder.lines == ["CONNECT daytona.example:443 HTTP/1.1"]


def _config(tmp_path: Path, base_url: str) -> AgentConfig:
    return AgentConfig(model="m", base_url=base_url, working_dir=str(tmp_path), model_retries=0)


async def test_a_session_reaches_its_model_through_the_proxy_and_not_past_no_proxy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The facade's own wiring, with the process's environment: the model's host does not
    exist (``.invalid``), so only the proxy (the loopback server, which answers any absolute
    URL) can answer; under NO_PROXY the request goes there directly, and fails."""
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    closed = "http://model.invalid:1/v1"
    with LoopbackServer([text_reply("through the proxy")], repeat=True) as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.base_url.removesuffix("/v1"))
        async with Session(Agent(_config(tmp_path, closed))) as session:
            result = await session.run("hello")
        assert result.text == "through the proxy"
        monkeypatch.setenv("NO_PROXY", "model.invalid")
        async with Session(Agent(_config(tmp_path, closed))) as session:
            direct = await session.run("hello")
        assert direct.error_type == ModelConnectionError.__name__, direct
        assert "model.invalid:1" in (direct.error or "")
