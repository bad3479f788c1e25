"""Which of an MCP server's listed tools the model is shown (``made_tools``), and the
problems its listing draws; what a source serves now, every server together (``served``).

One server's tools together add at most ``MAX_LISTED`` bytes of JSON (``listed_size``) to a
request: the tools past that are left out, the first ones listed kept. A model name stands
for one tool for the session (``bound``). Each problem becomes an error event of the run (a
line of the trace and of the terminal), so a listing draws at most ``MAX_PROBLEMS`` of its
own and one that counts the rest: 300,000 entries of one name, within the listing's 16 MiB,
drew 299,999 error events at the run's start.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rho_adapters.mcp.server_text import quoted_instructions
from rho_adapters.mcp.servers import ServerState
from rho_adapters.mcp.tool import Caller, McpTool, shown_name
from rho_domain.mcp_config import McpServerConfig
from rho_domain.mcp_names import PREFIX, tool_name
from rho_domain.tools.base import ToolHandler
from rho_domain.tools.source import SourcedTools

MAX_LISTED = 256 * 1024  # bytes of JSON of one server's tools in a model request
MAX_BOUND = 10_000  # model names one server's tools may take in a session (each kept)
MAX_PROBLEMS = 20  # problems of one listing said one by one; the rest are counted


class Problems:
    """The problems of one server's listing: the first ``MAX_PROBLEMS`` kept, the rest
    counted (a server chooses how many entries draw one)."""

    def __init__(self, server: str) -> None:
        self.server = server
        self.kept: list[str] = []
        self.more = 0

    def append(self, problem: str) -> None:
        """Keep ``problem``, or count it: past ``MAX_PROBLEMS``, or said already (the same
        words twice would be two events that say nothing more)."""
        if len(self.kept) < MAX_PROBLEMS and problem not in self.kept:
            self.kept.append(problem)
        else:
            self.more += 1

    def said(self) -> list[str]:
        """The problems kept, and one that counts the rest when there are more."""
        if not self.more:
            return list(self.kept)
        return [
            *self.kept,
            f"MCP server {self.server!r}: {self.more:,} more of its tools are left out, for "
            f"reasons of the kinds above (at most {MAX_PROBLEMS} are said one by one)",
        ]


def listed_size(tool: ToolHandler) -> int:
    """Bytes of JSON ``tool`` adds to every model request: its name, description and schema."""
    shown = {"name": tool.name, "description": tool.description, "parameters": tool.parameters}
    return len(json.dumps(shown))


def made_tools(
    server: str,
    config: McpServerConfig,
    listed: Sequence[Mapping[str, Any]],
    call: Caller,
    bound: dict[str, str] | None = None,
) -> tuple[list[McpTool], list[str]]:
    """The tools of ``server`` the model is shown, from its ``tools/list`` entries in order,
    and the problems met: the ones ``config`` filters out are skipped; one ``left_out``, one
    whose model name another took, in this listing or (``bound``: model name to the tool
    it was made for, kept for the session and filled here) in an earlier one, and those
    past the server's ``MAX_LISTED`` bytes are left out, named: each of the first
    ``MAX_PROBLEMS``, the rest counted in one problem (``Problems``).

    A model name stands for one tool of the server for the session: an approval (an
    "always" among them) is given to the name, and ``get.item`` listed after ``get_item``
    would have taken its approvals. A name given in model form in ``read_only_tools`` vouches
    only for the tool whose name it is unchanged (``get_item``, not ``get.item``)."""
    bound = {} if bound is None else bound
    made: list[McpTool] = []
    problems = Problems(server)
    taken: dict[str, str] = {}
    spent, past = 0, 0
    for tool in listed:
        original = str(tool["name"])
        if not config.tools.admits(server, original):
            continue
        if why := tool.get("left_out"):  # kept_entry's record; the server's key is not kept
            problems.append(
                f"MCP server {server!r}: tool {shown_name(original)} is left out: {why}"
            )
            continue
        name = tool_name(server, original)
        if bound.get(name, original) != original:
            problems.append(
                f"MCP server {server!r}: tool {original!r} would become {name!r}, which is "
                f"its tool {bound[name]!r} in this session (approvals given to the name were "
                f"given to that tool); {original!r} is left out"
            )
            continue
        if name in taken:
            problems.append(
                f"MCP server {server!r}: tools {taken[name]!r} and {original!r} both become "
                f"{name!r}; {original!r} is left out"
            )
            continue
        if name not in bound and len(bound) >= MAX_BOUND:
            problems.append(
                f"MCP server {server!r}: tool {original!r} is left out: the server named more "
                f"than {MAX_BOUND:,} tools in this session"
            )
            continue
        taken[name] = bound[name] = original
        unchanged = name == f"{PREFIX}{server}__{original}"
        read_only = original in config.read_only_tools or (
            unchanged and name in config.read_only_tools
        )
        handler = McpTool(name=name, server=server, tool=tool, read_only=read_only, call=call)
        spent += listed_size(handler)
        if past or spent > MAX_LISTED:  # the first ones listed are kept, in the server's order
            past += 1
            continue
        made.append(handler)
    said = problems.said()
    if past:
        said.append(
            f"MCP server {server!r}: {past:,} of its {len(taken):,} tools are left out: together "
            f"they would add over {MAX_LISTED // 1024} KiB of JSON to every model request; "
            f"choose the ones needed with mcp_servers.{server}.tools.allow"
        )
    return made, said


def served(servers: Iterable[ServerState], call: Caller) -> SourcedTools:
    """What a source of ``servers`` serves now: the tools of each ready one the model is
    shown (``made_tools``, calling through ``call``; each server's model names kept bound in
    its ``names``), each ready server's instructions quoted as its words
    (``quoted_instructions``), and the problems: each server's that is not ready, then what
    each listing drew."""
    handlers: list[McpTool] = []
    instructions: list[str] = []
    problems: list[str] = []
    for state in servers:
        if state.state != "ready":
            if state.problem:
                problems.append(state.problem)
            continue
        made, found = made_tools(state.name, state.config, state.tools, call, state.names)
        handlers.extend(made)
        problems.extend(found)
        client = state.client
        if client is not None and client.instructions:
            instructions.append(quoted_instructions(state.name, client.instructions))
    return SourcedTools(
        handlers=tuple(handlers), instructions=tuple(instructions), problems=tuple(problems)
    )
