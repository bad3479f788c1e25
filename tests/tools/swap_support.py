"""A real process that swaps a directory and a link back and forth while commands run: the
race the walls that go by descriptor are tested against (redshell26's parent swap,
redfiles27's git inspection, subdirectory and ``read_outside: allow`` swaps)."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from rho_adapters.local.executor import sandbox_available

# the local executor with bubblewrap and without: the swaps race the host's own directories
LOCAL_SANDBOXES = [
    pytest.param(
        True, id="bwrap", marks=pytest.mark.skipif(not sandbox_available(), reason="no bubblewrap")
    ),
    pytest.param(False, id="no-bwrap"),
]

SWAPPER = """
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
directory, link = (os.fsencode(name) for name in sys.argv[1:3])
sys.stdout.write("ready\\n"); sys.stdout.flush()
while True:  # the directory and the link, exchanged atomically (RENAME_EXCHANGE)
    if libc.renameat2(-100, directory, -100, link, 2) != 0:
        raise OSError(ctypes.get_errno(), "renameat2")
    time.sleep(0.001)  # each state lasts about as long as a command takes to start
"""


@contextlib.contextmanager
def swapping(directory: Path, link: Path) -> Iterator[None]:
    """``directory`` and ``link`` exchanged about every millisecond by another process for as
    long as the block runs (it starts once the process swaps); killed when the block ends,
    which may leave the two exchanged."""
    swapper = subprocess.Popen(
        [sys.executable, "-c", SWAPPER, str(directory), str(link)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert swapper.stdout is not None
        assert swapper.stdout.readline() == "ready\n"
        yield
    finally:
        swapper.kill()
        swapper.wait()
