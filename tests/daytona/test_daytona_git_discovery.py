"""The git discovery script (``git_scripts.git_discovery``) runs before every git command on
Daytona: what it finds, and that it spends no process the shell can do without.

It split git's answer into lines with a ``sed -n Np`` each, climbed to the directory holding
``.git`` with a ``dirname`` per level and resolved the git, common and work-tree directories
with a ``realpath`` each: 69 forks for a plain repository (42 now), 25-36 ms of the sandbox's
CPU for every git command.
"""

from __future__ import annotations

import base64
import shutil
import subprocess
from pathlib import Path

from rho_adapters.daytona import git_scripts
from rho_adapters.daytona.git_files import parse_git_files

# What the script needs besides the shell's own builtins (git runs through env's fixed PATH).
PROGRAMS = ("env", "realpath", "find", "head", "base64")


def _answer(cwd: Path, path: str) -> str:
    done = subprocess.run(
        ["/bin/sh", "-c", git_scripts.git_discovery(str(cwd))],
        env={"PATH": path},
        capture_output=True,
        text=True,
        check=True,
        timeout=20,  # the old climb never ended without dirname
    )
    return done.stdout


def test_the_discovery_splits_and_climbs_in_the_shell(tmp_path: Path) -> None:
    """With only ``PROGRAMS`` on its PATH (no sed, no dirname) the script answers what it
    answers with the whole system's, from a workspace two levels inside a repository that
    borrows objects (a chain of two alternates) and from a directory in no repository; and it
    resolves the three directories git named in one realpath."""
    for name in ("big", "r2", "r3"):
        subprocess.run(["git", "init", "-q", str(tmp_path / name)], check=True)
    big = tmp_path / "big"
    (big / ".git/objects/info/alternates").write_text("../../../r2/.git/objects\n")
    (tmp_path / "r2/.git/objects/info/alternates").write_text(f"{tmp_path}/r3/.git/objects\n")
    ws, plain = big / "ws/deep", tmp_path / "plain/a/b"
    ws.mkdir(parents=True)
    plain.mkdir(parents=True)
    bin_dir, log = tmp_path / "bin", tmp_path / "realpath.log"
    bin_dir.mkdir()
    for program in PROGRAMS:
        (bin_dir / program).symlink_to(shutil.which(program) or program)
    (bin_dir / "realpath").unlink()
    (bin_dir / "realpath").write_text(
        f'#!/bin/sh\necho "$*" >>{log}\nexec {shutil.which("realpath")} "$@"\n'
    )
    (bin_dir / "realpath").chmod(0o755)
    for cwd in (ws, plain):
        assert _answer(cwd, str(bin_dir)) == _answer(cwd, "/usr/bin:/bin"), cwd
    answer = _answer(ws, str(bin_dir))
    repo, _ = git_scripts.parse_git_discovery(answer)
    assert repo is not None
    assert base64.b64decode(answer.split("\n")[1]).decode() == str(big)
    borrowed = {f"{tmp_path}/{r}/.git/objects" for r in ("r2", "r3")}
    assert borrowed <= set(git_scripts.parse_git_places(answer))
    assert parse_git_files(answer).complete
    git_dir = f"{big}/.git"
    assert f"-m -- {git_dir} {git_dir} {big}" in log.read_text().splitlines()
