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
