"""What the human approves is what runs: model text never drives the terminal.

The approval prompt, tool previews, answers on a terminal, ``monitor watch`` and session lists
show control and invisible characters as escapes; the prompt shows the whole command."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import re
import types
from pathlib import Path

import pytest
from cli_support import Terminal

import rho_entry
from rho_adapters.fakes import call
from rho_domain import events as ev
from rho_domain.call_digest import call_digest
from rho_domain.messages import ToolCall
from rho_domain.permissions import builtin_profile
from rho_domain.ports.approver import ApprovalRequest
from rho_domain.ports.store import SessionInfo
from rho_entry.cli.answers import describe_waiting
from rho_entry.cli.approval import TerminalApprover
from rho_entry.cli.monitor_format import format_event
from rho_entry.cli.remote import _ask as remote_ask
from rho_entry.cli.render import TerminalRenderer
from rho_entry.cli.sessions import format_sessions
from rho_entry.cli.terminal_text import hidden_count, visible

ATTACK = "touch X; \x1b[2K\r\x1b[1Als -la"
SGR = re.compile(r"\x1b\[[0-9;]*m")  # our own colours, the only escapes we send


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (ATTACK, "touch X; \\x1b[2K\\r\\x1b[1Als -la"),
        ("touch X;\x08\x08\x08\x08\x08\x08\x08\x08ls -la", "touch X;" + "\\x08" * 8 + "ls -la"),
        ("rm -rf data\rls        ", "rm -rf data\\rls        "),
        ("ls \u202etxt.exe", "ls \\u202etxt.exe"),  # right-to-left override
        ("a\u2066b\u2069c", "a\\u2066b\\u2069c"),  # isolates
        ("r\u200bm", "r\\u200bm"),  # zero-width space
        ("\ufeffls", "\\ufeffls"),
        ("rm\u00a0-rf", "rm\\xa0-rf"),  # a no-break space is not a space to the shell
        ("a\u2028b", "a\\u2028b"),
        ("\x9b31mred", "\\x9b31mred"),  # C1 CSI
        ("bell\x07 del\x7f nul\x00", "bell\\x07 del\\x7f nul\\x00"),
        ("\U000e0041tag", "\\U000e0041tag"),  # a tag character (Cf, outside the BMP)
        ("line one\n\tindented", "line one\n\tindented"),  # structure is kept
        ("héllo 世界 🙂 ünïcode", "héllo 世界 🙂 ünïcode"),
        ("printf '\\x1b'", "printf '\\x1b'"),  # text that looks like an escape stays
    ],
)
def test_visible_escapes_what_a_terminal_would_obey(text: str, shown: str) -> None:
    assert visible(text) == shown
    assert visible(shown) == shown  # idempotent: escapes are plain ASCII
    assert all(ch.isprintable() or ch in "\n\t" for ch in visible(text))


def test_one_line_displays_escape_newlines_and_tabs_too() -> None:
    assert visible("a\nb\tc", newlines=False) == "a\\nb\\tc"
    assert hidden_count(ATTACK) == 3
    assert hidden_count("a\nb") == 0


def _ask(command: str, *, color: bool = False, answer: bytes = b"y\n") -> tuple[bool, str]:
    """Ask the terminal approver about a bash call, ``answer`` typed on its input; its answer,
    and everything it wrote (notices and the prompt)."""
    err, prompt = io.StringIO(), io.StringIO()
    renderer = TerminalRenderer(out=io.StringIO(), err=err, color=color)
    read, write = os.pipe()
    os.write(write, answer)
    os.close(write)
    request = ApprovalRequest(
        session_id="s",
        call=call("bash", {"command": command}),
        arguments={"command": command},
        reason="dangerous",
    )
    try:
        with contextlib.redirect_stderr(prompt):
            approver = TerminalApprover(renderer, style=renderer.style, fd=read)
            decided = asyncio.run(approver.decide(request))
    finally:
        os.close(read)
    return decided.approved, err.getvalue() + prompt.getvalue()


def test_the_prompt_shows_the_hidden_command_escaped() -> None:
    approved, shown = _ask(ATTACK)
    assert approved
    assert "    $ touch X; \\x1b[2K\\r\\x1b[1Als -la\n" in shown
    assert "(3 control or invisible characters shown as escapes" in shown
    assert "\x1b" not in shown
    assert "\r" not in shown


@pytest.mark.parametrize(
    "command",
    [
        "touch X;" + "\x08" * 9 + "ls -la   ",  # backspaces over the first command
        "touch X;" + "\x7f" * 9 + "ls -la",
        "touch X #\rls -la    ",  # a carriage return to overwrite it
        "touch X; echo \u202e al- sl",  # a right-to-left override reverses what follows
        "touch X\u2028ls",  # a line separator some terminals break on
        "touch X; \x9bAls",  # an 8-bit CSI
    ],
)
def test_every_trick_leaves_the_first_command_on_screen(command: str) -> None:
    _, shown = _ask(command)
    line = next(s for s in shown.splitlines() if s.startswith("    $ "))
    assert line == "    $ " + visible(command)
    assert line.startswith("    $ touch X")
    assert not any(not ch.isprintable() for ch in line)


def test_with_colour_on_the_only_escapes_are_our_colours() -> None:
    _, shown = _ask(ATTACK, color=True)
    assert "\x1b" not in SGR.sub("", shown)
    assert "touch X; \\x1b[2K" in shown


def test_a_long_command_is_shown_whole_and_multi_line_commands_keep_their_lines() -> None:
    long = "echo " + "a" * 10_000 + " && touch X"
    _, shown = _ask(long)
    assert f"    $ {long}\n" in shown  # 10 KB, not cut, the end included
    _, shown = _ask("ls\nrm -rf build\n\ntouch X")
    assert "    $ ls\n    > rm -rf build\n    > \n    > touch X\n" in shown


def test_a_rejected_answer_is_still_no() -> None:
    assert _ask(ATTACK, answer=b"\n")[0] is False


def _tty() -> io.StringIO:
    stream = io.StringIO()
    stream.isatty = lambda: True  # type: ignore[method-assign]
    return stream


def test_previews_and_answers_on_a_terminal_are_escaped_and_exact_elsewhere() -> None:
    out, err = _tty(), io.StringIO()
    renderer = TerminalRenderer(out=out, err=err)
    bash = call("bash", {"command": ATTACK})
    renderer(ev.ToolStarted(at=0.0, call=bash))
    renderer(
        ev.ToolEnded(
            at=0.0,
            call_id=bash.id,
            tool_name="bash",
            content="ok\x1b]0;pwned\x07\nsecond\x1b[1A",
            is_error=False,
            duration=0.1,
        )
    )
    renderer(ev.TextDelta(at=0.0, text="done \x1b[31mred\x1b[0m\n"))
    assert "\x1b" not in err.getvalue()
    assert "● bash(touch X; \\x1b[2K\\r\\x1b[1Als -la)" in err.getvalue()
    assert "⎿ ok\\x1b]0;pwned\\x07" in err.getvalue()
    assert out.getvalue() == "done \\x1b[31mred\\x1b[0m\n"
    piped = io.StringIO()  # `rho-agent "task" > answer.md`: the exact answer
    TerminalRenderer(out=piped, err=io.StringIO())(ev.TextDelta(at=0.0, text="a\x1b[31mb\n"))
    assert piped.getvalue() == "a\x1b[31mb\n"


def test_monitor_watch_lines_are_escaped() -> None:
    line = json.dumps(
        {
            "kind": "tool_start",
            "at": 0,
            "call": {"id": "c", "name": "bash", "arguments": json.dumps({"command": ATTACK})},
        },
        ensure_ascii=False,
    )
    shown = format_event(line.encode())
    assert "\x1b" not in shown
    assert "\\u001b" in shown or "\\x1b" in shown
    message = json.dumps(
        {"kind": "message", "at": 0, "message": {"role": "assistant", "text": "hi\u202eevil\x9b"}}
    )
    shown = format_event(message.encode())
    assert "assistant: hi\\u202eevil\\x9b" in shown


def test_the_real_prompt_on_a_terminal_shows_the_command_it_runs(tmp_path: Path) -> None:
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    # the process imports the sources this test imports (not whatever the venv points at)
    sources = str(Path(rho_entry.__file__).parents[1])
    task = f"run `{ATTACK}`"
    term = Terminal(
        "-m", "demo", "--profile", "developer", task, cwd=work, home=home, PYTHONPATH=sources
    )  # fmt: skip
    try:
        term.expect(r"\[y\]es / \[N\]o")
        prompt = term.raw.decode(errors="replace")
        assert "$ touch X; \\x1b[2K\\r\\x1b[1Als -la" in prompt
        term.send("y\r")
        term.wait()
    finally:
        term.close()
    assert (work / "X").exists()  # what was shown (and approved) is what ran
    assert b"\x1b[1A" not in term.raw  # the attack's cursor-up never reached the terminal
    assert b"\x1b[2K\r\x1b[1A" not in term.raw


async def test_a_tool_name_with_escapes_cannot_drive_the_spinner() -> None:
    err = io.StringIO()
    renderer = TerminalRenderer(out=io.StringIO(), err=err, spinner=True)
    odd = call("x\x1b[2J\x1b[H", {})
    renderer(ev.ToolStarted(at=0.0, call=odd))
    for _ in range(1500):  # until the spinner has drawn its line (a fixed 0.05 s guessed)
        if "Ctrl+C" in err.getvalue():
            break
        await asyncio.sleep(0.02)
    renderer.spinner.stop()
    drawn = err.getvalue()
    assert "· Ctrl+C to cancel" in drawn  # the spinner ran, with the name in its line
    assert "\x1b" not in drawn.replace("\r\x1b[2K", "")  # only its own line clearing
    assert "x\\x1b[2J\\x1b[H 0s" in drawn


def test_session_lists_and_the_remote_prompt_are_escaped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    info = SessionInfo(
        id="s1",
        status="completed",
        liveness="completed",
        created_at=0.0,
        updated_at=0.0,
        model="m",
        profile="developer",
        first_prompt="fix it\x1b[2J\x1b]0;title\x07",
    )
    (_, line) = format_sessions([info], now=0.0)
    assert "fix it\\x1b[2J\\x1b]0;title\\x07" in line
    arguments = json.dumps({"command": "touch X; \u202e\x9b1A ls"}, ensure_ascii=False)
    monkeypatch.setattr("sys.stdin", io.StringIO("y\n"))
    prompt = io.StringIO()
    with contextlib.redirect_stderr(prompt):
        decision = remote_ask({"tool": "bash", "arguments": arguments, "call_id": "c"})
    assert decision == "approve"
    assert 'approve bash {"command": "touch X; \\u202e\\x9b1A ls"}?' in prompt.getvalue()


@pytest.mark.parametrize(
    "arguments",
    [
        '{"command": "ls", "command": "rm -rf ~"}',  # a key twice: the last one runs
        '{"command": "\\u0072\\u006d -rf ~"}',  # JSON escapes: rm runs
    ],
)
def test_the_remote_prompt_shows_the_arguments_that_run(
    arguments: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the local prompt showed the parsed arguments; the remote one showed the raw text
    assert json.loads(arguments) == {"command": "rm -rf ~"}  # what the tool reads
    monkeypatch.setattr("sys.stdin", io.StringIO("n\n"))
    prompt = io.StringIO()
    with contextlib.redirect_stderr(prompt):
        assert remote_ask({"tool": "bash", "arguments": arguments, "call_id": "c"}) == "deny"
    assert 'approve bash {"command": "rm -rf ~"}?' in prompt.getvalue()
    assert '"ls"' not in prompt.getvalue()
    assert "\\u" not in prompt.getvalue()
    # the list --approve CALL@DIGEST is copied from, and the REPL's, show it the same way
    waiting = ToolCall(id="c", name="bash", arguments=arguments)
    state = types.SimpleNamespace(
        approval_reasons={},
        awaiting_decision=lambda: (waiting,),
        approval_digest=lambda call: call_digest(call.name, call.arguments),
        asked_places={},
    )
    agent = types.SimpleNamespace(
        profile=builtin_profile("readonly"), config=types.SimpleNamespace(backend="local")
    )
    session = types.SimpleNamespace(id="s", state=state, agent=agent)
    listed = describe_waiting(session)  # type: ignore[arg-type]
    assert 'bash {"command": "rm -rf ~"}: waiting' in listed


def test_a_warning_line_from_a_log_record_is_escaped(capsys: pytest.CaptureFixture[str]) -> None:
    """The CLI's log handler wrote records as they came; a durable worker logs an answer it
    did not take with the call the trace holds now (whoever rewrote it chose the text)."""
    import logging

    from rho_entry.cli.log_lines import WarningLine

    record = logging.LogRecord(
        "rho_entry.durable",
        logging.WARNING,
        __file__,
        1,
        "not taken: %s",
        ("rm \x1b[2K\u202e",),
        None,
    )
    WarningLine().emit(record)
    assert capsys.readouterr().err == "rho-agent: warning: not taken: rm \\x1b[2K\\u202e\n"


def test_every_rho_entry_log_record_reaches_the_terminal_escaped() -> None:
    """``rho-agent`` handled the sandbox notice's logger only: a server's and a worker's
    warnings (``rho_entry.server``: why a stored session's run could not start, quoting its
    error; ``rho_entry.durable``: an answer not taken, quoting the call the trace holds) fell
    to logging's last resort, which wrote them raw, escapes and forged lines included, and the
    worker's recovery lines (a worker id read from the queue's database) went through a plain
    StreamHandler. Run as ``main`` runs a command: one process, no pytest handler on root."""
    import subprocess
    import sys

    code = (
        "import logging\n"
        "from rho_entry.cli import log_lines\n"
        "from rho_entry.cli.log_lines import WarningLine\n"
        "log_lines.install()\n"
        "logging.getLogger('rho_adapters.durable').addHandler(WarningLine('rho-agent worker: '))\n"
        "bad = 'rm \\x1b[2K\\u202e\\nrho-agent: warning: forged'\n"
        "logging.getLogger('rho_entry.server').warning('session s1: %s', bad)\n"
        "logging.getLogger('rho_entry.durable').warning('answer not taken: %s', bad)\n"
        "logging.getLogger('rho_adapters.durable').warning('worker %s stopped beating', bad)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    shown = "rm \\x1b[2K\\u202e\\nrho-agent: warning: forged"
    assert done.stderr.splitlines() == [
        f"rho-agent: warning: session s1: {shown}",
        f"rho-agent: warning: answer not taken: {shown}",
        f"rho-agent worker: worker {shown} stopped beating",
    ]


def test_always_says_what_still_asks() -> None:
    """Before: "always" was acknowledged as 'bash approved for the rest of this session', and
    the next ``make`` after a written Makefile asked (as ``rm -r`` does): the notice promised
    what the check does not give, and a --resume keeps no "always"."""
    _, shown = _ask("make", answer=b"a\n")
    assert "  bash approved while this process runs; a call that could destroy something, " in shown
    assert "or run a file this session wrote, still asks" in shown
