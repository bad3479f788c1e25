"""The real CLI in subprocesses: one-shot runs, exit codes, --json, --output, templates."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_support import clean_env, rho

LABEL = "[demo model: scripted and offline"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    (work / "README.md").write_text("# Sample project\n\nIt does things.\n")
    (work / "main.py").write_text("print('hi')\n")
    return work


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def test_help_documents_exit_codes_and_version(workspace: Path, home: Path) -> None:
    result = rho("--help", cwd=workspace, home=home)
    assert result.returncode == 0
    assert "130  cancelled" in result.stdout
    assert "--model demo" in result.stdout
    version = rho("--version", cwd=workspace, home=home)
    assert (version.returncode, version.stdout.strip()) == (0, "rho-agent 0.2.0")


def test_usage_error_exits_1(workspace: Path, home: Path) -> None:
    result = rho("--no-such-flag", cwd=workspace, home=home)
    assert result.returncode == 1
    assert "unrecognized arguments" in result.stderr


def test_no_endpoint_explains_and_suggests_demo(workspace: Path, home: Path) -> None:
    result = rho("hello", cwd=workspace, home=home)
    assert result.returncode == 1
    assert "export OPENAI_API_KEY" in result.stderr
    assert "--model demo" in result.stderr
    assert "Traceback" not in result.stderr


def test_demo_one_shot_runs_a_complete_loop(workspace: Path, home: Path) -> None:
    result = rho("--model", "demo", "what is in this directory?", cwd=workspace, home=home)
    assert result.returncode == 0, result.stderr
    assert LABEL in result.stdout
    assert "Sample project" in result.stdout  # read from README.md through the real tools
    assert "● list(" in result.stderr
    assert "● read(" in result.stderr
    assert " · in " in result.stderr  # the usage line


def test_task_from_stdin(workspace: Path, home: Path) -> None:
    result = rho("--model", "demo", cwd=workspace, home=home, stdin="look around\n")
    assert result.returncode == 0, result.stderr
    assert LABEL in result.stdout


def test_no_task_on_stdin_is_a_usage_error(workspace: Path, home: Path) -> None:
    result = rho("--model", "demo", cwd=workspace, home=home, stdin="")
    assert result.returncode == 1
    assert "no task" in result.stderr


def test_json_lines_parse_and_end_with_the_result(workspace: Path, home: Path) -> None:
    result = rho("--model", "demo", "--json", "look", cwd=workspace, home=home)
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    kinds = [line["kind"] for line in lines]
    assert kinds[0] == "run_start"
    assert {"tool_start", "tool_end", "text_delta", "run_end"} <= set(kinds)
    assert kinds[-1] == "result"
    assert lines[-1]["status"] == "completed"
    assert lines[-1]["exit_code"] == 0
    assert LABEL in lines[-1]["text"]


def test_output_file_refuses_to_overwrite_without_force(workspace: Path, home: Path) -> None:
    target = workspace / "answer.md"
    first = rho("--model", "demo", "-o", str(target), "look", cwd=workspace, home=home)
    assert first.returncode == 0, first.stderr
    assert LABEL in target.read_text()
    target.write_text("keep me")
    second = rho("--model", "demo", "-o", str(target), "look", cwd=workspace, home=home)
    assert second.returncode == 1
    assert "--force" in second.stderr
    assert target.read_text() == "keep me"
    third = rho("-m", "demo", "-o", str(target), "--force", "look", cwd=workspace, home=home)
    assert third.returncode == 0
    assert LABEL in target.read_text()


def test_prompt_template_with_vars(workspace: Path, home: Path) -> None:
    template = workspace / "task.md"
    template.write_text(
        "---\nvars:\n  topic: {required: true}\n  tone: plain\nmodel: demo\n---\n"
        "Tell me about {{ topic }} in a {{ tone }} tone.\n"
    )
    ok = rho("-p", str(template), "--var", "topic=files", "--json", cwd=workspace, home=home)
    assert ok.returncode == 0, ok.stderr
    start = json.loads(ok.stdout.splitlines()[0])
    assert start["prompt"] == "Tell me about files in a plain tone."
    missing = rho("-p", str(template), cwd=workspace, home=home)
    assert missing.returncode == 1
    assert "'topic'" in missing.stderr
    assert "task.md" in missing.stderr


def test_config_file_errors_name_file_and_key(workspace: Path, home: Path) -> None:
    config = workspace / "agent.yaml"
    config.write_text("model: demo\nmax_turns: lots\n")
    result = rho("-c", str(config), "look", cwd=workspace, home=home)
    assert result.returncode == 1
    assert "agent.yaml" in result.stderr
    assert "max_turns" in result.stderr


def test_unknown_profile_exits_1(workspace: Path, home: Path) -> None:
    result = rho("-m", "demo", "--profile", "nope", "look", cwd=workspace, home=home)
    assert result.returncode == 1
    assert "unknown profile 'nope'" in result.stderr


def test_max_turns_exits_3(workspace: Path, home: Path) -> None:
    result = rho("-m", "demo", "--max-turns", "1", "look", cwd=workspace, home=home)
    assert result.returncode == 3, result.stderr
    assert "--resume" in result.stderr


def test_approval_without_terminal_exits_4(workspace: Path, home: Path) -> None:
    result = rho(
        "-m",
        "demo",
        "--profile",
        "developer",
        "--json",
        "run `echo hi`",
        cwd=workspace,
        home=home,
    )
    assert result.returncode == 4, result.stderr
    final = json.loads(result.stdout.splitlines()[-1])
    assert final["status"] == "awaiting_approval"
    assert [p["tool"] for p in final["pending"]] == ["bash"]


def test_auto_approve_runs_the_command(workspace: Path, home: Path) -> None:
    result = rho(
        "-m",
        "demo",
        "--profile",
        "developer",
        "-y",
        "run `echo approved-output`",
        cwd=workspace,
        home=home,
    )
    assert result.returncode == 0, result.stderr
    assert "⎿ approved-output" in result.stderr  # the command ran; its output is previewed


def test_unreachable_endpoint_exits_2(workspace: Path, home: Path) -> None:
    result = rho(
        "-m",
        "some-model",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "look",
        cwd=workspace,
        home=home,
    )
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr


def _running(cmdline: bytes) -> list[int]:
    pids = []
    for proc_dir in Path("/proc").iterdir():
        try:
            if proc_dir.name.isdigit() and (proc_dir / "cmdline").read_bytes() == cmdline:
                pids.append(int(proc_dir.name))
        except OSError:
            continue
    return pids


@pytest.mark.parametrize(
    "signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=["SIGINT", "SIGTERM", "SIGHUP"]
)
def test_ctrl_c_sigterm_or_a_hang_up_cancels_with_128_plus_the_signal(
    workspace: Path, home: Path, signum: signal.Signals
) -> None:
    """Exit 130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP (before: 130 for each)."""
    # A duration no other test (or parallel worker, or other suite on the machine) sleeps for,
    # so the leftover check below can only find this run's tool.
    seconds = f"37.{random.randrange(10**6):06d}"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "rho_entry",
            "-m",
            "demo",
            "--profile",
            "eval",
            "--json",
            f"run `sleep {seconds}`",
        ],
        cwd=workspace,
        env=clean_env(home),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # SIGHUP (the terminal closing) killed the run by its default: no run_end written
        preexec_fn=_as_on_a_terminal,
    )
    assert proc.stdout is not None
    for line in proc.stdout:
        if json.loads(line)["kind"] == "tool_start":
            break
    proc.send_signal(signum)
    rest, _ = proc.communicate(timeout=30)
    assert proc.returncode == 128 + signum
    final = json.loads(rest.splitlines()[-1])
    assert final["status"] == "cancelled"
    (trace,) = (home / "rho" / "sessions").glob("*/trace.jsonl")
    kinds = [json.loads(line)["kind"] for line in trace.read_text().splitlines()]
    assert kinds[-1] == "run_end"
    assert "tool_end" in kinds[kinds.index("tool_start") :]
    assert _running(f"sleep\0{seconds}\0".encode()) == []  # the tool died with the run


def test_list_and_resume(workspace: Path, home: Path) -> None:
    first = rho("-m", "demo", "--json", "look", cwd=workspace, home=home)
    session_id = json.loads(first.stdout.splitlines()[-1])["session_id"]
    listing = rho("--list", cwd=workspace, home=home)
    assert listing.returncode == 0
    assert session_id in listing.stdout
    again = rho("--resume", session_id[:6], "--json", "and again", cwd=workspace, home=home)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout.splitlines()[-1])["session_id"] == session_id
    missing = rho("--resume", "zzzzzz", "again", cwd=workspace, home=home)
    assert missing.returncode == 1


def _blocked_on_a_fifo(args: list[str], cwd: Path, home: Path) -> tuple[subprocess.Popen[str], int]:
    """rho-agent ARGS with ``cfg`` a FIFO whose writer has not written yet (``--config <(slow
    command)``): the process waits in its start-up, reading it, until a signal comes. (A
    FIFO that nothing writes to is refused at once: test_cli_file_flags.)"""
    os.mkfifo(cwd / "cfg")
    writer = os.open(cwd / "cfg", os.O_RDWR | os.O_NONBLOCK)  # the slow command, never writing
    proc = subprocess.Popen(
        [sys.executable, "-m", "rho_entry", *args],
        cwd=cwd,
        env=clean_env(home),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # Ctrl+C's and SIGHUP's dispositions as a terminal gives them (a background job's
        # SIGINT is SIG_IGN, so is SIGHUP under nohup)
        preexec_fn=_as_on_a_terminal,
    )
    deadline = time.monotonic() + 60
    while not _reading_a_fifo(proc.pid):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the FIFO was never read"
        time.sleep(0.02)
    return proc, writer  # the writer's descriptor: close it once the process ended


def _as_on_a_terminal() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


def _reading_a_fifo(pid: int) -> bool:
    """Whether process ``pid`` waits on a pipe for its data: in ``poll`` (the file flags'
    read waits there, bounded: ``yaml_text.PIPE_IDLE_SECONDS``; Linux ``poll_schedule_timeout``)
    or, in a read, ``pipe_read`` (``anon_pipe_read`` on newer kernels)."""
    try:
        waits = Path(f"/proc/{pid}/wchan").read_text()
    except OSError:
        return False
    return waits.endswith("pipe_read") or waits.startswith("poll_schedule_timeout")


def test_a_storm_of_signals_during_start_up_cancels_once() -> None:
    """Before, every signal reaching ``interrupt_at_start`` raised: a SIGTERM storm (50
    sent to a start-up blocked on a --config FIFO) raised a second KeyboardInterrupt into
    the cancellation's own handling, out of ``main``: 'lost sys.stderr', exit 130 instead of
    'rho-agent: cancelled' and 143 (a race: seen in 2 of 13 runs). The first cancels; later
    ones are heard only, the first still deciding the exit code."""
    from rho_entry.cli import exit_codes
    from rho_entry.stop_signals import interrupt_at_start

    exit_codes.forget()
    try:
        with pytest.raises(KeyboardInterrupt):
            interrupt_at_start(signal.SIGTERM, None)
        interrupt_at_start(signal.SIGTERM, None)  # in the middle of the cancellation
        interrupt_at_start(signal.SIGHUP, None)
        assert exit_codes.cancelled() == 128 + signal.SIGTERM
    finally:
        exit_codes.forget()


@pytest.mark.parametrize(
    ("args", "signum"),
    [
        (["-m", "demo", "-c", "cfg", "hi"], signal.SIGTERM),  # killed by it, then 130: 143
        (["-m", "demo", "-c", "cfg", "hi"], signal.SIGHUP),  # killed by it, then 130: 129
        (["mcp", "list", "--mcp-config", "cfg"], signal.SIGINT),  # a KeyboardInterrupt traceback
    ],
    ids=["one-shot-SIGTERM", "one-shot-SIGHUP", "subcommand-Ctrl+C"],
)
def test_a_signal_during_start_up_is_cancelled_with_128_plus_the_signal(
    workspace: Path, home: Path, args: list[str], signum: signal.Signals
) -> None:
    proc, writer = _blocked_on_a_fifo(args, workspace, home)
    proc.send_signal(signum)
    try:
        out, err = proc.communicate(timeout=60)
    finally:
        os.close(writer)
    assert (proc.returncode, err) == (128 + signum, "rho-agent: cancelled\n")
    assert out == ""
