"""Red team of the terminal (issue 32): text the model, a server or a session directory chose
never reaches a terminal as control characters, whichever command prints it.

One real session is stored with a scripted model whose every free-text field carries terminal
commands: the configured model name, the server-reported model and finish reason, a tool name,
a call id, the answer, the reasoning and an unknown tool's error quoting the name. Then each
command that prints a stored session runs as the user would run it (``stats``, ``stats --all``,
``monitor ps``, ``monitor watch --json``, ``--list``, ``export``, the JSON renderer) and its
output must hold no control character but the newline and the tab, no bidi or invisible
character, and still say what was stored (escaped). Before the fix, ``stats`` printed the tool
name, call id and model raw; ``monitor ps`` and ``--list`` the model; ``watch --json``,
``export`` and the JSON renderer the C1, bidi and separator characters.
"""

from __future__ import annotations

import io
import json
import unicodedata
from pathlib import Path

import pytest

from rho_adapters.fakes import (
    FakeClock,
    MemoryExecutor,
    ScriptedApprover,
    ScriptedModel,
    Turn,
    call,
    text,
)
from rho_adapters.store import FileSessionStore
from rho_domain import events as ev
from rho_domain.messages import ToolCall, Usage
from rho_entry import Agent, AgentConfig, Session
from rho_entry.cli.json_render import JsonRenderer
from rho_entry.cli.main import main as cli_main
from rho_entry.cli.terminal_text import json_visible

# Each carries a different family: CSI, OSC (title), C1 CSI, bidi override, line separator,
# a tag character, a zero-width joiner, DEL.
MODEL = "gpt-4o\x1b]0;MODEL-OWNED\x07"
TOOL = "ba\x1b[2K\rsh\u202e"
CALL_ID = "call\x9b2J\u2028x"
ANSWER = "done\x1b[1A\x1b[2Kall fine\u202egnp.exe\U000e0041"
REASONING = "think\u200d\x7fing\x1b[8m"
HOSTILE = ("\x1b", "\x07", "\x9b", "\u202e", "\u2028", "\U000e0041", "\u200d", "\x7f", "\r")


def _controls(output: str) -> list[str]:
    """Characters a terminal would obey or hide (newline and tab aside)."""
    return sorted(
        {
            f"U+{ord(ch):04X}"
            for ch in output
            if ch not in "\n\t "
            and unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp", "Zs", "Cs")
        }
    )


@pytest.fixture
async def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("RHO_AGENT_HOME", str(tmp_path))
    monkeypatch.setenv("NO_COLOR", "1")
    usage = Usage(input_tokens=10, output_tokens=5)
    script = [
        Turn(
            reasoning=REASONING,
            tool_calls=(call(TOOL, {"command": "ls\x1b[2J"}, id=CALL_ID),),
            usage=usage,
        ),
        text(ANSWER, input_tokens=20, output_tokens=5),
    ]
    config = AgentConfig(model=MODEL, profile="readonly", working_dir=str(tmp_path))
    async with Session(
        Agent(config),
        model=ScriptedModel(script),
        executor=MemoryExecutor(),
        clock=FakeClock(),
        store=FileSessionStore(tmp_path / "sessions"),
        approver=ScriptedApprover(default=True),
    ) as session:
        result = await session.run("hi \x1b]52;c;cGF5bG9hZA==\x07 there")
    assert result.ok, result.error
    return tmp_path


def _session_id(home: Path) -> str:
    (directory,) = (home / "sessions").iterdir()
    return directory.name


COMMANDS = [
    ["stats", "{id}"],
    ["stats", "--all"],
    ["monitor", "ps"],
    ["monitor", "watch", "{id}", "--json", "--once"],
    ["monitor", "watch", "{id}", "--once"],
    ["--list"],
    ["export", "{id}"],
]


