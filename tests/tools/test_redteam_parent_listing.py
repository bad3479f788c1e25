"""ls never lists '..' of the directory it lists: at the workspace's root that entry is the
directory above, out of reach, and ``stat ..`` is refused for it.

Before redshell18, ``ls -la`` (``--all``, and as an xargs target) printed the mode, link
count, owner, size and time of the workspace's parent (a link count of 4 told that the parent
holds another directory beside the workspace) without bubblewrap and on Daytona; ``ls -f``
too (it implies ``-a``). Bubblewrap showed its own tmpfs there. Now ``-a`` is rebuilt as
``-A`` (every entry but ``.`` and ``..``) and ``-f`` is refused, naming ``-AU``.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from shell_backends import BACKENDS, run_restricted

from rho_domain.shell.programs import harden_argv


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("parent")
    (base / "beside").mkdir()
    root = base / "ws"
    root.mkdir()
    (root / "a.txt").write_text("x\n")
    os.utime(base, (0, 110_000_000))  # the parent's time: 1973, no other line's
    return root


def test_ls_a_is_rebuilt_as_almost_all() -> None:
    assert harden_argv(["ls", "-la"]) == ("ls", "-l", "-A", "--")
    assert harden_argv(["ls", "--all", "x"]) == ("ls", "-A", "--", "x")


@pytest.mark.parametrize("backend", BACKENDS)
async def test_ls_never_shows_the_directory_above(ws: Path, backend: str) -> None:
    plain = subprocess.run(["ls", "-la", "--time-style=+%Y"], cwd=ws, capture_output=True)
    assert b"1973 .." in plain.stdout, plain  # the attack reaches the parent's metadata
    for command in ("ls -la --time-style=+%Y", "ls --all -l --time-style=+%Y",
                    "echo . | xargs ls -la --time-style=+%Y"):  # fmt: skip
        out = await run_restricted(str(ws), command, backend)
        assert "a.txt" in out, (command, out)
        assert " .." not in out, (command, out)
        assert "1973" not in out, (command, out)
    out = await run_restricted(str(ws), "ls -fl", backend)
    assert "ls: -f lists '..'" in out, out
    assert "use -AU" in out, out
