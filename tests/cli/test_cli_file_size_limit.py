"""``rho-agent`` under a file size limit (``ulimit -f``) writes no bytecode.

corners25: CPython writes a module's ``.pyc`` with one ``write`` and renames it in place
whatever that wrote (SIGXFSZ is ignored, the write is short, no error): a first run under
``ulimit -f 2`` of an install whose bytecode was not compiled yet (``uv`` compiles none by
default; a source checkout) left 19 of rho-agent's ``.pyc`` cut short, and every later
``rho-agent``, the limit lifted too, died importing one: "EOFError: marshal data too short",
until ``__pycache__`` was removed. ``main`` now turns bytecode writing off when a limit is set.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from cli_support import clean_env

_PROBE = """
import resource, sys
resource.setrlimit(resource.RLIMIT_FSIZE, (%s, resource.RLIM_INFINITY))
from rho_entry.cli import main
sys.argv = ["rho-agent", "--version"]
code = main()
print(code, sys.dont_write_bytecode)
"""


def test_no_bytecode_is_written_under_a_file_size_limit(tmp_path: Path) -> None:
    # bytecode where the suite keeps it (conftest.py), not beside the sources
    prefix = os.environ.get("PYTHONPYCACHEPREFIX", str(tmp_path / "pycache"))
    said = []
    for limit in ("1 << 20", "resource.RLIM_INFINITY"):
        done = subprocess.run(
            [sys.executable, "-c", _PROBE % limit],
            env=clean_env(tmp_path, PYTHONPYCACHEPREFIX=prefix),
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
        said.append(done.stdout.splitlines()[-1:])
        assert done.returncode == 0, done.stderr
    assert said == [["0 True"], ["0 False"]]


def test_a_close_that_fails_at_the_limit_still_prints_the_result(tmp_path: Path) -> None:
    """The final answer (3,000 characters) takes the trace past a 4,000-byte limit: the run
    fails with EFBIG, and its end (the answer again, the error, run_end) fails the same way
    when the session closes. That close's failure was raised out of the one-shot: stderr
    said it, and ``--json`` printed no result line (its last line was the answer's event)."""
    import resource

    from rho_adapters.fakes.loopback import LoopbackServer
    from rho_adapters.fakes.wire import text_reply

    prefix = os.environ.get("PYTHONPYCACHEPREFIX", str(tmp_path / "pycache"))
    env = clean_env(tmp_path, PYTHONPYCACHEPREFIX=prefix)

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (4000, resource.RLIM_INFINITY))

    with LoopbackServer([text_reply("x" * 3000)]) as server:
        argv = [sys.executable, "-m", "rho_entry", "--base-url", server.base_url]
        done = subprocess.run(
            [*argv, "-m", "fake-model", "--json", "go"],
            cwd=tmp_path,
            env=env,
            preexec_fn=limited,  # the limit is the test's subject
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
    result = json.loads(done.stdout.splitlines()[-1])
    assert (done.returncode, result["kind"], result["status"]) == (1, "result", "error")
    assert "File too large" in result["error"]
    assert "; then closing the session failed: StoreError: " in result["error"]