@pytest.mark.parametrize("argv", COMMANDS, ids=[" ".join(c) for c in COMMANDS])
def test_no_command_prints_stored_control_characters(
    home: Path, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    session_id = _session_id(home)
    code = cli_main([a.format(id=session_id) for a in argv])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert _controls(out) == [], out
    assert _controls(err) == [], err


def test_what_was_stored_is_still_shown_escaped(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session_id = _session_id(home)
    cli_main(["stats", session_id])
    out, _ = capsys.readouterr()
    assert "ba\\x1b[2K\\rsh" in out  # the tool name, escaped, not dropped
    cli_main(["monitor", "watch", session_id, "--json", "--once"])
    out, _ = capsys.readouterr()
    lines = [json.loads(line) for line in out.splitlines()]  # still JSON, same values
    answers = [e["text"] for e in lines if e.get("kind") == "run_end"]
    assert answers == [ANSWER]


def test_the_json_renderer_escapes_what_json_leaves_raw() -> None:
    out = io.StringIO()
    renderer = JsonRenderer(out)
    tool_call = ToolCall(id=CALL_ID, name=TOOL, arguments='{"a": "\u2028\x9b"}')
    renderer(ev.ToolStarted(at=0.0, call=tool_call))
    renderer(ev.TextDelta(at=0.0, text=ANSWER))
    assert _controls(out.getvalue()) == [], out.getvalue()
    first, second = (json.loads(line) for line in out.getvalue().splitlines())
    assert first["call"]["name"] == TOOL  # the same value, once parsed
    assert second["text"] == ANSWER


@pytest.mark.parametrize("hostile", HOSTILE)
def test_json_visible_keeps_the_value_and_hides_the_character(hostile: str) -> None:
    document = json.dumps({"x": f"a{hostile}b", "é": "世界"}, ensure_ascii=False)
    shown = json_visible(document)
    assert _controls(shown) == []
    assert json.loads(shown) == json.loads(document)
    assert "世界" in shown  # printable text stays readable


def test_commands_naming_a_stored_session_escape_its_id(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A session directory's name is data too (copied in, or another machine's): the commands
    that confirm what they did name it (``monitor resume``, ``monitor connect``, ``fork``), and
    a torn trace line's warning names its path. Before, each printed it raw."""
    hostile = "s\x1b]0;TITLE\x07\u202e"
    (directory,) = (home / "sessions").iterdir()
    directory.rename(directory.with_name(hostile))
    with (home / "sessions" / hostile / "trace.jsonl").open("ab") as trace:
        trace.write(b'{"kind": "torn')  # a torn last line: the warning names the file
    for argv in (
        ["monitor", "resume", hostile],
        ["monitor", "connect", hostile],
        ["fork", hostile, "--at", "1"],
    ):
        code = cli_main(argv)
        out, err = capsys.readouterr()
        assert code == 0, (argv, err)
        assert _controls(out) == [], (argv, out)
        assert _controls(err) == [], (argv, err)
        assert "s\\x1b]0;TITLE\\x07\\u202e" in out, (argv, out)


class _Terminal(io.TextIOWrapper):
    """Standard output as a terminal: ``isatty`` says so."""

    def isatty(self) -> bool:
        return True


def test_export_of_the_raw_trace_escapes_it_on_a_terminal(
    home: Path, monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    """``export --format trace`` wrote trace.jsonl's bytes as they are, also to a terminal:
    the stored bidi and C1 characters, and raw ESC bytes a forged line carries (JSON escapes
    them; whoever writes the file need not). A terminal is now shown them escaped; a pipe
    still gets the bytes."""
    session_id = _session_id(home)
    trace = home / "sessions" / session_id / "trace.jsonl"
    with trace.open("ab") as forged:
        forged.write(b'{"kind": "x\x1b]0;TITLE\x07"}\n')
    terminal = _Terminal(io.BytesIO(), encoding="utf-8")
    with monkeypatch.context() as patched:
        patched.setattr("sys.stdout", terminal)
        assert cli_main(["export", session_id, "--format", "trace"]) == 0
    terminal.flush()
    shown = terminal.buffer.getvalue().decode()  # type: ignore[attr-defined]
    assert _controls(shown) == [], shown
    assert "x\\x1b]0;TITLE\\x07" in shown
    assert cli_main(["export", session_id, "--format", "trace"]) == 0
    assert capsysbinary.readouterr().out == trace.read_bytes()


def test_the_repls_goodbye_names_the_session_as_one_shell_word() -> None:
    """The REPL's last line is a command to paste, and a resumed session's id is its
    directory's name (``--resume ./DIR``): ``s;touch pwned`` was printed as ``rho-agent
    --resume s;touch pwned``. Now it is quoted."""
    import shlex
    from types import SimpleNamespace

    from rho_entry.cli.repl import Repl

    said: list[str] = []
    from rho_domain.permissions import builtin_profile

    agent = SimpleNamespace(
        profile=builtin_profile("readonly"), config=SimpleNamespace(backend="local")
    )
    session = SimpleNamespace(
        id="s;touch pwned", state=SimpleNamespace(messages=["hi"]), agent=agent
    )
    stand_in = SimpleNamespace(session=session, say=lambda text, *styles: said.append(text))
    Repl.goodbye(stand_in)  # type: ignore[arg-type]
    (line,) = said
    command = line.split("resume with: ", 1)[1]
    assert shlex.split(command) == ["rho-agent", "--resume", "s;touch pwned"]
