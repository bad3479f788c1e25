"""The MCP tools a recording called, for replaying it without starting any server.

A recording's config names its MCP servers, but a trace is data: a replay never starts the
programs it names. So the MCP tools the recorded calls used become stand-ins whose
``policy_for`` is what the recording's configuration said (read-only when its server's
``read_only_tools`` listed the tool, else dangerous, as ``rho_adapters.mcp.tool`` decides)
and whose arguments are any object; ``RecordedTools`` answers their calls with the recorded
results, so the replay's decisions and results are the recording's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from rho_domain import events as ev
from rho_domain.mcp_config import McpServerConfig
from rho_domain.mcp_names import server_of
from rho_domain.tools.base import (
    DANGEROUS,
    READ_ONLY,
    ToolContext,
    ToolHandler,
    ToolOutput,
    ToolPolicy,
    error_output,
)

_ANY_OBJECT: Mapping[str, Any] = {"type": "object"}


class RecordedMcpTool(ToolHandler):
    """A stand-in for an MCP tool a recording called (never called itself: the recorded
    result answers; called anyway, it says so)."""

    def __init__(self, name: str, *, read_only: bool) -> None:
        self._name = name
        self._policy = READ_ONLY if read_only else DANGEROUS

    @property
    def name(self) -> str:
        """``mcp__<server>__<tool>``, as recorded."""
        return self._name

    @property
    def description(self) -> str:
        """Where it comes from."""
        return f"{self._name}, as a recording called it"

    @property
    def parameters(self) -> Mapping[str, Any]:
        """Any object: the recording's server checked the arguments."""
        return _ANY_OBJECT

    def policy_for(self, arguments: Mapping[str, Any]) -> ToolPolicy:
        """What the recording's configuration made it."""
        return self._policy

    async def handle(self, arguments: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
        """Not run: no server is started for a replay."""
        return error_output(f"[replay: {self._name} is not run, no MCP server is started]")


def recorded_mcp_tools(
    events: Iterable[ev.Event], servers: Mapping[str, McpServerConfig]
) -> list[RecordedMcpTool]:
    """Stand-ins for the MCP tools the recorded calls used; ``servers`` are the recording's
    (its config's and its profile's) definitions, for their ``read_only_tools``."""
    names: dict[str, None] = {}
    for event in events:
        if isinstance(event, ev.ToolStarted | ev.ToolBlocked | ev.ApprovalRequested):
            names[event.call.name] = None
    out = []
    for name in names:
        server = server_of(name)
        if server is None:
            continue
        listed = servers[server].read_only_tools if server in servers else ()
        tool = name.removeprefix(f"mcp__{server}__")
        out.append(RecordedMcpTool(name, read_only=tool in listed or name in listed))
    return out
