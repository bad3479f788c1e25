"""Signals besides SIGINT, SIGTERM and SIGHUP whose default ends a process (SIGQUIT,
SIGUSR1, a real-time one: ``exit_codes.ending_signals``) reach a real one-shot run waiting
on its model: the run ends as SIGTERM ends it. Before, their default killed the process
(exit 131, 138): no ``--json`` result, no ``run_end``, the session "running" until stale."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from contextlib import ExitStack
from pathlib import Path

import program_zygote
from cli_support import clean_env

from rho_adapters.fakes.loopback import LoopbackServer
from rho_adapters.fakes.wire import stall, text_reply


def test_every_ending_signal_cancels_the_run_with_its_result(tmp_path: Path) -> None:
    sent = {"quit": signal.SIGQUIT, "usr1": signal.SIGUSR1, "rt": signal.SIGRTMIN + 2}
    names = {"quit": "SIGQUIT", "usr1": "SIGUSR1", "rt": "SIGRTMIN+2"}
    with ExitStack() as stack:
        started = {}
        for name in sent:
            server = stack.enter_context(LoopbackServer([text_reply("x", faults=(stall(),))]))
            work = tmp_path / name
            work.mkdir()
            args = ["--base-url", server.base_url, "-m", "fake-model", "--json", "go"]
            started[name] = program_zygote.popen(
                "rho",
                [sys.executable, "-m", "rho_entry", *args],
                cwd=work,
                env=clean_env(work),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        ended = {}
        for name, proc in started.items():
            assert proc.stdout is not None
            for line in proc.stdout:
                if json.loads(line)["kind"] == "llm_start":
                    break
            proc.send_signal(sent[name])
            ended[name] = proc.communicate(timeout=60)
    for name, proc in started.items():
        out, err = ended[name]
        assert proc.returncode == 128 + sent[name], (name, err)
        result = json.loads(out.splitlines()[-1])
        work = tmp_path / name
        (trace,) = (work / "rho" / "sessions").glob("*/trace.jsonl")
        last = json.loads(trace.read_text().splitlines()[-1])
        meta = json.loads((trace.parent / "meta.json").read_text())
        assert (result["status"], result["exit_code"], last["kind"], meta["status"]) == (
            "cancelled",
            128 + sent[name],
            "run_end",
            "cancelled",
        ), (name, err)
        notice = {"kind": "notice", "text": f"{names[name]} received: cancelling…"}
        assert notice in [json.loads(line) for line in out.splitlines()], (name, out)
