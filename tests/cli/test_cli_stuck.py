"""A stuck loop through the real CLI, the runtime and the server's vocabulary: the same
``list`` call, as the small llama.cpp model made it, ends the run ``stuck`` (exit 6) with a
message naming the call; ``--repeat-limit`` sets N, 0 turns it off (issue 29, item 3)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_support import rho

from rho_adapters.fakes import MemoryExecutor, ScriptedModel, call, text, tools
from rho_adapters.fakes.loopback import LoopbackServer
from rho_adapters.fakes.wire import Reply, text_reply, tool_reply
from rho_adapters.fakes.wire import call as wire_call
from rho_entry import (
    AgentConfig,
    HandleStatus,
    RunStatus,
    close_runtime,
    create_runtime,
    dispatch_prompt,
    start_runtime,
)
from rho_entry.cli.exit_codes import EXIT_CODES_HELP, STUCK, exit_code


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("hello\n")
    return work


def same_list(times: int) -> list[Reply]:
    return [tool_reply(wire_call("list", {"path": "."})) for _ in range(times)]


def test_the_same_list_call_ends_the_run_stuck_with_exit_6(workspace: Path, tmp_path: Path) -> None:
    with LoopbackServer([*same_list(5), text_reply("never")]) as server:
        result = rho(
            "--base-url",
            server.base_url,
            "-m",
            "fake-model",
            "--json",
            "what is here?",
            cwd=workspace,
            home=tmp_path / "home",
        )
    assert result.returncode == STUCK == 6, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    end = lines[-1]
    assert end["kind"] == "result"
    assert end["status"] == "stuck"
    assert "the tool list was called 4 times in a row" in end["error"]
    assert len(server.requests) == 4  # told after the third; the fourth is not run
    told = server.requests[3]["messages"][-1]
    assert told["role"] == "user"
    assert "You are repeating yourself" in told["content"]


def test_repeat_limit_flag_sets_n_and_zero_turns_it_off(workspace: Path, tmp_path: Path) -> None:
    with LoopbackServer([*same_list(3), text_reply("never")]) as server:
        two = rho(
            "--base-url",
            server.base_url,
            "-m",
            "fake-model",
            "--repeat-limit",
            "2",
            "go",
            cwd=workspace,
            home=tmp_path / "home",
        )
    assert two.returncode == 6, two.stderr
    assert "told the model: You are repeating yourself" in two.stderr  # seen, as sent
    assert "stopped: stuck: the tool list was called 3 times in a row" in two.stderr
    assert "error:" not in two.stderr  # said once, as a stop, not also as an error
    assert "--resume" in two.stderr
    with LoopbackServer([*same_list(6), text_reply("notes.txt")]) as server:
        off = rho(
            "--base-url",
            server.base_url,
            "-m",
            "fake-model",
            "--repeat-limit",
            "0",
            "go",
            cwd=workspace,
            home=tmp_path / "home",
        )
    assert off.returncode == 0, off.stderr
    assert off.stdout.strip() == "notes.txt"


def test_a_negative_repeat_limit_is_refused(workspace: Path, tmp_path: Path) -> None:
    result = rho("--repeat-limit", "-1", "-m", "demo", "go", cwd=workspace, home=tmp_path / "h")
    assert result.returncode == 1
    assert "--repeat-limit" in result.stderr
    assert "repeat_limit must be" in result.stderr


def test_every_status_has_its_exit_code_and_help_line() -> None:
    assert exit_code("stuck") == STUCK
    assert "6    stuck" in EXIT_CODES_HELP
    assert {s.value for s in RunStatus} <= {s.value for s in HandleStatus}


async def test_a_runtime_handle_settles_stuck(tmp_path: Path) -> None:
    same = tools(call("list", {"path": "."}))
    runtime = create_runtime(
        AgentConfig(working_dir=str(tmp_path)),
        model=ScriptedModel([same, same, same, same, text("never")]),
        executor=MemoryExecutor({"a.txt": "a"}),
    )
    await start_runtime(runtime)
    handle = await dispatch_prompt(runtime, "what is here?")
    result = await handle
    await close_runtime(runtime)
    assert result.status is RunStatus.STUCK
    assert handle.status is HandleStatus.STUCK
    assert result.error is not None
    assert "list" in result.error
