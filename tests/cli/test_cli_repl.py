"""The REPL on a pseudo-terminal: a turn, approvals, Ctrl+C, /compact, exit."""

from __future__ import annotations

import json
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

import pytest
from cli_support import Terminal

LABEL = r"\[demo model: scripted and offline"
PROMPT = r"\n> "


class OpenTerminal(Protocol):
    """Starts ``rho-agent -m demo ARGS...`` on a pseudo-terminal, at its first prompt."""

    def __call__(self, *args: str) -> Terminal: ...


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    (work / "README.md").write_text("# Sample project\n")
    return work


@pytest.fixture
def open_terminal(workspace: Path, tmp_path: Path) -> Iterator[OpenTerminal]:
    terminals: list[Terminal] = []

    def start(*args: str) -> Terminal:
        term = Terminal("-m", "demo", *args, cwd=workspace, home=tmp_path / "home")
        terminals.append(term)
        term.expect(r"/help for commands")
        return term

    yield start
    for term in terminals:
        term.close()


def test_turn_usage_compact_and_exit(open_terminal: OpenTerminal) -> None:
    term = open_terminal()
    term.send("what is here?\r")
    term.expect(r"● list\(")
    term.expect(LABEL)
    term.expect(r"Sample project")
    term.expect(PROMPT)
    term.send("and again?\r")
    term.expect(LABEL)
    term.expect(PROMPT)
    term.send("/usage\r")
    term.expect(r"session in [\d,]+ / out [\d,]+")
    term.send("/compact focus on files\r")
    term.expect(r"compacted \(manual\)")
    term.send("/nonsense\r")
    term.expect(r"unknown command /nonsense")
    term.send("/exit\r")
    term.expect(r"resume with: rho-agent --resume \w+")
    assert term.wait() == 0


def test_approval_answered_no_then_yes(open_terminal: OpenTerminal) -> None:
    term = open_terminal("--profile", "developer")
    term.send("run `echo approval-works`\r")
    term.expect(r"\? approve bash")
    term.expect(r"\$ echo approval-works")
    term.expect(r"\[y\]es / \[N\]o / \[a\]lways for this tool: ")
    term.send("\r")  # Enter: the default is no
    term.expect(r"✗ bash\(echo approval-works\): rejected by you")
    term.expect(PROMPT)  # the REPL waits for the user
    term.send("run `echo approval-works`\r")
    term.expect(r"\[y\]es / \[N\]o / \[a\]lways for this tool: ")
    term.send("y\r")
    term.expect(r"⎿ approval-works")
    term.expect(LABEL)
    term.expect(PROMPT)
    term.send("\x04")  # Ctrl+D leaves
    # with the profile a resume is refused without ('pass --profile developer explicitly')
    term.expect(r"resume with: rho-agent --resume \w+ --profile developer\r?\n")
    assert term.wait() == 0


def test_ctrl_c_cancels_the_turn_and_the_repl_survives(open_terminal: OpenTerminal) -> None:
    term = open_terminal("--profile", "eval")
    term.send("run `sleep 30`\r")
    term.expect(r"● bash\(sleep 30\)")
    term.send("\x03")  # Ctrl+C during the turn
    term.expect(r"cancell")
    term.expect(r"turn cancelled; the session is still here")
    term.expect(PROMPT)
    term.send("what is here?\r")
    term.expect(LABEL)
    term.expect(PROMPT)
    _press_ctrl_c_at_prompt(term, r"Ctrl\+C again or Ctrl\+D to exit")
    _press_ctrl_c_at_prompt(term, r"resume with")
    assert term.wait() == 0


def test_approve_toggle_and_profile_switch(open_terminal: OpenTerminal) -> None:
    term = open_terminal("--profile", "developer")
    term.send("/approve\r")
    term.expect(r"auto-approve on")
    term.send("run `echo auto-ran`\r")
    term.expect(r"auto-approved: bash\(echo auto-ran\)")
    term.expect(r"⎿ auto-ran")
    term.expect(PROMPT)
    term.send("/profile readonly\r")
    term.expect(r"profile readonly")
    term.expect(r"The shell is restricted")
    term.send("/exit\r")
    assert term.wait() == 0


def _stored(home: Path) -> tuple[list[dict[str, object]], str, list[str]]:
    """The one session's trace events, its meta's status, and the REPL's history lines."""
    (session,) = (home / "rho" / "sessions").iterdir()
    events = [json.loads(line) for line in (session / "trace.jsonl").read_text().splitlines()]
    status = json.loads((session / "meta.json").read_text())["status"]
    return events, status, (home / "rho" / "history").read_text().splitlines()


def test_the_terminal_hanging_up_ends_the_turn_and_keeps_the_history(
    open_terminal: OpenTerminal, tmp_path: Path
) -> None:
    # The window closed or ssh dropped during a tool: SIGHUP's default killed the REPL where
    # it stood (status -1): no run_end in the trace, the meta "running", the history lost.
    if signal.getsignal(signal.SIGHUP) is signal.SIG_IGN:
        pytest.skip("SIGHUP is ignored in this process (nohup): so is it in the REPL")
    term = open_terminal("--profile", "eval")
    term.send("what is here?\r")
    term.expect(LABEL)
    term.expect(PROMPT)
    term.send("run `sleep 30`\r")
    term.expect(r"● bash\(sleep 30\)")
    assert term.hang_up() == 128 + signal.SIGHUP  # 129; every signal was 130
    events, status, history = _stored(tmp_path / "home")
    kinds = [event["kind"] for event in events]
    after_the_tool = kinds[len(kinds) - 1 - kinds[::-1].index("tool_start") :]
    assert {"tool_end", "interruption"} <= set(after_the_tool)  # the tool was ended, said
    assert (events[-1]["kind"], events[-1]["status"], status) == (
        "run_end",
        "cancelled",
        "cancelled",
    )
    assert history == ["what is here?", "run `sleep 30`"]


def test_sigterm_at_the_prompt_after_a_turn_leaves_with_the_history(
    open_terminal: OpenTerminal, tmp_path: Path
) -> None:
    # The turn's handlers were removed with asyncio's remove_signal_handler, which leaves
    # SIG_DFL: SIGTERM at the next prompt killed the REPL (-15) and its history was lost.
    term = open_terminal()
    term.send("what is here?\r")
    term.expect(LABEL)
    term.wait_until_reading_keys()
    term.proc.send_signal(signal.SIGTERM)
    term.expect(r"resume with: rho-agent --resume \w+")
    assert term.wait() == 128 + signal.SIGTERM  # 143
    events, status, history = _stored(tmp_path / "home")
    assert (events[-1]["kind"], events[-1]["status"], status) == (
        "run_end",
        "completed",
        "completed",
    )
    assert history == ["what is here?"]


def _press_ctrl_c_at_prompt(term: Terminal, expected: str) -> None:
    """Ctrl+C at the readline prompt, once the REPL is really waiting for a key."""
    term.wait_until_reading_keys()
    term.send("\x03")
    term.expect(expected)
