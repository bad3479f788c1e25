"""What an invocation may not do with its inputs: run without a task, or write over one."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from cli_support import clean_env, rho


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    (work / "README.md").write_text("# Sample\n")
    return work


def test_resume_without_a_terminal_or_task_says_no_task(workspace: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert rho("--model", "demo", "hi", cwd=workspace, home=home).returncode == 0
    result = rho("--resume", "latest", cwd=workspace, home=home, stdin="")
    assert result.returncode == 1
    assert "no task" in result.stderr
    assert "--resume opens the REPL only on a terminal" in result.stderr


def test_an_empty_session_id_is_refused_not_taken_for_a_new_session(
    workspace: Path, tmp_path: Path
) -> None:
    """Before, ``--resume "$ID"`` with ID unset ran a new session (an empty value was no
    resume), ``--resume ' '`` named the current directory ("not a session directory"), and
    ``export ''`` said "no session matches ''"."""
    home = tmp_path / "home"
    said = (
        "an empty session id (an unset shell variable?): give a session's id, a prefix of "
        "one, latest, or a session directory"
    )
    for blank in ("", " "):
        result = rho("--resume", blank, "-m", "demo", "hi", cwd=workspace, home=home)
        assert result.returncode == 1  # a usage error (exit_codes.USAGE)
        assert f"argument -r/--resume: {blank!r}: {said}" in result.stderr
        exported = rho("export", blank, cwd=workspace, home=home)
        assert (exported.returncode, exported.stderr) == (
            1,
            f"rho-agent export: session {blank!r}: {said}\n",
        )
    assert not (home / "sessions").exists() or not any((home / "sessions").iterdir())


@pytest.mark.parametrize("flag", ["-p", "-s", "--vars-file", "--config"])
def test_output_never_overwrites_an_input_file_even_with_force(
    workspace: Path, tmp_path: Path, flag: str
) -> None:
    inputs = {
        "-p": ("review.md", "Review {{ repo }}.\n"),
        "-s": ("system.md", "You review {{ repo }}.\n"),
        "--vars-file": ("vars.yaml", "repo: api\n"),
        "--config": ("config.yaml", "model: demo\n"),
    }
    name, text = inputs[flag]
    source = workspace / name
    source.write_text(text)
    task = () if flag == "-p" else ("hi",)
    result = rho(
        "--model", "demo", flag, name, "--var", "repo=api", "-o", name, "--force", *task,
        cwd=workspace,
        home=tmp_path / "home",
    )  # fmt: skip
    assert result.returncode == 1, result.stderr
    assert f"--output {name}: that is also an input of this run" in result.stderr
    assert source.read_text() == text


def test_output_with_force_still_replaces_an_old_answer(workspace: Path, tmp_path: Path) -> None:
    (workspace / "answer.txt").write_text("old\n")
    result = rho(
        "--model", "demo", "-o", "answer.txt", "--force", "hi",
        cwd=workspace,
        home=tmp_path / "home",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "demo model" in (workspace / "answer.txt").read_text()


def test_a_skipped_trace_line_is_one_plain_warning(workspace: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert rho("--model", "demo", "hi", cwd=workspace, home=home).returncode == 0
    (trace,) = (home / "rho" / "sessions").glob("*/trace.jsonl")
    with trace.open("ab") as handle:
        handle.write(b'{"v": 1, "kind": "mess')  # a write cut by a crash
    result = rho("--resume", "latest", "--model", "demo", "again", cwd=workspace, home=home)
    assert result.returncode == 0, result.stderr
    warning_lines = [line for line in result.stderr.splitlines() if "torn" in line]
    assert len(warning_lines) == 1
    assert warning_lines[0].startswith("rho-agent: warning: ")
    assert "skipped a torn last line" in warning_lines[0]
    assert "warnings.warn" not in result.stderr
    assert "TornTraceWarning:" not in result.stderr


def test_list_has_a_header_and_the_model_in_use(workspace: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert rho("--model", "demo", "first task", cwd=workspace, home=home).returncode == 0
    listing = rho("--list", cwd=workspace, home=home).stdout.splitlines()
    assert listing[0].split() == ["ID", "STATUS", "ACTIVE", "MODEL", "PROFILE", "FIRST", "PROMPT"]
    row = listing[1].split()
    assert row[1] == "completed"
    assert row[2] in {"now", "1s", "2s", "3s"} or row[3] == "ago"
    assert "demo" in row
    assert listing[1].endswith("first task")


def test_json_result_line_carries_the_format_version(workspace: Path, tmp_path: Path) -> None:
    import json

    result = rho("--model", "demo", "--json", "hi", cwd=workspace, home=tmp_path / "home")
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert lines[-1]["kind"] == "result"
    assert {line["v"] for line in lines} == {1}


def test_quiet_with_output_writes_the_file_and_prints_only_the_answer(
    workspace: Path, tmp_path: Path
) -> None:
    result = rho(
        "--model", "demo", "-q", "-o", "answer.txt", "hi", cwd=workspace, home=tmp_path / "home"
    )  # fmt: skip
    assert result.returncode == 0
    assert result.stderr == ""
    assert result.stdout == (workspace / "answer.txt").read_text()


def test_a_resumed_repl_says_which_session(workspace: Path, tmp_path: Path) -> None:
    from cli_support import Terminal

    home = tmp_path / "home"
    assert rho("--model", "demo", "hi", cwd=workspace, home=home).returncode == 0
    (session_dir,) = (home / "rho" / "sessions").iterdir()
    term = Terminal("--resume", "latest", cwd=workspace, home=home)
    try:
        term.expect(rf"resumed session {session_dir.name}")
    finally:
        term.close()


def _rho_bytes(
    *args: bytes, cwd: Path, home: Path, stdin: bytes = b"", **env: str
) -> subprocess.CompletedProcess[bytes]:
    """rho-agent in a real process, its arguments and input given as bytes (as a shell passes
    them, whatever their encoding)."""
    return subprocess.run(
        [sys.executable.encode(), b"-m", b"rho_entry", *args],
        cwd=cwd,
        env=clean_env(home, **env),
        input=stdin,
        capture_output=True,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize("ioencoding", ["utf-8", "utf-8:surrogateescape"])
@pytest.mark.parametrize(
    ("args", "stdin", "said"),
    [
        (
            (b"caf\xe9 au lait",),
            b"",
            b"argument b'caf\\xe9 au lait' is not UTF-8 text (byte 0xe9 at offset 3)",
        ),
        ((b"--var", b"who=Jos\xe9", b"hi"), b"", b"(byte 0xe9 at offset 7)"),
        ((b"monitor", b"directive", b"latest", b"\xff"), b"", b"(byte 0xff at offset 0)"),
        (
            (),
            b"caf\xe9 au lait",
            b"the task on standard input is not UTF-8 text (byte 0xe9 at offset 3)",
        ),
    ],
    ids=["task", "var", "subcommand", "stdin"],
)
def test_input_that_is_not_utf8_is_a_usage_error_naming_the_byte(
    workspace: Path,
    tmp_path: Path,
    args: tuple[bytes, ...],
    stdin: bytes,
    said: bytes,
    ioencoding: str,
) -> None:
    """It was 'internal error: UnicodeEncodeError' (or UnicodeDecodeError under a strict
    locale's stdin), once the run had started and its session was made."""
    home = tmp_path / "home"
    done = (
        _rho_bytes(
            b"--model",
            b"demo",
            *args,
            cwd=workspace,
            home=home,
            stdin=stdin,
            PYTHONIOENCODING=ioencoding,
        )
        if args[:1] != (b"monitor",)
        else _rho_bytes(*args, cwd=workspace, home=home, PYTHONIOENCODING=ioencoding)
    )
    assert done.returncode == 1, done.stderr
    assert said in done.stderr
    assert b"internal error" not in done.stderr
    assert not (home / "rho" / "sessions").exists() or not any(
        (home / "rho" / "sessions").iterdir()
    )


@pytest.mark.parametrize(
    ("args", "hint"),
    [
        (["--modl", "demo", "hi"], "--modl: did you mean --model?"),
        (["monitr", "ps"], "'monitr' is not a subcommand: did you mean 'monitor'?"),
        (
            ["-m", "demo", "fix", "the", "bug"],
            'a task of several words is one argument: "fix the bug"',
        ),
        (["export", "--fromat", "atif", "x"], "--fromat: did you mean --format?"),
    ],
    ids=["flag", "subcommand", "unquoted-task", "subcommand-flag"],
)
def test_a_misspelt_word_is_answered_with_what_was_meant(
    workspace: Path, tmp_path: Path, args: list[str], hint: str
) -> None:
    """It said only 'unrecognized arguments: ps' (of 'rho-agent monitr ps')."""
    result = rho(*args, cwd=workspace, home=tmp_path / "home")
    assert result.returncode == 1
    assert result.stderr.endswith(f"\n  {hint}\n"), result.stderr


def test_a_session_id_longer_than_a_file_name_is_no_session(
    workspace: Path, tmp_path: Path
) -> None:
    """An id past 255 bytes (NAME_MAX) or holding NUL was looked up as a file: Python's
    ``Path.exists``/``is_dir`` raise ENAMETOOLONG, so ``--resume``, ``export``, ``stats``,
    ``fork`` and every ``monitor`` command ended in a traceback or 'internal error: OSError:
    [Errno 36] File name too long'. Now it matches no session, said as for any other id."""
    from rho_adapters.store.layout import resolve
    from rho_domain.errors import SessionNotFound
    from rho_entry.cli.launch import _resume_ref
    from rho_entry.cli.monitor import _names_a_directory

    home = tmp_path / "home"
    root = home / "sessions"
    root.mkdir(parents=True)
    long = "x" * 300
    for ref in (long, "a\0b", f"./{long}", f"{long}/x", "é" * 128):
        with pytest.raises(SessionNotFound, match=r"no session matches|not a session directory"):
            resolve(root, ref)
    assert _resume_ref(long) == long
    assert not _names_a_directory([long])
    result = rho("monitor", "cancel", long, cwd=workspace, home=home)
    assert result.returncode == 1, result.stderr
    assert result.stderr.startswith(f"rho-agent monitor: no session matches {long!r} in ")
