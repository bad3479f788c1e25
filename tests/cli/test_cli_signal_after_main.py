"""A stop signal that reaches the process after ``main`` returned (the console script's
``sys.exit(main())``, the interpreter's exit): the process ends with the code ``main``
returned, its output whole. Before, ``main``'s handlers (``interrupt_at_start``, Python's
``KeyboardInterrupt`` for SIGINT) were still in place there: a completed run's process
printed a ``KeyboardInterrupt`` traceback and died by SIGINT (shell's 130) instead of 0."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import program_zygote
from cli_support import clean_env

# main() as the console script runs it; the signal sent between its return and sys.exit
_SCRIPT = """\
import os, signal, sys
from rho_entry.cli import main
code = main()
sys.stdout.write("after main\\n")  # buffered: flushed when the signal ends the process
os.kill(os.getpid(), signal.Signals[os.environ["SENT"]])
sys.exit(77)  # not reached: the signal ends the process with main's code
"""


def test_a_signal_after_main_returned_ends_with_mains_code(tmp_path: Path) -> None:
    script = tmp_path / "console.py"
    script.write_text(_SCRIPT)
    started = {}
    for sent in (signal.SIGHUP, signal.SIGINT, signal.SIGUSR1):  # each kind of handler
        work = tmp_path / sent.name
        work.mkdir()
        started[sent.name] = program_zygote.popen(
            "rho",
            [sys.executable, str(script), "--model", "demo", "list the files"],
            cwd=work,
            env=clean_env(work, SENT=sent.name),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
    for name, proc in started.items():
        out, err = proc.communicate(timeout=120)
        assert (proc.returncode, "Traceback" in err) == (0, False), (name, err[-2000:])
        assert (out.endswith("after main\n"), "demo model" in out) == (True, True), (name, out)


# the signal sent as the session closes: after the run, before main returns
_CLOSING = """\
import os, signal, sys
from rho_entry import facade
from rho_entry.cli import main
closing = facade.Session.close
async def close(self):
    os.kill(os.getpid(), signal.SIGTERM)
    await closing(self)
facade.Session.close = close
sys.exit(main())
"""


def test_a_signal_as_the_session_closes_keeps_the_runs_code_and_output(tmp_path: Path) -> None:
    """probecorners24b: the run's signal handlers were let go when the run ended, so a
    SIGTERM during the session's close (a supervisor stopping the process, the terminal
    closing) met interrupt_at_start: its KeyboardInterrupt cut the close short, the
    --output file was never written, and the completed run ended 'rho-agent: cancelled',
    143. It is now heard as during the run: nothing left to cancel, the run's code and
    output stand. (A signal while --output blocks stops that write: test_cli_signal_phases.)"""
    script = tmp_path / "console.py"
    script.write_text(_CLOSING)
    proc = program_zygote.popen(
        "rho",
        [sys.executable, str(script), "--model", "demo", "--output", "out.txt", "list files"],
        cwd=tmp_path,
        env=clean_env(tmp_path),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    _, err = proc.communicate(timeout=120)
    assert (proc.returncode, "cancelled\n" in err) == (0, False), err[-2000:]
    assert "demo model" in (tmp_path / "out.txt").read_text()
