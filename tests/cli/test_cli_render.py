"""Rendering and exit codes, without subprocesses; and --help's import footprint."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

from rho_domain import events as ev
from rho_domain.messages import AssistantMessage, ToolCall, Usage
from rho_domain.run import RunResult, RunStatus
from rho_entry.cli.exit_codes import exit_code, is_model_error
from rho_entry.cli.render import TerminalRenderer, signature, usage_line


def test_signature_formats_bash_and_others() -> None:
    assert signature(ToolCall("1", "bash", '{"command": "ls -la"}')) == "bash(ls -la)"
    read = ToolCall("2", "read", '{"path": "a.py", "offset": 3}')
    assert signature(read) == "read(path='a.py', offset=3)"
    assert signature(ToolCall("3", "x", "not json")) == "x(not json)"
    assert len(signature(ToolCall("4", "bash", '{"command": "' + "a" * 500 + '"}'))) == 120


def test_tool_preview_says_how_many_lines_were_hidden() -> None:
    out, err = io.StringIO(), io.StringIO()
    renderer = TerminalRenderer(out=out, err=err, preview_lines=2)
    content = "\n".join(f"line {i}" for i in range(10))
    renderer(
        ev.ToolEnded(
            at=0, call_id="1", tool_name="read", content=content, is_error=False, duration=0.25
        )
    )
    text = err.getvalue()
    assert "⎿ line 0" in text
    assert "line 1" in text
    assert "line 2" not in text
    assert "… 8 more lines" in text
    assert "\x1b[" not in text  # no colour unless asked


def test_text_streams_to_stdout_and_notices_to_stderr() -> None:
    out, err = io.StringIO(), io.StringIO()
    renderer = TerminalRenderer(out=out, err=err, color=True)
    renderer(ev.TextDelta(at=0, text="Hello "))
    renderer(ev.TextDelta(at=0, text="world"))
    renderer(ev.ToolStarted(at=0, call=ToolCall("1", "list", '{"path": "."}')))
    assert out.getvalue() == "Hello world\n"
    assert "\x1b[36m● list(path='.')" in err.getvalue()


def test_an_answer_whose_deltas_a_reader_missed_is_shown_from_its_message() -> None:
    # A remote client behind the server's run gets a finished call's message without the
    # deltas the server dropped: the rest of the answer comes from the message, once.
    def shown(deltas: list[str]) -> str:
        out, err = io.StringIO(), io.StringIO()
        renderer = TerminalRenderer(out=out, err=err)
        for _ in range(2):
            renderer(ev.LLMStarted(at=0, model="m", call_index=1, context_tokens=1))
            for text in deltas:
                renderer(ev.TextDelta(at=0, text=text))
            renderer(ev.MessageAdded(at=0, message=AssistantMessage(text="Two files here.")))
        return out.getvalue()

    assert shown([]) == "Two files here.Two files here."
    assert shown(["Two "]) == "Two files here.Two files here."
    assert shown(["Two ", "files here."]) == "Two files here.Two files here."


def test_a_pause_says_how_to_lift_it() -> None:
    out, err = io.StringIO(), io.StringIO()
    renderer = TerminalRenderer(out=out, err=err)
    renderer(ev.Interrupted(at=0, reason="paused", detail="before the model call"))
    renderer(ev.Interrupted(at=0, reason="resumed"))
    lines = err.getvalue().splitlines()
    assert lines[0].startswith("paused (before the model call): waiting until")
    assert "`rho-agent monitor resume SESSION`" in lines[0]
    assert lines[1] == "resumed"


def test_usage_line() -> None:
    result = RunResult(
        session_id="s",
        run_id="r",
        status=RunStatus.COMPLETED,
        text="",
        usage=Usage(input_tokens=1200, output_tokens=30),
        session_usage=Usage(input_tokens=5000, output_tokens=90, cost_usd=0.01),
    )
    line = usage_line(result, 1500)
    assert line == "context 1,500 · in 1,200 / out 30 · session in 5,000 / out 90 · $0.0100"


def test_exit_codes() -> None:
    assert [exit_code(s) for s in ("completed", "max_turns", "budget_exceeded")] == [0, 3, 3]
    assert exit_code("awaiting_approval") == 4
    assert exit_code("cancelled") == 130
    assert exit_code("error", model_error=True) == 2
    assert exit_code("error") == 1
    assert is_model_error("RateLimited")
    assert is_model_error("TruncatedStream")
    assert not is_model_error("StoreError")
    assert not is_model_error(None)


def test_help_and_version_import_no_heavy_module() -> None:
    code = (
        "import sys, contextlib, io\n"
        "from rho_entry.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    assert main(['--help']) == 0\n"
        "    assert main(['--version']) == 0\n"
        "heavy = {'httpx', 'yaml', 'cattrs', 'psycopg', 'pymysql', 'oracledb', 'openpyxl'}\n"
        "print(sorted(heavy & {m.split('.')[0] for m in sys.modules}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_commands_without_a_model_endpoint_import_no_http_client(tmp_path: Path) -> None:
    """The demo model, the session list and the monitor never talk HTTP: httpx (a sixth of
    the start-up) stays unimported; the model adapters import it only for a client that is
    httpx's (``core_client``), so naming one does not import it either."""
    (tmp_path / "README.md").write_text("# x\n")
    code = (
        "import sys, contextlib, io\n"
        "from rho_entry.cli import main\n"
        "out, err = io.StringIO(), io.StringIO()\n"
        "with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):\n"
        "    assert main(['-m', 'demo', 'What is here?']) == 0\n"
        "    assert main(['--list']) == 0\n"
        "    assert main(['monitor', 'ps']) == 0\n"
        "print('httpx' in sys.modules)\n"
        "from rho_adapters.model import OpenAIChatModel\n"  # the lazy names still resolve
        "print('httpx' in sys.modules, OpenAIChatModel.__name__)\n"
    )
    env = {**os.environ, "HOME": str(tmp_path), "RHO_AGENT_HOME": str(tmp_path / "rho")}
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:2] == ["False", "False OpenAIChatModel"]


