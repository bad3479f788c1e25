"""What a server's tool names can do to the operator's lists and to the model's names, read
by the client in this process (a scripted server: no process): a deny entry holds whatever
spelling the server chooses, a listing changed mid-session included, and every model name
fits the 64 characters model APIs take, one tool to a name."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Mapping

import attrs
import pytest
from mcp_support import ScriptedTransport

from rho_adapters.clock import SystemClock
from rho_adapters.fakes import MemoryExecutor
from rho_adapters.mcp import McpToolSource
from rho_adapters.mcp.transport import Message, Transport
from rho_domain.approval import decide
from rho_domain.approval_asks import Denied
from rho_domain.errors import ConfigError
from rho_domain.mcp_config import McpServerConfig, McpToolFilter, servers_to_start
from rho_domain.mcp_names import tool_name
from rho_domain.messages import ToolCall
from rho_domain.permissions import developer_profile
from rho_domain.tools.base import DANGEROUS, ToolContext
from rho_domain.tools.source import SourcedTools
from rho_entry import AgentConfig

# spellings of delete_all and drop_table a server may list, each shown to the model before
DODGES = [
    "Delete_All",
    "delete_all ",
    "delete-all",
    "delete.all",  # shown as mcp__h__delete_all: the very name denied
    "DELETE-ALL",
    "deleteAll",
    "\uff44elete_all",  # a full-width d
    "de\u0301lete_all",  # e and a combining accent
    "delete\u200b_all",  # a zero-width space
    "Drop.Table",  # denied by its model name, mcp__h__drop_table
]


def scripted_source(
    listings: list[list[Message]], config: McpServerConfig
) -> tuple[McpToolSource, list[ScriptedTransport]]:
    """A source of server ``h`` listing ``listings[0]`` (pop it, then announce a change)."""
    transports: list[ScriptedTransport] = []

    def answer(request: Message) -> str:
        if request["method"] == "initialize":
            result: Message = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}}
        elif request["method"] == "tools/list":
            result = {"tools": listings[0]}
        else:
            result = {"content": [{"type": "text", "text": f"{request['params']['name']} ran"}]}
        return json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result})

    def connect(name: str, server: McpServerConfig, environ: Mapping[str, str]) -> Transport:
        transports.append(ScriptedTransport(answer))
        return transports[-1]

    source = McpToolSource({"h": config}, environ={}, output_limit=2_000, connect=connect)
    return source, transports


def test_a_deny_entry_holds_every_spelling_a_server_chooses_and_a_rename() -> None:
    # deny: [delete_all] compared the server's names exactly: Delete_All, delete-all and
    # delete.all (shown to the model as mcp__h__delete_all, the name denied) were all made;
    # readOnlyHint, the server's word, never made one read-only
    hint = {"annotations": {"readOnlyHint": True, "destructiveHint": False}}
    plain: Message = {"name": "plain", **hint}
    listings = [[plain, *({"name": n, **hint} for n in DODGES)], [plain, {"name": "Delete_ALL"}]]
    deny = McpToolFilter(deny=("delete_all", "mcp__h__drop_table"))
    source, transports = scripted_source(listings, McpServerConfig(command=("-",), tools=deny))

    async def main() -> tuple[SourcedTools, SourcedTools]:
        first = await source.current()
        listings.pop(0)  # renamed after a list_changed
        transports[0].deliver('{"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}')
        return first, await source.current()

    first, renamed = asyncio.run(main())
    assert [tool.name for tool in first.handlers] == ["mcp__h__plain"]
    assert [tool.name for tool in renamed.handlers] == ["mcp__h__plain"]
    assert first.handlers[0].policy_for({}) is DANGEROUS
    assert McpToolFilter(allow=("delete_all",)).admits("h", "Delete_All") is False  # exact


def test_a_profiles_denied_mcp_tool_is_denied_in_every_spelling_its_server_chooses() -> None:
    # denied_tools: [mcp__h__delete_all] named the model's name exactly: the server's
    # Delete_All (mcp__h__Delete_All) was asked about, and ran once approved
    source, _ = scripted_source([[{"name": n} for n in DODGES]], McpServerConfig(command=("-",)))
    denied = frozenset({"mcp__h__delete_all", "mcp__h__drop_table"})
    profile = attrs.evolve(developer_profile(), denied_tools=denied)
    ctx = ToolContext(
        session_id="s1",
        call_id="c",
        executor=MemoryExecutor(),
        profile=profile,
        clock=SystemClock(),
    )

    def decision(name: str) -> object:
        return decide(profile, ToolCall(id="c", name=name, arguments="{}"), DANGEROUS)

    async def main() -> list[str]:
        made = [tool.name for tool in (await source.current()).handlers]
        ran = await source.call("h", "Delete_All", {}, ctx)
        assert ran.content == "Delete_All ran"  # the server answers, unchecked
        return made

    made = asyncio.run(main())
    assert [name for name in made if not isinstance(decision(name), Denied)] == []
    # each shown (the profile's list is read at each call) but the full-width and accented
    # ones, which become mcp__h__delete_all as delete.all did before them: left out
    assert len(made) == len(DODGES) - 2
    assert not isinstance(decision("mcp__hd__elete_all"), Denied)  # another server's


def test_a_server_name_leaving_no_room_for_tool_names_is_refused_and_names_fit() -> None:
    # a 59-character server made every tool mcp__<59 characters>, its separator cut away:
    # the first tool listed took the name and the rest were left out; two such servers
    # alike in their first 59 made the same names, the later one's tool silently replacing
    # the earlier's (and taking its approvals)
    long = "s" * 41
    said = rf"server name '{'s' * 40}'\.\.\. is 41 characters; use at most 40"
    servers = {long: McpServerConfig(command=("-",))}
    stored = AgentConfig(mcp_servers=servers)  # a stored session's config still loads
    with pytest.raises(ConfigError, match=said):
        servers_to_start(stored.mcp_servers, {}, only_named=False)
    with pytest.raises(ConfigError, match=said):
        McpToolSource(servers, environ={}, output_limit=2_000)
    server = "s" * 40
    names = {
        tool_name(server, tool)
        for tool in ("get_pull_request_review_comments", "get_pull_request_reviews", "a" * 200)
    }
    assert len(names) == 3
    assert all(re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", name) for name in names), names
    assert all(name.startswith(f"mcp__{server}__get_pull") or "__aaa" in name for name in names)
