"""A directory below the workspace swapped for a link while a sandboxed command starts in it
never runs the command where the link leads (redfiles27).

redshell26 starts every command in the directory the walk opened, but under bubblewrap the
sandbox's ``--chdir`` is a path looked up when it starts: ``sub`` exchanged for a link to
``/etc`` (``renameat2`` in a loop) made ``cd sub && cat hostname`` print ``/etc/hostname``
(6 of 300 commands here, under the default ``deny``). Now a stage below a root first checks
that it stands in the directory held (``held_dirs.cwd_checked``: its device and inode, given
as numbers since redfiles28) and runs nothing elsewhere.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from shell_backends import call_tool, restricted_bash
from swap_support import swapping

from rho_adapters.local import LocalExecutor
from rho_adapters.local.executor import sandbox_available
from rho_adapters.local.held_dirs import cwd_by_identity, cwd_checked
from rho_adapters.local.runner import find_program

pytestmark = pytest.mark.skipif(not sandbox_available(), reason="no bubblewrap")


def test_a_stage_that_started_elsewhere_runs_nothing(tmp_path: Path) -> None:
    held, other = tmp_path / "held", tmp_path / "other"
    held.mkdir()
    other.mkdir()
    bwrap = find_program(("/usr/bin", "/bin"), "bwrap")
    assert bwrap is not None
    fd = os.open(held, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for where, code in ((held, 0), (other, 126)):  # other: where a swapped path led
            sandbox = (bwrap, "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev")
            argv = cwd_by_identity(
                (*sandbox, "--chdir", str(where), "--", *cwd_checked(("/bin/echo", "RAN"))), fd
            )
            done = subprocess.run(argv, capture_output=True, text=True, check=False)
            assert done.returncode == code, done.stderr
            assert ("RAN" in done.stdout) == (code == 0)
    finally:
        os.close(fd)
    assert "the directory changed while the sandbox started" in done.stderr


@pytest.mark.asyncio
async def test_a_subdirectory_swapped_for_a_link_is_never_entered(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub/hostname").write_text("IN-SUB\n")
    (tmp_path / "link").symlink_to("/etc")
    host = Path("/etc/hostname").read_text().strip()
    executor = LocalExecutor(str(tmp_path), sandbox=True)
    answers: list[str] = []
    with swapping(tmp_path / "sub", tmp_path / "link"):
        for _ in range(40):
            answers.append(await call_tool(*restricted_bash("cd sub && cat hostname"), executor))
    leaked = [a for a in answers if a.startswith(f"{host}\n")]
    assert not leaked, leaked[:2]
