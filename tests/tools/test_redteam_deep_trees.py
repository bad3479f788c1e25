"""A directory tree nested deeper than a path may be long (4,096 characters).

The local executor's walks for secrets (``secret_scan``: what the sandbox masks and what a
recursive reader excludes; ``alias_scan``: hard links of secrets) opened each directory by
its path and skipped one whose path was too long (ENAMETOOLONG) as unreadable. ``grep -r``
walks with descriptors and reads there: with ``deep/.../.config/gh/hosts.yml`` (a secret by
its location) and ``deep/.../hard.txt`` (a hard link of ``.env``) 17 directories of 250
characters down, ``grep -r SECRET .`` printed both, with bubblewrap and without (Daytona's
walk excluded them), and without bubblewrap ``cat shallow.txt`` (another hard link of the
deep ``hosts.yml``) printed the token. Now the secrets walk refuses a command when it meets
such a path, naming it, and the hard-link scan counts as incomplete (a file with several
names is then refused).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import pytest_asyncio
from shell_backends import BACKENDS, DaytonaPool, case_pool, run_restricted

MARKS = ("SECRET-GH-DEEP", "SECRET-ENV-DEEP")

# One sandbox for a case's commands, which leave its workspace as it was: a new one per
# command paid its creation and set-up scripts every time (about 90 ms of CPU).
sandboxes = pytest_asyncio.fixture(case_pool)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # A directory of its own: Daytona's scan walks the directory of each word it opens, and
    # "." names the workspace, whose directory was the worker's basetemp (16,000 entries late
    # in a run).
    ws = tmp_path_factory.mktemp("deep") / "ws"
    ws.mkdir()
    (ws / ".env").write_text("API_KEY=SECRET-ENV-DEEP\n")
    (ws / "notes.txt").write_text("notes\n")
    fd = os.open(ws, os.O_RDONLY)
    try:
        for name in ["d" * 250] * 17 + [".config", "gh"]:  # past 4,096 characters
            os.mkdir(name, dir_fd=fd)
            below = os.open(name, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = below
        hosts = os.open("hosts.yml", os.O_WRONLY | os.O_CREAT, dir_fd=fd)
        os.write(hosts, b"github.com:\n  oauth_token: SECRET-GH-DEEP\n")
        os.close(hosts)
        os.link(ws / ".env", "hard.txt", dst_dir_fd=fd)
        os.link("hosts.yml", ws / "shallow.txt", src_dir_fd=fd)
    finally:
        os.close(fd)
    plain = subprocess.run(["grep", "-r", "SECRET", "."], cwd=ws, capture_output=True, text=True)
    assert plain.stdout.count("SECRET-ENV-DEEP") == 2  # .env and the deep hard link
    assert plain.stdout.count("SECRET-GH-DEEP") == 2  # hosts.yml and shallow.txt
    return ws


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_tree_too_deep_to_scan_is_refused(
    workspace: Path, backend: str, sandboxes: DaytonaPool
) -> None:
    for command in ("grep -r SECRET .", "grep -rl oauth", "cat shallow.txt"):
        out = await run_restricted(str(workspace), command, backend, sandboxes)
        assert [m for m in MARKS if m in out] == [], (command, out[-400:])
        if backend != "daytona":  # Daytona's find walks it and refuses or excludes them
            refusal = "several hard links" if "cat" in command else "nested deeper than a path"
            assert refusal in out, (command, out[-400:])


@pytest.fixture(scope="module")
def climbing(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A workspace whose link ``L`` leads 16 directories of 250 characters down, where the
    17th holds ``up -> /``; and a word that climbs from there to ``outside/x.txt``."""
    root = tmp_path_factory.mktemp("climb")
    (root / "outside").mkdir()
    (root / "outside/x.txt").write_text("OUTSIDE-DEEP\n")
    ws = root / "ws"
    ws.mkdir()
    names = [f"{i:02d}" + "d" * 248 for i in range(17)]
    fd = os.open(ws, os.O_RDONLY)
    try:
        for name in names:
            os.mkdir(name, dir_fd=fd)
            below = os.open(name, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = below
        os.symlink("/", "up", dir_fd=fd)
    finally:
        os.close(fd)
    (ws / "L").symlink_to("/".join(names[:16]))
    word = f"L/{names[16]}/up/{'../' * 18}{str(root / 'outside/x.txt').lstrip('/')}"
    plain = subprocess.run(["cat", word], cwd=ws, capture_output=True, text=True)
    assert plain.stdout == "OUTSIDE-DEEP\n"  # the kernel follows up -> / at any depth
    assert os.path.realpath(ws / word) == str(ws / str(root / "outside/x.txt").lstrip("/"))
    return ws, word


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_link_past_4096_characters_is_no_directory(
    climbing: tuple[Path, str], backend: str, sandboxes: DaytonaPool
) -> None:
    """``os.path.realpath`` (and Daytona's ``realpath -m``, and xargs' guard's) took ``up``,
    whose path is longer than 4,096 characters, for a directory: the word resolved lexically
    to a missing file in the workspace, and ``cat`` printed ``outside/x.txt`` without
    bubblewrap and on Daytona (``echo WORD | xargs cat`` on Daytona)."""
    ws, word = climbing
    for command in (f"cat {word}", f"grep -r OUT {word}"):
        out = await run_restricted(str(ws), command, backend, sandboxes)
        assert "OUTSIDE-DEEP" not in out, (command, out[-300:])
        if backend != "bwrap":  # there the secrets walk refuses the tree first
            assert "its real path cannot be judged" in out, (command, out[-300:])
    # xargs' guard judged the item by realpath -m alike (locally the walk refuses the tree)
    out = await run_restricted(str(ws), f"echo {word} | xargs cat", backend, sandboxes)
    assert "OUTSIDE-DEEP" not in out, out[-300:]
    assert "outside what this profile reads" in out or "nested deeper" in out, out[-300:]
