"""``rho-agent`` under a file size limit (``ulimit -f``) writes no bytecode.

corners25: CPython writes a module's ``.pyc`` with one ``write`` and renames it in place
whatever that wrote (SIGXFSZ is ignored, the write is short, no error): a first run under
``ulimit -f 2`` of an install whose bytecode was not compiled yet (``uv`` compiles none by
default; a source checkout) left 19 of rho-agent's ``.pyc`` cut short, and every later
``rho-agent``, the limit lifted too, died importing one: "EOFError: marshal data too short",
until ``__pycache__`` was removed. ``main`` now turns bytecode writing off when a limit is set.
"""

from __future__ import annotations

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