def test_a_dumb_terminal_gets_neither_colour_nor_the_spinner(tmp_path: Path) -> None:
    """Before: ``TERM=dumb`` (Emacs' shell, some CI consoles) turned colour off, but the
    spinner was drawn whenever stderr was a terminal, its carriage returns and erase-line
    escapes shown there as "^M^[[2K" garbage ten times a second. NO_COLOR is colour only."""
    from rho_entry.cli.launch import prepare
    from rho_entry.cli.parser import parse_words
    from rho_entry.cli.running import make_renderer

    args = parse_words(["-m", "demo", "hi"])
    assert not isinstance(args, int)
    home = {"RHO_AGENT_HOME": str(tmp_path)}
    shown = {}
    for env, tty in (({}, True), ({"TERM": "dumb"}, True), ({"NO_COLOR": ""}, True), ({}, False)):
        launch = prepare(args, {**home, **env}, stdin_tty=False, stderr_tty=tty)
        renderer = make_renderer(launch)
        assert isinstance(renderer, TerminalRenderer)
        shown[next(iter(env), "tty" if tty else "pipe")] = (
            renderer.style.enabled,
            renderer.spinner.enabled,
        )
    assert shown == {
        "tty": (True, True),
        "TERM": (False, False),
        "NO_COLOR": (False, True),
        "pipe": (False, False),
    }


def test_a_run_stopped_on_a_rejection_is_not_said_to_have_an_empty_answer() -> None:
    """Before: answering "no" to a bash call ended the run (exit 5, 'stopped: you rejected
    bash') under 'warning: the model's answer has no text: it sent nothing at all; a server's
    reasoning parser may have kept the answer as reasoning...', though the model was not asked
    after the rejection. An empty answer after an approved call is still said."""
    from rho_adapters.fakes import MemoryExecutor, ScriptedApprover, ScriptedModel, call, tools
    from rho_adapters.fakes import text as answer
    from rho_entry import Agent, AgentConfig, Session

    said = {}
    for approved in (False, True):
        err = io.StringIO()
        renderer = TerminalRenderer(out=io.StringIO(), err=err)
        model = ScriptedModel([tools(call("bash", {"command": "make"})), answer("")])
        session = Session(
            Agent(AgentConfig(profile="developer")),
            model=model,
            executor=MemoryExecutor(),
            approver=ScriptedApprover([approved]),
            on_event=renderer,
        )
        result = session.run_sync("build it")
        renderer.finish(result)
        assert result.status is RunStatus.COMPLETED
        said[approved] = "the model's answer has no text" in err.getvalue()
    assert said == {False: False, True: True}
