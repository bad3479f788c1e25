"""Without ``/proc`` a command is refused, naming what is missing and how to mount it
(redfiles27).

Every local command starts in the directory the walk opened, by its descriptor
(``/proc/self/fd/N``, redshell26), and no fallback takes it by path again. In a container or
chroot without ``/proc`` that path does not exist: the refusal said ``/proc/self/fd/7: No
such file or directory while the command was prepared ... (a path changed meanwhile?)``.
A real process runs the executor in a mount namespace whose ``/proc`` is an empty tmpfs.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from rho_adapters.local.executor import sandbox_available
from rho_adapters.local.runner import find_program

_RUN = """
import asyncio, sys
from rho_adapters.local import LocalExecutor
from rho_domain.ports.commands import Command, Stage
from rho_domain.errors import ExecutorError
async def main():
    executor = LocalExecutor(sys.argv[1], sandbox=False)
    try:
        await executor.run(Command(pipeline=(Stage(argv=("cat", "f.txt")),)))
    except ExecutorError as exc:
        print("REFUSED:", exc)
    print("READ:", (await executor.read("f.txt")).decode()[:5])
asyncio.run(main())
"""


@pytest.mark.skipif(not sandbox_available(), reason="no bubblewrap to hide /proc")
def test_a_command_without_proc_is_refused_saying_so(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("plain\n")
    bwrap = find_program(("/usr/bin", "/bin"), "bwrap")
    assert bwrap is not None
    done = subprocess.run(
        [bwrap, "--dev-bind", "/", "/", "--tmpfs", "/proc", sys.executable, "-c", _RUN,
         str(tmp_path)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        timeout=60,
        check=False,
    )  # fmt: skip
    assert "REFUSED: commands start in the directory" in done.stdout, done.stdout + done.stderr
    assert "sees no /proc" in done.stdout
    assert "mount -t proc proc /proc" in done.stdout
    assert "READ: plain" in done.stdout  # the file tools need no /proc
