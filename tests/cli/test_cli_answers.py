"""Answering a pending approval from the command line (subprocess and pty), ps and kill."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
from cli_support import Terminal, rho

from rho_domain.call_digest import call_digest
from rho_domain.errors import ConfigError
from rho_entry.cli.answers import answers_from_args
from rho_entry.cli.parser import build_parser


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    (work / "README.md").write_text("# Sample\n")
    return work


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


# The sessions run under developer; a resume names it again (a stored profile is not authority).
DEV = ("--profile", "developer")


def _waiting_session(workspace: Path, home: Path, command: str = "echo approved-now") -> str:
    """A session stopped (exit 4) on a bash call that needs approval; its id."""
    result = rho(
        "-m", "demo", "--profile", "developer", "--json", f"run `{command}`",
        cwd=workspace, home=home,
    )  # fmt: skip
    assert result.returncode == 4, result.stderr
    final = json.loads(result.stdout.splitlines()[-1])
    assert [p["call_id"] for p in final["pending"]] == ["demo_1"]
    SHOWN[str(final["session_id"])] = f"demo_1@{final['pending'][0]['digest']}"
    return str(final["session_id"])


SHOWN: dict[str, str] = {}  # session id -> its waiting call as --approve names it: CALL@DIGEST


def _trace(home: Path, session_id: str) -> list[dict[str, object]]:
    path = home / "rho" / "sessions" / session_id / "trace.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _tool_results(home: Path, session_id: str) -> list[str]:
    return [
        str(e["message"]["content"])  # type: ignore[index]
        for e in _trace(home, session_id)
        if e["kind"] == "message" and e["message"]["role"] == "tool"  # type: ignore[index]
    ]


def test_exit_4_names_the_call_and_the_commands_that_answer_it(workspace: Path, home: Path) -> None:
    result = rho(
        "-m", "demo", "--profile", "developer", "run `echo x`", cwd=workspace, home=home
    )  # fmt: skip
    assert result.returncode == 4
    assert "bash (demo_1)" in result.stderr
    digest = call_digest("bash", json.dumps({"command": "echo x"}), place=str(workspace.resolve()))
    assert f"--approve demo_1@{digest}` (CALL@DIGEST" in result.stderr
    # the command it gives, pasted as shown, answers it: it named no profile, and the resume
    # was refused ('pass --profile developer explicitly', exit 1)
    given = re.search(r"answer with `rho-agent ([^`]*)`", result.stderr)
    assert given is not None, result.stderr
    assert " --profile developer --approve " in given[1]
    pasted = rho(*shlex.split(given[1]), cwd=workspace, home=home)
    assert (pasted.returncode, "⎿ x" in pasted.stderr) == (0, True), pasted.stderr


def test_approve_by_id_runs_the_call_and_completes(workspace: Path, home: Path) -> None:
    session_id = _waiting_session(workspace, home)
    named = SHOWN[session_id]
    result = rho("--resume", session_id, *DEV, "--approve", named, cwd=workspace, home=home)
    assert result.returncode == 0, result.stderr
    assert "⎿ approved-now" in result.stderr
    assert "approved-now" in _tool_results(home, session_id)[0]
    kinds = [e["kind"] for e in _trace(home, session_id)]
    assert kinds.count("approval_resolved") == 1
    assert kinds[-1] == "run_end"


def test_approve_always_allows_the_calls_tool_for_the_rest_of_the_run(
    workspace: Path, home: Path
) -> None:
    session_id = _waiting_session(workspace, home)
    result = rho(
        "--resume", session_id, *DEV, "--approve", SHOWN[session_id], "--always",
        cwd=workspace, home=home,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    resolved = [e for e in _trace(home, session_id) if e["kind"] == "approval_resolved"]
    assert [(e["call_id"], e["approved"], e["always"]) for e in resolved] == [
        ("demo_1", True, True)
    ]
    alone = rho("--resume", session_id, *DEV, "--always", cwd=workspace, home=home)
    assert alone.returncode == 1
    assert "--always goes with --approve" in alone.stderr


def test_deny_all_with_a_reason_reaches_the_model(workspace: Path, home: Path) -> None:
    session_id = _waiting_session(workspace, home)
    result = rho(
        "--resume", session_id[:6], *DEV, "--deny", "all", "--reason", "not on a Friday",
        cwd=workspace, home=home,
    )  # fmt: skip
    # exit 5, not 0: the turn stopped on the rejection and there is no answer (issue 30, F32)
    assert result.returncode == 5, result.stderr
    assert result.stdout == ""
    assert "stopped: you rejected bash (demo_1); the model has not answered since" in (
        result.stderr
    )
    (content,) = _tool_results(home, session_id)
    assert "rejected by the user: not on a Friday" in content
    assert "⎿ approved-now" not in result.stderr
    blocked = [e for e in _trace(home, session_id) if e["kind"] == "tool_blocked"]
    assert blocked[0]["reason"] == "not on a Friday"


def test_a_call_that_is_not_waiting_is_refused_with_the_list(workspace: Path, home: Path) -> None:
    session_id = _waiting_session(workspace, home)
    result = rho("--resume", session_id, *DEV, "--approve", "nope", cwd=workspace, home=home)
    assert result.returncode == 1
    assert "--approve nope: matches no call waiting for approval (waiting: demo_1 (bash))" in (
        result.stderr
    )
    again = rho("--resume", session_id, *DEV, "--approve", "all", cwd=workspace, home=home)
    assert again.returncode == 0, again.stderr  # nothing was changed by the refused answer
    done = rho("--resume", session_id, *DEV, "--approve", "all", cwd=workspace, home=home)
    assert done.returncode == 1
    assert "has no tool call waiting for approval" in done.stderr


def test_approve_needs_resume_and_reason_needs_deny(workspace: Path, home: Path) -> None:
    alone = rho("--approve", "all", "-m", "demo", "x", cwd=workspace, home=home)
    assert alone.returncode == 1
    assert "add --resume ID" in alone.stderr
    reason = rho("--resume", "latest", "--reason", "x", cwd=workspace, home=home)
    assert reason.returncode == 1
    assert "--reason goes with --deny" in reason.stderr


def test_resume_with_y_and_no_terminal_continues_the_waiting_call(
    workspace: Path, home: Path
) -> None:
    session_id = _waiting_session(workspace, home)
    result = rho("--resume", session_id, *DEV, "-y", cwd=workspace, home=home)
    assert result.returncode == 0, result.stderr
    assert "⎿ approved-now" in result.stderr
    assert "approved-now" in _tool_results(home, session_id)[0]


def test_resume_without_an_answer_and_no_terminal_says_how_to_answer(
    workspace: Path, home: Path
) -> None:
    session_id = _waiting_session(workspace, home)
    result = rho("--resume", session_id, *DEV, cwd=workspace, home=home)
    assert result.returncode == 1
    assert "--resume opens the REPL only on a terminal" in result.stderr
    assert _tool_results(home, session_id) == []


def test_the_repl_shows_the_waiting_call_and_asks_it_first(workspace: Path, home: Path) -> None:
    session_id = _waiting_session(workspace, home)
    term = Terminal("--resume", session_id, *DEV, cwd=workspace, home=home)
    try:
        term.expect("wait for approval")
        term.expect(r"demo_1\s+bash")
        term.expect(r"\[y\]es / \[N\]o")
        term.send("y\r")
        term.expect("⎿ approved-now")
        term.expect("> ")
        term.send("/exit\r")
        assert term.wait() == 0
    finally:
        term.close()
    assert "approved-now" in _tool_results(home, session_id)[0]


def test_ps_and_kill_are_the_monitors_ps_and_cancel(workspace: Path, home: Path) -> None:
    session_id = _waiting_session(workspace, home)
    short = rho("ps", "--json", cwd=workspace, home=home)
    long = rho("monitor", "ps", "--json", cwd=workspace, home=home)
    assert short.returncode == long.returncode == 0
    assert [r["id"] for r in json.loads(short.stdout)] == [session_id]
    assert json.loads(short.stdout)[0]["status"] == json.loads(long.stdout)[0]["status"]
    kill = rho("kill", session_id, cwd=workspace, home=home)
    assert kill.returncode == 1
    assert f"cancel: session {session_id} is not running" in kill.stderr
    assert rho("kill", "--all", cwd=workspace, home=home).stdout == "no live session to cancel\n"


def test_a_blank_call_is_refused_before_anything_is_answered() -> None:
    """Before: ``--deny "$CALL"`` with CALL unset gave the call "", a prefix of every id, so
    the one call waiting was rejected without being named (two waiting: "matches several")."""
    for flag in ("--deny", "--approve"):
        for blank in ("", " "):
            args = build_parser().parse_args(["--resume", "abc", flag, blank])
            with pytest.raises(ConfigError, match=f"^{flag} '': names no call; give a CALL"):
                answers_from_args(args)


async def test_a_resume_without_a_task_continues_a_tool_result_the_model_never_saw(
    workspace: Path,
) -> None:
    """``rho-agent --resume ID -y`` without a terminal or a task (the run goes on where it
    stopped; the REPL opens only on a terminal) after a run that failed between its tool
    and its next model call: before, refused ('has no tool call waiting for approval'); the
    caller could only add a task the model did not need. Now the run continues; a
    conversation the model has answered, or an answer with nothing waiting, is refused."""
    from rho_adapters.fakes import FunctionModel, call, text, tools
    from rho_entry import Agent, AgentConfig, RunStatus, Session
    from rho_entry.cli.answers import Answers, apply_answers

    turns = [tools(call("read", {"path": "README.md"})), RuntimeError("endpoint fell over")]

    def model(request: object) -> object:
        turn = turns.pop(0) if turns else text("README.md: Sample")
        if isinstance(turn, Exception):
            raise turn
        return turn

    agent = Agent(AgentConfig(model="m", working_dir=str(workspace)))
    session = Session(agent, model=FunctionModel(model))  # type: ignore[arg-type]
    assert (await session.run("read it")).status is RunStatus.ERROR
    apply_answers(session, Answers(), auto_approve=False)  # nothing to answer: it continues
    assert (await session.run()).text == "README.md: Sample"
    for answers, words in ((Answers(), "has no tool call"), (Answers(approve=("all",)), "has no")):
        with pytest.raises(ConfigError, match=words):
            apply_answers(session, answers, auto_approve=False)
