"""A file of a read root that is another name of a secret elsewhere in that root is refused.

The hard-link checks scanned the workspace and the file's own directory for the secret a
file with several names may be (an extra read root may be "/", too large to scan on every
read). So in a read root (``extra_read_roots``) ``docs/notes.txt`` hard-linked to the root's
``.env`` was read by ``cat``, ``head``, ``rg``, a ``< file`` and the read tool, without
bubblewrap and on Daytona; the ``< file`` (opened by the harness) under bubblewrap too. The read
root holding the file is now scanned as the workspace is, but "/" (a secret there is still
found by its name where it is); so is the read root holding a repository's own directories
(a linked worktree's main repository, whose ``info/grafts`` was a hard link of its ``.env``:
``git log`` printed it without bubblewrap and on Daytona).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from shell_backends import BACKENDS, call_tool, restricted_bash

from rho_adapters.daytona import DaytonaExecutor
from rho_adapters.fakes.daytona import FakeDaytona
from rho_adapters.local import LocalExecutor
from rho_domain.permissions import FileWriteMode
from rho_domain.reach import held_roots
from rho_domain.tools.read import ReadHandler

MARK = "SECRET-ENV"


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("readroothard")
    (root / "ws").mkdir()
    (root / "ws/a.txt").write_text("hi\n")
    shared = root / "shared"
    (shared / "docs").mkdir(parents=True)
    (shared / ".env").write_text("API_KEY=SECRET-ENV-1\n")
    os.link(shared / ".env", shared / "docs/notes.txt")
    (shared / "docs/plain.txt").write_text("plain words\n")
    os.link(shared / "docs/plain.txt", shared / "docs/plain-too.txt")
    return root


def _daytona(root: str, extra: str) -> DaytonaExecutor:
    fake = FakeDaytona(polls_until_started=0)
    return DaytonaExecutor(
        fake.settings(working_dir=root),
        file_write=FileWriteMode.OFF,
        transport=fake.transport,
        extra_read_roots=(extra,),
    )


# On Daytona one executor (one sandbox) per workspace for the module's cases, as a session's
# commands run: one per case paid the sandbox's creation and set-up (10 sandboxes, now 2). No
# case changes the workspace or the read root; each command is still judged on its own.
@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def daytona(base: Path) -> AsyncIterator[DaytonaExecutor]:
    executor = _daytona(str(base / "ws"), str(base / "shared"))
    try:
        yield executor
    finally:
        await executor.aclose()


async def _call(
    base: Path, backend: str, tool: tuple[Any, dict[str, Any]], daytona: DaytonaExecutor
) -> str:
    if backend == "daytona":
        return await call_tool(*tool, daytona)
    root, extra = str(base / "ws"), (str(base / "shared"),)
    local = LocalExecutor(root, sandbox=backend == "bwrap", extra_read_roots=extra)
    return await call_tool(*tool, local)


COMMANDS = ["cat {}", "head -n 3 {}", "cat < {}", "rg KEY {}", "grep KEY {}"]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.asyncio(loop_scope="module")
async def test_a_read_roots_twin_of_its_secret_is_never_read(
    base: Path, backend: str, command: str, daytona: DaytonaExecutor
) -> None:
    path = base / "shared/docs/notes.txt"
    out = await _call(base, backend, restricted_bash(command.format(path)), daytona)
    assert MARK not in out, out


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.asyncio(loop_scope="module")
async def test_the_read_tool_refuses_it_too(
    base: Path, backend: str, daytona: DaytonaExecutor
) -> None:
    path = str(base / "shared/docs/notes.txt")
    out = await _call(base, backend, (ReadHandler(), {"path": path}), daytona)
    assert MARK not in out, out
    assert "another name (a hard link) of a secrets file" in out, out


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.asyncio(loop_scope="module")
async def test_other_files_with_several_names_are_still_read(
    base: Path, backend: str, daytona: DaytonaExecutor
) -> None:
    path = base / "shared/docs/plain-too.txt"
    out = await _call(base, backend, restricted_bash(f"cat {path} && cat < {path}"), daytona)
    assert out.count("plain words") == 2, out
    out = await _call(base, backend, (ReadHandler(), {"path": str(path)}), daytona)
    assert "plain words" in out, out


def test_the_read_roots_scanned_leave_the_machines_root_out() -> None:
    assert held_roots(("/", "/srv/data", "/srv/other"), ("/srv/data/docs/x",)) == ("/srv/data",)
    assert held_roots(("/",), ("/etc/x",)) == ()
    assert held_roots(("/srv/data",), ("/srv/database/x",)) == ()


@pytest.fixture(scope="module")
def worktree(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A workspace that is a linked worktree of a repository in a read root, whose
    info/grafts is a hard link of that repository's .env (git log prints 'bad graft data')."""
    root = tmp_path_factory.mktemp("readrootworktree")
    main = root / "shared/main"
    main.mkdir(parents=True)
    env = {"PATH": "/usr/bin:/bin", "HOME": "/dev/null", "GIT_CONFIG_GLOBAL": "/dev/null"}

    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
            cwd=main,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        return done.stdout + done.stderr

    git("init", "-q", "-b", "main")
    (main / "app.py").write_text("print('app')\n")
    git("add", "app.py")
    git("commit", "-qm", "first")
    git("worktree", "add", "-q", str(root / "ws"), "-b", "feature")
    (main / ".env").write_text("API_KEY=SECRET-ENV-1\n")
    os.link(main / ".env", main / ".git/info/grafts")
    assert MARK in git("log")
    return root / "ws", root / "shared"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def worktree_daytona(worktree: tuple[Path, Path]) -> AsyncIterator[DaytonaExecutor]:
    executor = _daytona(str(worktree[0]), str(worktree[1]))
    try:
        yield executor
    finally:
        await executor.aclose()


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("command", ["git log --oneline", "git status"])
@pytest.mark.asyncio(loop_scope="module")
async def test_a_worktrees_repository_in_a_read_root_is_judged_whole(
    worktree: tuple[Path, Path], backend: str, command: str, worktree_daytona: DaytonaExecutor
) -> None:
    ws, shared = worktree
    if backend == "daytona":
        out = await call_tool(*restricted_bash(command), worktree_daytona)
    else:
        local = LocalExecutor(str(ws), sandbox=backend == "bwrap", extra_read_roots=[str(shared)])
        out = await call_tool(*restricted_bash(command), local)
    assert MARK not in out, out
