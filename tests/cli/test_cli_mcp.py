"""MCP from the command line: ``--mcp-config``, approvals asked on a terminal and by exit 4,
and ``rho-agent mcp list`` (real MCP servers from the official SDK, the loopback model)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from cli_support import Terminal, rho
from program_zygote import command

from rho_adapters.fakes import LoopbackServer, text_reply, tool_reply, wire_call

REFERENCE = Path(__file__).parents[1] / "mcp_tools" / "reference_server.py"


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, Path, Path, Path]:
    """A workspace, a home, an MCP config with the reference server (``echo`` read-only),
    and a readonly-based profile that names the server."""
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    servers = {
        "mcp_servers": {
            "ref": {
                "command": command("mcp", [sys.executable, str(REFERENCE), "stdio"]),
                "read_only_tools": ["echo"],
            }
        }
    }
    mcp_config = tmp_path / "mcp.yaml"
    mcp_config.write_text(json.dumps(servers))  # JSON is YAML
    profile = tmp_path / "ops.yaml"
    profile.write_text("base: readonly\nmcp_servers:\n  ref: {}\n")
    return work, home, mcp_config, profile


def test_readonly_without_a_terminal_stops_on_the_mcp_call_with_exit_4(
    setup: tuple[Path, Path, Path, Path],
) -> None:
    work, home, mcp_config, profile = setup
    replies = [
        tool_reply(wire_call("mcp__ref__echo", {"text": "hi"}, "call_echo")),
        tool_reply(wire_call("mcp__ref__add", {"a": 1, "b": 2}, "call_add")),
    ]
    with LoopbackServer(replies) as server:
        result = rho(
            "--base-url", server.base_url, "-m", "m", "--profile", str(profile),
            "--mcp-config", str(mcp_config), "add 1 and 2", cwd=work, home=home,
        )  # fmt: skip
    assert result.returncode == 4, result.stderr
    assert "mcp__ref__add (call_add)" in result.stderr
    assert "echo: hi" in result.stderr  # the read-only tool ran without asking


def test_readonly_on_a_terminal_asks_about_the_mcp_call(
    setup: tuple[Path, Path, Path, Path],
) -> None:
    work, home, mcp_config, profile = setup
    replies = [
        tool_reply(wire_call("mcp__ref__add", {"a": 1, "b": 2}, "call_add")),
        text_reply("1 + 2 = 3"),
    ]
    with LoopbackServer(replies) as server:
        term = Terminal(
            "--base-url", server.base_url, "-m", "m", "--profile", str(profile),
            "--mcp-config", str(mcp_config), "add 1 and 2", cwd=work, home=home,
        )  # fmt: skip
        try:
            term.expect("mcp__ref__add")
            term.expect(r"\[y\]es / \[N\]o")
            term.send("y\r")
            term.expect("1 \\+ 2 = 3")
            assert term.proc.wait(timeout=30) == 0
        finally:
            term.close()
    assert server.requests[1]["messages"][-1]["content"] == '{\n  "total": 3\n}'


def test_mcp_list_shows_servers_states_and_tools(setup: tuple[Path, Path, Path, Path]) -> None:
    work, home, mcp_config, _ = setup
    listed = rho("mcp", "list", "--mcp-config", str(mcp_config), cwd=work, home=home)
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert lines[0] == "ref  stdio  ready  11 tool(s)"
    assert "  mcp__ref__echo  read-only" in lines
    assert "  mcp__ref__add  dangerous" in lines
    assert "sessions under profile readonly do not start it" in listed.stdout


def test_mcp_list_fails_naming_a_server_that_does_not_start(tmp_path: Path) -> None:
    config = tmp_path / "agent.yaml"
    config.write_text("mcp_servers:\n  gone:\n    command: [/nonexistent/server]\n")
    listed = rho("mcp", "list", "--config", str(config), cwd=tmp_path, home=tmp_path / "home")
    assert listed.returncode == 1
    assert "gone  stdio  failed: MCP server 'gone': cannot start '/nonexistent/server'" in (
        listed.stdout
    )


def test_a_bad_mcp_config_names_the_file_and_the_key(tmp_path: Path) -> None:
    bad = tmp_path / "mcp.yaml"
    bad.write_text("mcp_servers:\n  x:\n    command: [a]\n    timeout: 5\n")
    result = rho("-m", "demo", "--mcp-config", str(bad), "hi", cwd=tmp_path, home=tmp_path / "h")
    assert result.returncode == 1
    assert (
        f"{bad}: unknown key 'timeout' (did you mean 'call_timeout'?) @ config.mcp_servers['x']"
        in result.stderr
    )
