"""No descriptor the executor opened reaches a sandboxed command (redfiles28).

redshell26 and redfiles27 hold the workspace, the read roots and the working directory open
from the walk that judged them and hand the descriptors to bubblewrap (its roots'
``--ro-bind-try /proc/self/fd/N``) and to the stage's own check of where it stands
(``held_dirs.cwd_checked``): bubblewrap keeps every descriptor it is given open, so the
command inherited them, and ``/proc/self/fd/N`` leads into the host's mount of that
directory, where none of the sandbox's masks is: ``cat /proc/self/fd/*/.env`` printed the
workspace's ``.env`` under ``deny`` and ``allow``, from the workspace and from below it.
Now the roots are bound by ``--ro-bind-fd`` (bubblewrap closes those before the command
starts) and the check compares the directory's device and inode, given as numbers.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from rho_adapters.local import LocalExecutor
from rho_adapters.local.executor import sandbox_available
from rho_domain.reach import OutsideReads

pytestmark = pytest.mark.skipif(not sandbox_available(), reason="no bubblewrap")

SECRET = "K-FD28-SECRET"
# every inherited descriptor, followed into the directory it holds
READ_THROUGH = "ls -l /proc/self/fd/; for f in /proc/self/fd/*; do cat $f/.env $f/../.env; done"


@pytest.fixture(scope="module")
def workspace() -> Iterator[Path]:
    """A workspace under /var/tmp (the sandbox shows it under ``allow``, unlike /tmp) with a
    ``.env`` at its top and a subdirectory to start in."""
    root = Path(tempfile.mkdtemp(dir="/var/tmp"))
    try:
        (root / "sub").mkdir()
        (root / ".env").write_text(f"{SECRET}\n")
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.mark.asyncio
@pytest.mark.parametrize("outside", [OutsideReads.DENY, OutsideReads.ALLOW])
@pytest.mark.parametrize("start", [".", "sub"])
async def test_no_held_descriptor_reaches_the_command(
    workspace: Path, outside: OutsideReads, start: str
) -> None:
    executor = LocalExecutor(str(workspace), sandbox=True, read_outside=outside)
    done = await executor.run_unchecked(["/bin/sh", "-c", READ_THROUGH], cwd=str(workspace / start))
    assert SECRET not in done.output, done.output
    assert str(workspace) not in done.output  # no descriptor of it is open at all
    assert "total 0" in done.output  # the listing ran: the command started
