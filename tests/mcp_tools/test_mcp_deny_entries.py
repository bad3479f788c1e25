"""Deny entries that name a tool by a model name cut to fit: refused where they are read and
where a session starts its servers, since the hash they end in cannot hold a look-alike
letter in the part the cut left out; the whole name, which holds it, is what they are told
to write, and what ``mcp list`` shows beside a cut name."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import attrs
import pytest

from rho_adapters.mcp import _listed
from rho_adapters.mcp.tool import McpTool
from rho_domain.errors import ConfigError
from rho_domain.mcp_config import McpServerConfig, McpToolFilter, servers_to_start
from rho_domain.mcp_names import denies, tool_name
from rho_domain.tools.base import ToolContext, ToolOutput
from rho_entry.config.config_files import load_agent_config, load_profile_file
from rho_entry.config.mcp_servers import load_mcp_servers

WHOLE = "export_all_customer_records_to_external_storage_bucket_now"
# the same name with a Cyrillic e past where the cut keeps: another hash, the same look
LOOKALIKE = WHOLE.replace("bucket_now", "buck\u0435t_now")
CUT = tool_name("h", WHOLE)


def test_a_cut_name_holds_no_lookalike_past_the_cut_and_is_refused_as_a_deny_entry() -> None:
    # before: deny: [CUT] (or denied_tools: [mcp__h__CUT]) was taken, and the look-alike,
    # whose model name differs from CUT only in its hash, was shown to the model and run
    assert len(CUT) == 64
    assert tool_name("h", LOOKALIKE)[:55] == CUT[:55]
    assert not denies((CUT,), "h", LOOKALIKE)  # what such an entry could never hold
    assert denies((f"mcp__h__{WHOLE}",), "h", LOOKALIKE)  # the whole name holds it
    server = McpServerConfig(command=("-",))
    for deny, denied, key in [
        ((CUT,), (), "mcp_servers.h.tools.deny"),
        ((CUT[len("mcp__h__") :],), (), "mcp_servers.h.tools.deny"),  # the tool part alone
        ((), (CUT,), "the profile's denied_tools"),
    ]:
        started = attrs.evolve(server, tools=McpToolFilter(deny=deny))
        with pytest.raises(ConfigError) as refused:
            servers_to_start({"h": started}, {}, only_named=False, denied=denied)
        assert str(refused.value).startswith(f"{key}: {(deny or denied)[0]!r} is a tool name cut")
        assert "write the tool's whole name as its server lists it" in str(refused.value)
    whole = attrs.evolve(server, tools=McpToolFilter(deny=(WHOLE,)))
    kept = servers_to_start({"h": whole}, {}, only_named=False, denied=(f"mcp__h__{WHOLE}",))
    assert not kept["h"].tools.admits("h", LOOKALIKE)


def test_a_cut_deny_entry_is_refused_naming_the_file_and_the_key(tmp_path: Path) -> None:
    profile = tmp_path / "ops.yaml"
    profile.write_text(f"base: developer\ndenied_tools: [{CUT}]\n")
    config = tmp_path / "agent.yaml"
    config.write_text(f"mcp_servers:\n  h:\n    command: [x]\n    tools: {{deny: [{CUT}]}}\n")
    servers = tmp_path / "mcp.yaml"
    servers.write_text(config.read_text())
    cases: list[tuple[Callable[[], object], str]] = [
        (lambda: load_profile_file(profile), f"{profile}: profile.denied_tools: {CUT!r}"),
        (lambda: load_agent_config(config), f"{config}: mcp_servers.h.tools.deny: {CUT!r}"),
        (
            lambda: load_mcp_servers(servers),
            f"--mcp-config {servers}: mcp_servers.h.tools.deny: {CUT!r}",
        ),
    ]
    for load, said in cases:
        with pytest.raises(ConfigError) as refused:
            load()
        assert str(refused.value).startswith(said), str(refused.value)
    profile.write_text(f"base: developer\ndenied_tools: [mcp__h__{WHOLE}]\n")
    assert load_profile_file(profile).denied_tools == {f"mcp__h__{WHOLE}"}


def test_mcp_list_shows_the_servers_whole_name_beside_a_cut_one() -> None:
    async def call(
        server: str,
        tool: str,
        arguments: Mapping[str, Any],
        ctx: ToolContext,
        /,
        *,
        listed: Mapping[str, Any] | None = None,
    ) -> ToolOutput:
        raise AssertionError("not called")

    def listed(name: str) -> str:
        made = McpTool(
            name=tool_name("h", name), server="h", tool={"name": name}, read_only=False, call=call
        )
        return _listed(made, "h")

    assert listed(WHOLE) == f"{CUT} (the server's {WHOLE!r})"
    assert listed("get_item") == "mcp__h__get_item"
