"""git never reads, as its own attributes, a hard link of a secret in the work tree.

git reads ``.gitattributes`` (and ``.gitignore``, ``.mailmap``, ``.gitmodules``) in the work
tree by itself, no word of the command naming it, and warns with the text of each line it
cannot use ("SECRET-... is not a valid attribute name: .gitattributes:3", "Negative patterns
are ignored"). It no longer follows a symbolic link there (git 2.32), but a hard link of the
workspace's ``.env`` named ``.gitattributes`` is the same file: ``git status``, ``git diff``
and ``git log -p`` printed the secret's words without bubblewrap and on Daytona (the sandbox
masks every name of a known secret). The walkers' exclusions keep git from showing the file,
not from reading it as attributes.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import pytest_asyncio
from shell_backends import BACKENDS, DaytonaPool, daytona_pool, run_restricted

ENV = {"PATH": "/usr/bin:/bin", "HOME": "/dev/null", "GIT_CONFIG_GLOBAL": "/dev/null"}
# Lines git reports as attributes it cannot use, quoting them.
SECRET = "API_KEY=abc\nfoo SECRET-ENV-bad!name\n!SECRET-NEG x\n"


def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=cwd,
        env=ENV,
        check=False,
        capture_output=True,
        text=True,
    )
    return done.stdout + done.stderr


def _workspace(root: Path, linked: str) -> Path:
    ws = root / linked.replace("/", "-")
    (ws / "src").mkdir(parents=True)
    _git(ws, "init", "-q", "-b", "main")
    (ws / "src/app.py").write_text("print('app')\n")
    _git(ws, "add", "src")
    _git(ws, "commit", "-qm", "first")
    (ws / "src/app.py").write_text("print('changed')\n")
    (ws / ".env").write_text(SECRET)
    os.link(ws / ".env", ws / linked)
    return ws


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("worktreefiles")
    for linked in (".gitattributes", "src/.gitattributes"):
        ws = _workspace(root, linked)
        assert "SECRET-ENV" in _git(ws, "diff")  # the target exists and git prints it
    return root


# The tests on the module's workspace share one event loop and, on Daytona, one sandbox per
# root (``daytonas``): a sandbox per case paid its creation and set-up scripts (about 70 ms of
# CPU) each time. Each case still runs its own command with every check the executor makes.
daytonas = pytest_asyncio.fixture(scope="module", loop_scope="module")(daytona_pool)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("ws", [".gitattributes", "src-.gitattributes"])
@pytest.mark.parametrize("command", ["git status", "git diff", "git log -p", "git diff --stat"])
@pytest.mark.asyncio(loop_scope="module")
async def test_git_never_prints_a_hard_link_of_a_secret_it_reads_as_attributes(
    base: Path, backend: str, ws: str, command: str, daytonas: DaytonaPool
) -> None:
    out = await run_restricted(str(base / ws), command, backend, daytonas)
    assert "SECRET-" not in out, out


@pytest.mark.parametrize("backend", ["no-bwrap", "daytona"])
@pytest.mark.asyncio(loop_scope="module")
async def test_the_refusal_names_the_linked_file(
    base: Path, backend: str, daytonas: DaytonaPool
) -> None:
    out = await run_restricted(str(base / "src-.gitattributes"), "git status", backend, daytonas)
    assert out.startswith("SensitivePath: git: "), out
    assert "src/.gitattributes" in out, out


@pytest.mark.parametrize("backend", BACKENDS)
async def test_git_still_reads_its_own_attributes(tmp_path: Path, backend: str) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    _git(ws, "init", "-q", "-b", "main")
    (ws / ".gitattributes").write_text("*.bin binary\n")
    (ws / "a.bin").write_text("one\n")
    _git(ws, "add", ".")
    _git(ws, "commit", "-qm", "first")
    (ws / "a.bin").write_text("two\n")
    out = await run_restricted(str(ws), "git diff", backend)
    assert "Binary files a/a.bin and b/a.bin differ" in out, out
