"""Two CLIs resuming one session at the same moment (``--resume ID`` twice): one drives, the
other is told which process on which host holds it and exits 1 (the README's "a session
another process is driving") without writing a line of the trace; the driver's run is
whole. No fix came with this test: it holds what the session lock already did."""

from __future__ import annotations

import json
import selectors
import signal
import socket
import subprocess
import sys
from pathlib import Path

from cli_support import clean_env, rho

from rho_adapters.fakes.loopback import LoopbackServer
from rho_adapters.fakes.wire import stall, text_reply


def test_the_second_resume_is_told_who_drives_and_leaves_the_trace_alone(
    tmp_path: Path,
) -> None:
    stalled = text_reply("x", faults=(stall(),))
    with LoopbackServer([text_reply("first"), stalled, stalled]) as server:
        argv = ["--base-url", server.base_url, "-m", "fake-model", "--json"]
        first = rho(*argv, "go", cwd=tmp_path, home=tmp_path)
        session = json.loads(first.stdout.splitlines()[-1])["session_id"]
        both = [
            subprocess.Popen(
                [sys.executable, "-m", "rho_entry", *argv, "--resume", session, said],
                cwd=tmp_path,
                env=clean_env(tmp_path),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for said in ("one", "two")
        ]
        (trace,) = (tmp_path / "rho" / "sessions").glob("*/trace.jsonl")
        # the one refused ends its output at once; the driver's says it asked the model
        ready = selectors.DefaultSelector()
        for proc in both:
            assert proc.stdout is not None
            ready.register(proc.stdout, selectors.EVENT_READ, proc)
        loser = driver = None
        while loser is None or driver is None:
            for key, _ in ready.select(timeout=60):
                line = key.fileobj.readline()  # type: ignore[union-attr]
                if not line:
                    loser = key.data
                    ready.unregister(key.fileobj)
                elif json.loads(line)["kind"] == "llm_start":
                    driver = key.data
                    ready.unregister(key.fileobj)
        _, err = loser.communicate(timeout=60)
        driver.send_signal(signal.SIGTERM)
        driver.communicate(timeout=60)
    assert (loser.returncode, driver.returncode) == (1, 143), err
    assert err == (
        f"rho-agent: session {session} is already being driven by pid {driver.pid} on "
        f"{socket.gethostname()}; stop that process (rho-agent monitor cancel {session}) or "
        "wait for it to finish\n"
    )
    prompts = [
        e["prompt"]
        for e in map(json.loads, trace.read_text().splitlines())
        if e["kind"] == "run_start"
    ]
    assert prompts[0] == "go", prompts
    assert len(prompts) == 2, prompts  # the driver's alone after it
