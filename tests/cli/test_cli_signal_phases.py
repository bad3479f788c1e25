"""Ctrl+C (SIGINT) and SIGTERM at each phase of a real one-shot run against the loopback
fake model: the run ends on its own, says why (the trace's ``interruption`` and ``run_end``,
exit 128 + the signal: 130 for SIGINT, 143 for SIGTERM), leaves no process behind, and
``--resume`` continues the session.

The start-up (before the run) is ``test_cli_oneshot``'s FIFO test; a tool under the eval
profile and the demo model, its signal test. These are the phases in between and after, in
one test whose four programs run side by side (forked from the CLI's zygote)."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import program_zygote
from cli_support import clean_env, rho

from rho_adapters.fakes.loopback import LoopbackServer
from rho_adapters.fakes.wire import Reply, call, stall, text_reply, tool_reply


def _running(cmdline: bytes) -> list[int]:
    pids = []
    for proc_dir in Path("/proc").iterdir():
        try:
            if proc_dir.name.isdigit() and (proc_dir / "cmdline").read_bytes() == cmdline:
                pids.append(int(proc_dir.name))
        except OSError:
            continue
    return pids


def _writing_to_a_fifo(pid: int | None) -> bool:
    """Whether process ``pid`` waits in ``open`` of a FIFO for its reader (Linux)."""
    try:
        return Path(f"/proc/{pid}/wchan").read_text() == "wait_for_partner"
    except OSError:
        return False


def test_a_signal_at_each_phase_ends_the_run_said_and_resumable(tmp_path: Path) -> None:
    seconds = f"37.{random.randrange(10**6):06d}"  # no other test's sleep: the leftover check
    # phase: (its replies, its flags, the signal, the --json event it is sent after)
    phases: dict[str, tuple[list[Reply], list[str], signal.Signals, str | None]] = {
        "first model call": ([text_reply("x", faults=(stall(),))], [], signal.SIGINT, "llm_start"),
        "stream": (
            [text_reply("partial answer that stalls", deltas=4, faults=(stall(after=3),))],
            [],
            signal.SIGTERM,
            "text_delta",
        ),
        "tool": (
            [tool_reply(call("bash", {"command": f"sleep {seconds}"}))],
            ["--profile", "developer", "-y"],
            signal.SIGINT,
            "tool_start",
        ),
        # the answer is whole, its --output blocked on a FIFO nobody reads
        "final write": ([text_reply("the answer")], ["--force", "-o", "out"], signal.SIGTERM, None),
    }
    with ExitStack() as stack:
        started: dict[str, tuple[subprocess.Popen[str], Path, str]] = {}
        for name, (replies, flags, _, _) in phases.items():
            server = stack.enter_context(LoopbackServer([*replies, text_reply("went on")]))
            work = tmp_path / name.replace(" ", "-")
            work.mkdir()
            os.mkfifo(work / "out")
            started[name] = (
                program_zygote.popen(
                    "rho",
                    [
                        sys.executable,
                        "-m",
                        "rho_entry",
                        "--base-url",
                        server.base_url,
                        "-m",
                        "fake-model",
                        "--json",
                        *flags,
                        "go",
                    ],
                    cwd=work,
                    env=clean_env(work),
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                ),
                work,
                server.base_url,
            )
        ended: dict[str, Any] = {}
        for name, (proc, _, _) in started.items():
            _, _, signum, after = phases[name]
            assert proc.stdout is not None
            if after is None:
                pid = (
                    proc.program_pid() if isinstance(proc, program_zygote.ForkedPopen) else proc.pid
                )
                deadline = time.monotonic() + 60
                while not _writing_to_a_fifo(pid):
                    assert proc.poll() is None, proc.communicate()
                    assert time.monotonic() < deadline, "the FIFO was never opened"
                    time.sleep(0.02)
            else:
                for line in proc.stdout:
                    if json.loads(line)["kind"] == after:
                        break
            proc.send_signal(signum)
            ended[name] = proc.communicate(timeout=60)
        assert _running(f"sleep\0{seconds}\0".encode()) == []  # the tool died with the run
        for name, (proc, work, base_url) in started.items():
            out, err = ended[name]
            code = 128 + phases[name][2]  # the shells' convention; every signal was 130
            result = json.loads(out.splitlines()[-1])
            (trace,) = (work / "rho" / "sessions").glob("*/trace.jsonl")
            kinds = [json.loads(line) for line in trace.read_text().splitlines()]
            said = [(e["kind"], e.get("reason") or e.get("status")) for e in kinds[-2:]]
            if name == "final write":  # the run was over: completed, the write stopped
                # before: the result line said exit_code 0 (it was printed before the write),
                # the process exited 130 with only 'rho-agent: cancelled'
                notices = [json.loads(line) for line in out.splitlines()[-2:-1]]
                assert (proc.returncode, said[-1], result["exit_code"], notices) == (
                    code,
                    ("run_end", "completed"),
                    code,
                    [
                        {
                            "kind": "notice",
                            "text": "--output out not written: cancelled (the session has "
                            "the answer)",
                        }
                    ],
                ), (name, err)
            else:
                assert (proc.returncode, result["status"], said) == (
                    code,
                    "cancelled",
                    [("interruption", "cancelled"), ("run_end", "cancelled")],
                ), (name, err)
            again = rho(
                "--resume",
                result["session_id"],
                "--base-url",
                base_url,
                "--json",
                *(["--profile", "developer"] if name == "tool" else []),  # asked again
                "go on",
                cwd=work,
                home=work,
            )
            assert again.returncode == 0, (name, again.stderr)
            assert json.loads(again.stdout.splitlines()[-1])["text"] == "went on"
