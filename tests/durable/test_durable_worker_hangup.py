"""SIGHUP (the terminal a worker was started from closes) stops ``rho-agent worker`` as
SIGTERM does: exit 0, the run in flight ended ``cancelled`` in its trace, its command gone;
SIGUSR1 (any other signal whose default ends a process) too, exit 128 + 10.

Before, the worker listened for SIGTERM and SIGINT only: SIGHUP killed it (status -1), the
run's trace ended at its ``tool_start`` with no ``run_end``, and the run stayed unended until
another worker of the queue took it over, if one ever did. SIGUSR1 reached the CLI's start-up
handler mid-run: a DBOS traceback, "interrupted while starting", the run ended twice
(two ``run_end``) and its ``sleep`` left running after the worker exited.
"""

from __future__ import annotations

import importlib.util
import os
import signal
from pathlib import Path

import pytest
from durable_support import Worker, bash, queue_here, scripted, trace, wait_for

from rho_adapters.fakes.loopback import LoopbackServer

if importlib.util.find_spec("dbos") is None:  # found, not imported: dbos costs 0.65 s
    pytest.skip("the durable extra (dbos) is not installed", allow_module_level=True)

SLEEP = "sleep 1000 & echo $! > sleep.pid; wait"


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGHUP, 0), (signal.SIGUSR1, 138)])
def test_a_stop_signal_stops_the_worker_and_ends_its_run_in_flight(
    tmp_path: Path, signum: signal.Signals, code: int
) -> None:
    db = str(tmp_path / "runs.sqlite")
    with LoopbackServer([], rules=[scripted({"hup": [bash(SLEEP, "c1")]})]) as model:
        worker = Worker(tmp_path, "hup", db=db, base_url=model.base_url, profile="eval")
        try:
            worker.wait_ready()
            session_id = queue_here(tmp_path, db, "enqueue", "hup: sleep").split()[1]
            pid_file = tmp_path / "work" / "sleep.pid"
            wait_for(lambda: pid_file.exists() and pid_file.read_text().strip() != "", "sleep")
            sleeper = int(pid_file.read_text())

            worker.process.send_signal(signum)
            exited = worker.process.wait(30)
        finally:
            worker.stop()
    log = worker.log.read_text()
    assert exited == code, log
    assert "Traceback" not in log
    ends = [e for e in trace(tmp_path / "store", session_id) if e["kind"] == "run_end"]
    assert [e["status"] for e in ends] == ["cancelled"], log
    running = _running(sleeper)
    if running:
        os.kill(sleeper, signal.SIGKILL)
    assert not running, "the run's command outlived the worker"
