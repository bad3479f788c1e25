"""An HTTP MCP server's configured headers: refused where they cannot be sent as written
(not a header name, two spellings of one name, a header the transport sets, Authorization
beside ``bearer_token_env``, headers on a local program), and on the wire one header a name
whatever a library caller passes: the transport's own win."""

from __future__ import annotations

import httpx
import pytest

from rho_adapters.mcp.http import HttpTransport
from rho_adapters.mcp.references import resolved_headers
from rho_domain.config import AgentConfig
from rho_domain.errors import ConfigError
from rho_domain.mcp_config import McpServerConfig

URL = "http://mcp.test/mcp"


@pytest.mark.parametrize(
    ("server", "said"),
    [
        (
            McpServerConfig(url=URL, headers={"X-Token": "a", "x-token": "b"}),
            "mcp_servers.web.headers: 'X-Token' and 'x-token' are one header",
        ),
        (
            McpServerConfig(url=URL, headers={"X Token": "a"}),
            "mcp_servers.web.headers: 'X Token' is not an HTTP header name",
        ),
        (
            McpServerConfig(url=URL, headers={"accept": "text/html"}),
            "mcp_servers.web.headers.accept: rho-agent sets this header itself",
        ),
        (
            McpServerConfig(url=URL, headers={"MCP-SESSION-ID": "s"}),
            "mcp_servers.web.headers.MCP-SESSION-ID: rho-agent sets this header itself",
        ),
        (
            McpServerConfig(
                url=URL, headers={"authorization": "Bearer x"}, bearer_token_env="TOKEN"
            ),
            "headers.authorization and bearer_token_env both give the Authorization header",
        ),
        (
            McpServerConfig(command=("python", "server.py"), headers={"X-Token": "a"}),
            "mcp_servers.web.headers: headers go to an HTTP server (url)",
        ),
    ],
)
def test_headers_that_cannot_be_sent_as_written_are_refused_with_their_key(
    server: McpServerConfig, said: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        AgentConfig(mcp_servers={"web": server})
    assert said in str(caught.value)


def test_a_header_in_another_case_is_kept_when_it_is_the_only_one() -> None:
    config = AgentConfig(mcp_servers={"web": McpServerConfig(url=URL, headers={"x-TEAM": "a"})})
    assert dict(config.mcp_servers["web"].headers) == {"x-TEAM": "a"}


def test_a_library_callers_authorization_and_the_bearer_variable_make_one_header() -> None:
    # McpServerConfig made without AgentConfig's check: the variable's token wins, once
    server = McpServerConfig(
        url=URL, headers={"authorization": "Bearer old"}, bearer_token_env="TOKEN"
    )
    assert resolved_headers("web", server, {"TOKEN": "t0k3n"}) == {"Authorization": "Bearer t0k3n"}


async def test_the_transports_headers_win_once_whatever_case_a_caller_gave() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(202)

    configured = {"accept": "text/html", "content-TYPE": "text/plain", "X-Team": "a"}
    http = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    transport = HttpTransport("web", URL, headers=configured, http_client=http)
    try:
        await transport.start(lambda _: None, lambda _: None)
        transport.session_id = "s1"
        await transport.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    finally:
        await http.aclose()
    raw = [(name.decode().lower(), value.decode()) for name, value in seen[0].headers.raw]
    names = [name for name, _ in raw]
    assert len(names) == len(set(names)), raw  # one header a name
    sent = dict(raw)
    assert sent["accept"] == "application/json, text/event-stream"
    assert sent["content-type"] == "application/json"
    assert sent["mcp-session-id"] == "s1"
    assert sent["x-team"] == "a"
