"""Output to a reader that has gone away (``rho-agent ... | head -1``): quiet exit, run kept."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_support import clean_env


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
    subprocess.run(
        [sys.executable, "-m", "rho_entry", "--model", "demo", "hi"],
        cwd=tmp_path,
        env=clean_env(home),
        capture_output=True,
        check=True,
        timeout=60,
    )
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
