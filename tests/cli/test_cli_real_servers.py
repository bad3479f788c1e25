"""Issue 17 from the command line: tool choice and streaming as settings, a llama-cpp-python
server found by what it says, and a context overflow that ends with "context full"."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_support import rho

from rho_adapters.fakes.llama_cpp_python import llama_cpp_python_rules
from rho_adapters.fakes.loopback import LoopbackServer
from rho_adapters.fakes.wire import call, text_reply, tool_reply
from rho_domain.errors import ConfigError
from rho_entry.config.settings import resolve_settings


def test_tool_choice_and_stream_from_flags_and_environment() -> None:
    assert resolve_settings({}, {}).config.stream is None
    assert resolve_settings({"stream": False}, {}).config.stream is False  # --no-stream
    assert resolve_settings({}, {"RHO_AGENT_STREAM": "off"}).config.stream is False
    env = {"RHO_AGENT_TOOL_CHOICE": "required", "RHO_AGENT_STREAM": "1"}
    settings = resolve_settings({}, env)
    assert (settings.config.tool_choice, settings.config.stream) == ("required", True)
    flagged = resolve_settings({"tool_choice": "read"}, env)
    assert flagged.config.tool_choice == "read"
    assert flagged.sources["tool_choice"] == "flag"
    with pytest.raises(ConfigError, match="RHO_AGENT_STREAM"):
        resolve_settings({}, {"RHO_AGENT_STREAM": "sometimes"})


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("hello\n")
    return work


def test_a_forced_tool_on_a_llama_cpp_python_server(workspace: Path, tmp_path: Path) -> None:
    replies = [tool_reply(call("list", {"path": "."})), text_reply("notes.txt is here.")]
    with LoopbackServer(replies, rules=llama_cpp_python_rules()) as server:
        result = rho(
            "--base-url", server.base_url, "-m", "x", "--tool-choice", "list", "what is here?",
            cwd=workspace, home=tmp_path / "home",
        )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "notes.txt is here."
    assert "GET /v1/models" in server.other_requests  # asked, not guessed from the port
    first, second = server.requests
    assert first["tool_choice"] == {"type": "function", "function": {"name": "list"}}
    assert (second["tool_choice"], second["stream"]) == ("auto", False)
    assert second["messages"][2]["content"] == ""
    assert "max_completion_tokens" not in first


def test_an_overflow_ends_with_context_full_naming_the_window(
    workspace: Path, tmp_path: Path
) -> None:
    with LoopbackServer([], rules=llama_cpp_python_rules(n_ctx=512)) as server:
        result = rho(
            "--base-url", server.base_url, "-m", "x", "--no-stream", "summarise: " + "w " * 3000,
            cwd=workspace, home=tmp_path / "home",
        )  # fmt: skip
    assert result.returncode == 2
    assert "context full" in result.stderr
    assert "context window is 512 tokens" in result.stderr
    assert len(server.requests) == 1
    assert server.requests[0]["stream"] is False


def test_an_unknown_tool_choice_names_the_tools(workspace: Path, tmp_path: Path) -> None:
    result = rho(
        "--model", "demo", "--tool-choice", "teleport", "hi",
        cwd=workspace, home=tmp_path / "home",
    )  # fmt: skip
    assert result.returncode == 1
    assert "tool_choice 'teleport'" in result.stderr
    assert "list" in result.stderr
