"""Walkers never follow the symbolic links they meet out of the workspace's reach.

A link inside the workspace is judged as a word: ``ls out``, ``find out`` and ``echo out/*``
are refused when ``out`` leads outside the workspace. But a link met while walking is no
word. Before redshell16, a workspace holding ``out -> <a directory outside>`` and
``keys -> <a home's .ssh>`` let ``find -L .``, ``find . -follow``, ``ls -LR``, ``du -L -a``
and ``tree -l`` (and ``xargs ls -LR``) list the names, sizes and times inside both, without
bubblewrap and on Daytona: the outside file's name printed. The restricted shell now refuses
those options (``programs._FOLLOWS_LINKS``, ``embedded.check_find``); ``-H``, which follows
the start paths only, and the plain walks still run. Each attack is first run as a plain
program, to show that it reaches the marks.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import pytest_asyncio
from shell_backends import BACKENDS, DaytonaPool, case_pool, run_restricted

MARKS = ("outside-MARK-1", "id_MARK-2")
ATTACKS = {
    "find -L . -name '*MARK*'": "find: -L follows the symbolic links met while walking",
    "find . -follow -type f": "find: -follow follows the symbolic links met while walking",
    "ls -LR": "ls: -L follows the symbolic links met while walking",
    "ls --recursive --dereference .": "ls: --dereference follows the symbolic links",
    "du -L -a": "du: -L follows the symbolic links met while walking",
    "du --dereference --all .": "du: --dereference follows the symbolic links",
    "tree -l": "tree: -l follows the symbolic links met while walking",
    "echo . | xargs ls -R -L": "ls: -L follows the symbolic links met while walking",
}
# ls lists a directory's entries without -R too, and -L stats each link's target: ls -lL printed
# the size of a file out of reach (stat -L refuses it) before varshell16b. -d lists operands.
SIZE = "12345"
LISTINGS = {
    "ls -lL": "ls: -L follows the symbolic links",
    "ls -l --dereference .": "ls: --dereference follows the symbolic links",
    "echo . | xargs ls -sL": "ls: -L follows the symbolic links",
}
# Their neighbours run: links on the command line (-H) are words, judged; plain walks stop at
# a link; ls -L without -R lists no directory it was not given.
ALLOWED = ("find -H . -name '*.txt'", "ls -R", "du -a", "tree", "ls -lLd . notes.txt")

# One sandbox for a case's commands, which leave its workspace as it was: a new one per
# command paid its creation and set-up scripts every time (about 90 ms of CPU).
sandboxes = pytest_asyncio.fixture(case_pool)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("linkwalks")
    outside = root / "outside"
    outside.mkdir()
    (outside / "outside-MARK-1.txt").write_text("x\n")
    ssh = root / "home/.ssh"
    ssh.mkdir(parents=True)
    (ssh / "id_MARK-2").write_text("key\n")
    ws = root / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("notes\n")
    (ws / "out").symlink_to(outside)
    (ws / "keys").symlink_to(ssh)
    (outside / "sized").write_text("x" * int(SIZE))
    (ws / "sized").symlink_to(outside / "sized")
    plain = subprocess.run(["ls", "-lL"], cwd=ws, capture_output=True, text=True, check=True)
    assert SIZE in plain.stdout  # the target's size, out of reach
    for command in ATTACKS:  # the plain programs reach both marks
        if "xargs" in command:
            continue
        plain = subprocess.run(command, shell=True, cwd=ws, capture_output=True, text=True)
        assert all(m in plain.stdout for m in MARKS), (command, plain.stdout)
    return ws


@pytest.mark.parametrize("backend", BACKENDS)
async def test_walkers_never_follow_links_out_of_reach(
    workspace: Path, backend: str, sandboxes: DaytonaPool
) -> None:
    for command, refusal in ATTACKS.items():
        out = await run_restricted(str(workspace), command, backend, sandboxes)
        assert refusal in out, (command, out)
        assert not [m for m in MARKS if m in out], (command, out)
    for command, refusal in LISTINGS.items():
        out = await run_restricted(str(workspace), command, backend, sandboxes)
        assert refusal in out, (command, out)
        assert SIZE not in out, (command, out)
    for command in ALLOWED:
        out = await run_restricted(str(workspace), command, backend, sandboxes)
        assert "refused" not in out, (command, out)
        assert "notes.txt" in out, (command, out)
        assert not [m for m in MARKS if m in out], (command, out)
