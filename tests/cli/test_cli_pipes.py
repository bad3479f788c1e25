"""Output to a reader that has gone away (``rho-agent ... | head -1``): quiet exit, run kept."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_support import clean_env, rho


def _rho_into_closed_pipe(*args: str, cwd: Path, home: Path) -> tuple[int, str]:
    """Run rho-agent with stdout a pipe whose reading end is already closed: every write to
    stdout fails with EPIPE, as after ``| head -1`` has read its line and exited."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "rho_entry", *args],
            cwd=cwd,
            env=clean_env(home),
            stdin=subprocess.DEVNULL,
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
            check=False,
        )
    finally:
        os.close(write_end)
    return proc.returncode, proc.stderr


def _only_session_status(home: Path) -> str:
    sessions = list((home / "rho" / "sessions").iterdir())
    assert len(sessions) == 1
    meta = json.loads((sessions[0] / "meta.json").read_text())
    return str(meta["status"])


@pytest.mark.parametrize("mode", [(), ("--json",), ("-q",)], ids=["text", "json", "quiet"])
def test_one_shot_into_a_closed_pipe_exits_quietly_and_completes(
    tmp_path: Path, mode: tuple[str, ...]
) -> None:
    (tmp_path / "README.md").write_text("hello\n")
    code, err = _rho_into_closed_pipe(
        "--model", "demo", *mode, "hi", cwd=tmp_path, home=tmp_path / "home"
    )
    for noise in ("BrokenPipe", "internal error", "Traceback", "Exception ignored"):
        assert noise not in err
    assert code == 0
    assert _only_session_status(tmp_path / "home") == "completed"


def test_list_and_watch_into_a_closed_pipe_exit_quietly(tmp_path: Path) -> None:
    home = tmp_path / "home"
    made = rho("--model", "demo", "hi", cwd=tmp_path, home=home)  # the session listed: in-process
    assert made.returncode == 0, made.stderr
    for args in (("--list",), ("monitor", "watch", "latest"), ("monitor", "ps")):
        code, err = _rho_into_closed_pipe(*args, cwd=tmp_path, home=home)
        assert (code, err) == (0, ""), args


@pytest.mark.parametrize("shared", [True, False], ids=["2>&1", "stderr-alone"])
def test_a_closed_progress_stream_does_not_end_the_work(tmp_path: Path, shared: bool) -> None:
    """``rho-agent TASK 2>&1 | head -1``: the progress stream (stderr) closes after the header;
    the run still completes, exit 0, and the session is stored ``completed``."""
    (tmp_path / "README.md").write_text("hello\n")
    home = tmp_path / "home"
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "rho_entry", "--model", "demo", "what is here?"],
            cwd=tmp_path,
            env=clean_env(home),
            stdin=subprocess.DEVNULL,
            stdout=write_end if shared else subprocess.PIPE,
            stderr=write_end,
            timeout=60,
            check=False,
        )
    finally:
        os.close(write_end)
    assert proc.returncode == 0
    assert _only_session_status(home) == "completed"
    if not shared:
        assert b"demo model" in proc.stdout  # the answer still reaches its own reader
    trace = next((home / "rho" / "sessions").iterdir()) / "trace.jsonl"
    assert "BrokenPipe" not in trace.read_text()


def _rho_with(
    *args: str, cwd: Path, home: Path, closed: int | None = None, full: int | None = None
) -> subprocess.CompletedProcess[str]:
    """rho-agent in a real process whose descriptor ``closed`` is closed when it starts
    (``>&-``, ``2>&-``, ``<&-``), or whose ``full`` output is /dev/full (every write: ENOSPC);
    the other streams are captured (stdin: empty)."""

    def arrange() -> None:
        if closed is not None:
            os.close(closed)
        if full is not None:
            device = os.open("/dev/full", os.O_WRONLY)
            os.dup2(device, full)
            os.close(device)

    return subprocess.run(
        [sys.executable, "-m", "rho_entry", *args],
        cwd=cwd,
        env=clean_env(home),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        preexec_fn=arrange,
    )


NOISE = ("Traceback", "internal error", "Exception ignored", "AttributeError", "OSError")


@pytest.mark.parametrize(
    "arranged",
    [{"closed": 1}, {"full": 1}],
    ids=["stdout-closed", "stdout-full"],
)
def test_an_answer_that_cannot_be_written_is_said_and_exits_1(
    tmp_path: Path, arranged: dict[str, int]
) -> None:
    """It exited 120 with two tracebacks (closed), or 0 with a listener's traceback (full)."""
    home = tmp_path / "home"
    proc = _rho_with("--model", "demo", "-q", "hi", cwd=tmp_path, home=home, **arranged)
    for noise in NOISE:
        assert noise not in proc.stderr
    reason = "it was closed when rho-agent started" if "closed" in arranged else "No space left"
    assert f"could not write to standard output ({reason}" in proc.stderr
    assert "kept in its session" in proc.stderr
    assert proc.returncode == 1
    assert _only_session_status(home) == "completed"


@pytest.mark.parametrize(
    "arranged",
    [{"closed": 2}, {"full": 2}, {"closed": 0}],
    ids=["stderr-closed", "stderr-full", "stdin-closed"],
)
def test_a_lost_progress_stream_or_closed_input_leaves_the_answer(
    tmp_path: Path, arranged: dict[str, int]
) -> None:
    """stderr closed or full: exit 120 or 1 and no answer; stdin closed: 'internal error'."""
    home = tmp_path / "home"
    proc = _rho_with("--model", "demo", "hi", cwd=tmp_path, home=home, **arranged)
    assert proc.returncode == 0, proc.stderr
    assert "A real model would now reason over these results" in proc.stdout
    assert _only_session_status(home) == "completed"
    (session,) = (home / "rho" / "sessions").iterdir()
    for line in (session / "trace.jsonl").read_text().splitlines():
        json.loads(line)  # nothing written to descriptor 2 reached the trace


def test_a_closed_input_without_a_task_is_no_task(tmp_path: Path) -> None:
    proc = _rho_with("--model", "demo", cwd=tmp_path, home=tmp_path / "home", closed=0)
    assert (proc.returncode, proc.stderr) == (
        1,
        "rho-agent: no task: pass it as an argument, with --prompt, or on stdin\n",
    )
