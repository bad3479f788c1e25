"""ls and tree tell nothing about the targets of the links they meet while walking.

With ``l-dir -> <outside>``, ``l-gone -> <outside>/missing``, ``l-there -> <outside>/x.txt``,
``ls -lF`` printed ``l-dir -> <outside>/`` (``--indicator-style=file-type`` and ``--classify``
alike), ``ls --group-directories-first`` sorted ``l-dir`` before ``a-file``, ``tree`` counted
``2 directories`` for a workspace with one (``-J``, ``-X`` too), ``tree -d`` listed ``l-dir``
alone, ``--prune`` dropped it, ``-F`` marked it ``/``, ``--dirsfirst`` sorted it first, ``-H``
linked ``l-dir/``: without bubblewrap and on Daytona (bubblewrap hides the targets). ``-C``
coloured ``l-gone`` as an orphan (the tool drops escapes today; refused all the same). Each is
refused naming the option; tree's report is left out.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from shell_backends import BACKENDS, run_restricted

ATTACKS = {
    "ls -lF": "ls: -F (--classify) looks at the target",
    "ls -l --classify": "ls: --classify looks at the target",
    "ls -l --indicator-style=file-type": "ls: --indicator-style=file-type looks",
    "ls -l --indicator-style=classify": "ls: --indicator-style=classify looks",
    "ls --group-directories-first": "ls: --group-directories-first looks",
    "tree -d": "tree: -d looks at the target",
    "tree --prune": "tree: --prune looks",
    "tree -F": "tree: -F looks",
    "tree -C": "tree: -C looks",
    "tree --dirsfirst": "tree: --dirsfirst looks",
    "tree -H .": "tree: -H looks",
}


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("listlinks")
    (root / "outside").mkdir()
    (root / "outside/x.txt").write_text("x\n")
    ws = root / "ws"
    ws.mkdir()
    (ws / "a-file").write_text("a\n")
    for name, target in (("gone", "missing"), ("there", "x.txt"), ("dir", "")):
        (ws / f"l-{name}").symlink_to(root / "outside" / target)
    plain = subprocess.run(["tree", "-d", "--noreport"], cwd=ws, capture_output=True, text=True)
    assert "l-dir" in plain.stdout  # the attack reaches: tree tells the link to a directory
    return ws


@pytest.mark.parametrize("backend", BACKENDS)
async def test_ls_and_tree_look_through_no_link(workspace: Path, backend: str) -> None:
    for command, refusal in ATTACKS.items():
        out = await run_restricted(str(workspace), command, backend)
        assert refusal in out, (command, out)
    kept = await run_restricted(
        str(workspace), "ls -lp; tree -a; tree -P 'l-*' -J; ls -l --color=always", backend
    )
    for shown in ("l-there ->", "l-dir ->"):
        assert shown in kept, kept
    for hidden in ("/\n", "directories", "report"):
        assert hidden not in kept, kept
