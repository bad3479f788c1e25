"""One MCP server as ``McpToolSource`` holds it: how it is connected (``connect``: stdio or
Streamable HTTP, its variables resolved) and its state (``ServerState``: starting, ready or
failed, its listed tools, its restarts, the tools its model names stand for), and whether a
tool is still listed as a waiting call's handler was made from it (``relisted``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import attrs

from rho_adapters.mcp.client import McpClient
from rho_adapters.mcp.references import resolved_env, resolved_headers, resolved_url
from rho_adapters.mcp.stdio import StdioTransport, environment
from rho_adapters.mcp.transport import Message, Transport
from rho_domain.call_digest import tool_digest
from rho_domain.errors import McpError
from rho_domain.mcp_config import McpServerConfig
from rho_domain.tools.base import ToolOutput
from rho_domain.value_methods import value_eq, value_repr

Connect = Callable[[str, McpServerConfig, Mapping[str, str]], Transport]


def connect(name: str, server: McpServerConfig, environ: Mapping[str, str]) -> Transport:
    """The transport of one server: stdio for a ``command``, Streamable HTTP for a ``url``.
    Raises ConfigError for an unset variable the config names."""
    if server.command:
        env = environment(resolved_env(name, server, environ), environ)
        return StdioTransport(name, server.command, env=env, cwd=server.cwd)
    from rho_adapters.mcp.http import HttpTransport  # httpx only for HTTP servers
    from rho_adapters.model.proxies import ProxyRoutes

    assert server.url is not None
    routes = ProxyRoutes.from_environ(environ)  # as httpx would route it, and whom to trust
    headers = resolved_headers(name, server, environ)
    url = resolved_url(name, server, environ)
    return HttpTransport(
        name,
        url,
        shown_url=server.url,  # its ${NAME}, never the key it stands for
        headers=headers,
        proxy=routes.for_url(url),
        trust=routes.trust,
    )


@attrs.define
class ServerState:
    """One server as the source sees it. ``state``: ``starting``, ``ready``, ``failed``."""

    __repr__ = value_repr
    __eq__ = value_eq

    name: str
    config: McpServerConfig
    client: McpClient | None = None
    tools: list[Message] = attrs.Factory(list)
    state: str = "starting"
    problem: str = ""
    stale: bool = False  # its list changed: list it again
    restarts: int = 0  # failed restarts since it last served
    restart_at: float | None = None  # monotonic time of the next restart; None: never
    names: dict[str, str] = attrs.Factory(dict)  # model name -> its tool, for the session


def restart_due(state: ServerState, now: float) -> bool:
    """Whether ``state``'s server failed after it served and its restart is due at ``now``."""
    return state.state == "failed" and state.restart_at is not None and now >= state.restart_at


def ready(state: ServerState) -> McpClient:
    """The client of a server that serves, else ``McpError`` saying why it does not."""
    if state.client is None or state.state != "ready":
        raise McpError(
            f"MCP server {state.name!r} is not running: {state.problem}", server=state.name
        )
    return state.client


def relisted(state: ServerState, tool: str, listed: Mapping[str, Any] | None) -> ToolOutput | None:
    """The refusal of a call of ``tool``, whose handler was made from the entry ``listed``,
    now that its server (``state``, ready) lists it as its latest listing does: the tool is
    gone or shown otherwise (description or title, its whitespace aside, or input schema:
    ``call_digest.tool_digest``'s judgement); None when it is as listed, no entry was given,
    or the server is not ready (its call says why: ``ready``)."""
    if listed is None or state.state != "ready":
        return None
    server = state.name
    entry = next((t for t in state.tools if t.get("name") == tool), None)
    if entry is listed or (entry is not None and _shape(entry) == _shape(listed)):
        return None
    refused = (
        f"[not run: MCP server {server!r} lists tool {tool!r} otherwise (its description or "
        "input schema) than when this call was made and asked about: the model is shown it "
        "as it is now, and a call of it is asked about again]"
    )
    said = {"mcp_server": server, "mcp_tool": tool}
    return ToolOutput(content=refused, is_error=True, metadata=said)


def _shape(entry: Mapping[str, Any]) -> str:
    # tool_digest's judgement, not Python's ==, which reads true as 1 (True == 1)
    said = str(entry.get("description") or entry.get("title") or "")
    return tool_digest("", said, {"schema": entry.get("inputSchema", entry.get("left_out"))})
