"""Where a stdio MCP server starts, and which PATH it gets: never what the workspace chose.

A server runs as the user, outside the sandbox; rho-agent's own directory is usually the
workspace. ``python -m NAME`` puts its directory first on ``sys.path`` (as ``npx`` prefers
its ``node_modules/.bin``), so a server started there runs the workspace's code."""

from __future__ import annotations

import sys
from pathlib import Path

import attrs
import pytest
from mcp_support import HERE

from rho_adapters.mcp import McpToolSource
from rho_adapters.mcp.stdio import environment
from rho_domain.mcp_config import McpServerConfig
from rho_domain.permissions import PermissionProfile
from rho_entry.config.config_files import load_agent_config, load_profile_file
from rho_entry.config.mcp_servers import load_mcp_servers


async def test_a_module_planted_in_the_workspace_does_not_run_as_the_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace, ran = tmp_path / "repo", tmp_path / "planted-ran"
    workspace.mkdir()
    (workspace / "raw_server.py").write_text(f"open({str(ran)!r}, 'w').close()\n")
    monkeypatch.chdir(workspace)  # rho-agent started in the repository it is pointed at
    env = {"RAW_LOG": str(tmp_path / "raw.log"), "PYTHONPATH": str(HERE)}
    server = McpServerConfig(command=(sys.executable, "-m", "raw_server"), env=env)
    for config, planted_runs in ((server, False), (attrs.evolve(server, cwd="."), True)):
        tools = McpToolSource({"m": config}, environ={"PATH": "/usr/bin:/bin"}, output_limit=100)
        try:
            sourced = await tools.current()
        finally:
            await tools.aclose()
        assert ran.exists() is planted_runs  # an explicit cwd is honoured, even this one
        if not planted_runs:  # the installed server (PYTHONPATH's) answered instead
            assert "mcp__m__noise" in {h.name for h in sourced.handlers}


def test_the_inherited_path_keeps_only_absolute_directories() -> None:
    ours = {"PATH": "/usr/bin::.:node_modules/.bin:/bin", "HOME": "/home/u"}
    assert environment({}, ours) == {"PATH": "/usr/bin:/bin", "HOME": "/home/u"}
    assert environment({"PATH": ".:/bin"}, ours)["PATH"] == ".:/bin"  # the operator's, as given


def test_a_config_file_gives_its_servers_its_own_directory(tmp_path: Path) -> None:
    home = tmp_path / "conf"
    home.mkdir()
    servers = (
        "mcp_servers:\n"
        "  plain: {command: [srv]}\n"
        "  sub: {command: [srv], cwd: tools}\n"
        "  fixed: {command: [srv], cwd: /opt/srv}\n"
        "  web: {url: 'https://mcp.example/mcp'}\n"
    )
    (home / "mcp.yaml").write_text(servers)
    inline = "profile:\n  base: readonly\n  mcp_servers:\n    own: {command: [srv]}\n"
    (home / "agent.yaml").write_text(servers + inline)
    (home / "ops.yaml").write_text("base: readonly\n" + servers)
    want = {"plain": str(home), "sub": str(home / "tools"), "fixed": "/opt/srv", "web": None}
    agent = load_agent_config(home / "agent.yaml")
    assert isinstance(agent.profile, PermissionProfile)
    assert agent.profile.mcp_servers["own"].cwd == str(home)  # an inline profile's too
    for loaded in (
        load_mcp_servers(home / "mcp.yaml"),
        agent.mcp_servers,
        load_profile_file(home / "ops.yaml").mcp_servers,
    ):
        assert {name: s.cwd for name, s in loaded.items()} == want


def test_an_mcp_config_of_another_spelling_names_what_it_found(tmp_path: Path) -> None:
    """Before: a file written for Claude or Cursor (``mcpServers:``) was refused as "expected
    a mapping with one key, mcp_servers", without the key it held or what to rename."""
    from rho_domain.errors import ConfigError

    path = tmp_path / "mcp.yaml"
    for text, said in (
        ("mcpServers: {fs: {command: [npx]}}\n", "; found 'mcpServers' (rename it mcp_servers)"),
        ("mcp_servers: {}\nextra: 1\n", "; found 'mcp_servers', 'extra'"),
    ):
        path.write_text(text)
        with pytest.raises(ConfigError) as refused:
            load_mcp_servers(path)
        assert str(refused.value).endswith(said)
