"""MCP (Model Context Protocol) servers as a tool source, on asyncio subprocesses and httpx.

``McpToolSource`` implements the ``ToolSource`` port; ``probe`` starts servers once and says
what each serves (``rho-agent mcp list``). The modules: ``jsonrpc`` (requests and answers),
``transport`` (the port a transport fills), ``stdio`` and ``http`` (the two transports;
``http_refusals`` an HTTP answer of 300 or more), ``client`` (the handshake, listing,
calling), ``results`` (a result as text, capped and saved), ``tool`` (one MCP tool as a
handler), ``shown_tools`` (which the model is shown), ``references`` (``${VAR}`` in the
config), ``servers`` (one server as the source sees it, and ``connect``), ``source`` (the
port).
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from rho_adapters.mcp.servers import connect
from rho_adapters.mcp.source import McpToolSource
from rho_adapters.mcp.tool import shown_name
from rho_domain.mcp_config import McpServerConfig
from rho_domain.tools.base import ToolHandler
from rho_domain.value_methods import value_eq, value_hash, value_repr

__all__ = ["McpToolSource", "ServerReport", "connect", "probe"]


@attrs.frozen(kw_only=True)
class ServerReport:
    """What one server serves: ``state`` ``ready`` or ``failed`` (``problem`` says why);
    ``tools`` as the model sees them, each with its policy (``read-only``/``dangerous``)."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    name: str
    transport: str
    state: str
    problem: str = ""
    tools: tuple[tuple[str, str], ...] = ()
    instructions: str = ""


async def probe(
    servers: Mapping[str, McpServerConfig], *, environ: Mapping[str, str]
) -> list[ServerReport]:
    """Start ``servers``, list their tools, stop them; one report per server, in order."""
    source = McpToolSource(servers, environ=environ, output_limit=1)
    try:
        sourced = await source.current()
        reports = []
        for name, state in source.servers.items():
            tools = tuple(
                (_listed(h, name), "read-only" if h.policy_for({}).read_only else "dangerous")
                for h in sourced.handlers
                if getattr(h, "server", None) == name
            )
            client = state.client
            reports.append(
                ServerReport(
                    name=name,
                    transport=state.config.transport,
                    state=state.state,
                    problem=state.problem,
                    tools=tools,
                    instructions=client.instructions if client is not None else "",
                )
            )
        return reports
    finally:
        await source.aclose()


def _listed(handler: ToolHandler, server: str) -> str:
    """A tool's model name as ``mcp list`` shows it: with the server's whole name beside a
    name cut to fit, which is what a deny entry names (a cut name is refused there)."""
    from rho_domain.mcp_names import cut_entry

    whole = getattr(handler, "tool", "")
    if not whole or not cut_entry(handler.name, server):
        return handler.name
    return f"{handler.name} (the server's {shown_name(whole)})"
