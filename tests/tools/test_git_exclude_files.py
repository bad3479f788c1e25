"""git ls-files reads no exclude file named by the command in every directory it walks.

``git ls-files -o -i --exclude-per-directory=NAME`` reads the file NAME in each directory
it walks as a list of ignore patterns, and lists the untracked files they match: the lines
of that file, guessed one existing name at a time. The word NAME was judged only as a path
from the command's directory, where it names nothing: a hard link ``sub/pats`` of ``.env``,
or ``.config/gh/hosts.yml`` (a secret by its location) was read without bubblewrap and on
Daytona (bubblewrap masked them), and the files matching their lines were listed.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from shell_backends import BACKENDS, run_restricted

ENV = {"PATH": "/usr/bin:/bin", "HOME": "/dev/null", "GIT_CONFIG_GLOBAL": "/dev/null"}
# (the option's value, the file its secret's pattern matches)
ATTACKS = (("pats", "sub/app.log"), ("hosts.yml", ".config/gh/b.txt"))


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    ws = tmp_path_factory.mktemp("excludefiles")
    subprocess.run(["git", "init", "-q"], cwd=ws, env=ENV, check=True)
    (ws / "sub").mkdir()
    (ws / ".config/gh").mkdir(parents=True)
    (ws / ".env").write_text("API_KEY=abc\n*.log\n")
    os.link(ws / ".env", ws / "sub/pats")
    (ws / ".config/gh/hosts.yml").write_text("oauth_token: gho_x\n*.txt\n")
    for name in ("sub/app.log", ".config/gh/b.txt"):
        (ws / name).write_text("")
    for value, listed in ATTACKS:  # the target exists and git lists what the secret matches
        argv = ["git", "ls-files", "-o", "-i", f"--exclude-per-directory={value}"]
        plain = subprocess.run(argv, cwd=ws, env=ENV, capture_output=True, text=True)
        assert plain.stdout.splitlines() == [listed], plain
    return ws


@pytest.mark.parametrize("backend", BACKENDS)
async def test_exclude_per_directory_is_refused(workspace: Path, backend: str) -> None:
    for value, listed in ATTACKS:
        command = f"git ls-files -o -i --exclude-per-directory={value}"
        out = await run_restricted(str(workspace), command, backend)
        assert listed not in out, (command, out)
        assert "option '--exclude-per-directory" in out, (command, out)
