"""Under ``read_outside_workspace: allow`` a parent of the workspace swapped for a link while
a sandboxed command starts never starts it elsewhere (redfiles27).

redshell26 bound the workspace from the directory the walk opened, but under ``allow`` the
sandbox shows the machine's own directories above it (``--ro-bind / /``), and bubblewrap's
``--chdir`` is a path looked up through them when the command starts: a parent exchanged
for a link to elsewhere (``renameat2`` in a loop) started ``cat f.txt`` in
``/elsewhere/app`` (3 of 40 commands here; ``deny`` builds those directories itself and
leaked none). ``/tmp`` and the homes were already private; ``/var/tmp``, ``/srv``, a
user's ``/data`` were not. Now every stage sandboxed under ``allow`` first checks that it
stands in the directory held (``held_dirs.cwd_checked``) and runs nothing elsewhere.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from shell_backends import call_tool, restricted_bash
from swap_support import swapping

from rho_adapters.local import LocalExecutor
from rho_adapters.local.executor import sandbox_available
from rho_domain.reach import OutsideReads

pytestmark = pytest.mark.skipif(not sandbox_available(), reason="no bubblewrap")


@pytest.fixture
def shared_base() -> Iterator[Path]:
    """Two apps below a directory of ``/var/tmp`` (anyone may add to it; the sandbox does
    not mount its own there, as it does on ``/tmp``), and a link to the other one."""
    base = Path(tempfile.mkdtemp(dir="/var/tmp"))
    try:
        for place, words in (("code", "IN-THE-WORKSPACE"), ("elsewhere", "K-ALLOW27-ELSEWHERE")):
            (base / place / "app").mkdir(parents=True)
            (base / place / "app/f.txt").write_text(f"{words}\n")
        (base / "link").symlink_to(base / "elsewhere")
        yield base
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.mark.asyncio
async def test_under_allow_a_parent_swapped_for_a_link_is_never_followed(
    shared_base: Path,
) -> None:
    executor = LocalExecutor(
        str(shared_base / "code/app"), sandbox=True, read_outside=OutsideReads.ALLOW
    )
    answers: list[str] = []
    with swapping(shared_base / "code", shared_base / "link"):
        for _ in range(40):
            answers.append(await call_tool(*restricted_bash("cat f.txt"), executor))
    leaked = [a for a in answers if "K-ALLOW27-ELSEWHERE" in a]
    assert not leaked, leaked[:2]
