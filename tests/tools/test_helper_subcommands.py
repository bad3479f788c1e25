"""A credential helper's subcommand words name no file (redfiles27).

redshell26 made every word of a helper's command line after its program a file it may read,
placed at the repository's top, where git runs the helper. ``gh auth setup-git`` writes
``helper = !/usr/bin/gh auth git-credential``, so a top-level file named ``auth`` (a
directory of auth code beside a file of notes, a script) was hidden on every backend. The
subcommand words of the tools that are their own helpers (gh, glab, gcloud, aws) are no
files now, right after their program; any other word still is, and so are the same words
in another place (``!/usr/bin/gh auth notes.txt`` hides ``auth`` and ``notes.txt``).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from shell_backends import BACKENDS, call_tool, new_daytona, restricted_bash

from rho_adapters.local import LocalExecutor
from rho_domain.credential_helpers import helper_files
from rho_domain.ports.executor import Executor
from rho_domain.tools.read import ReadHandler

ENV = {"PATH": "/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM": "1"}
HELPERS = {
    "https://github.com": "!/usr/bin/gh auth git-credential",
    "https://gitlab.com": "!glab auth git-credential",
    "https://source.developers.google.com": "!gcloud auth git-helper --ignore-unknown $@",
    "https://git-codecommit.us-east-1.amazonaws.com": "!aws codecommit credential-helper $@",
    "https://other.example": "!/usr/bin/gh auth notes.txt",
}


@pytest.mark.asyncio
@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_file_named_as_a_helpers_subcommand_stays_readable(
    tmp_path: Path, backend: str
) -> None:
    root = tmp_path / "ws"
    subprocess.run(["git", "init", "-q", str(root)], env=ENV, check=True)
    with (root / ".git/config").open("a") as config:
        for url, helper in HELPERS.items():
            config.write(f'[credential "{url}"]\n\thelper = "{helper}"\n')
    for name in ("git-credential", "git-helper", "codecommit", "credential-helper"):
        (root / name).write_text(f"{name}: plain words\n")
    (root / "notes.txt").write_text("K-HELPER27-NOTES\n")
    executor: Executor
    if backend == "daytona":
        executor = new_daytona(str(root), (str(tmp_path),))
    else:
        env = {**ENV, "HOME": str(tmp_path)}
        executor = LocalExecutor(
            str(root), sandbox=backend == "bwrap", homes=(str(tmp_path),), base_env=env
        )
    try:
        for name in ("git-credential", "git-helper", "codecommit", "credential-helper"):
            assert "plain words" in await call_tool(ReadHandler(), {"path": name}, executor)
            assert "plain words" in await call_tool(*restricted_bash(f"cat {name}"), executor)
        out = await call_tool(*restricted_bash("cat notes.txt"), executor)
        assert "K-HELPER27-NOTES" not in out
        assert "SensitivePath" in out or "Command refused" in out, out
    finally:
        await executor.aclose()


def test_the_words_are_subcommands_only_right_after_their_program() -> None:
    assert helper_files("!/usr/bin/gh auth git-credential", {}) == []
    assert helper_files("!gh git-credential auth", {}) == ["git-credential", "auth"]
    # without `!` or a path git runs `git credential-gh auth`: its operand may be a file
    assert helper_files("gh auth git-credential", {}) == ["auth", "git-credential"]
    assert helper_files("!gh auth git-credential --file=tok", {}) == ["tok"]
