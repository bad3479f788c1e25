"""rg never reads an exclude file that a ``.git`` file points it at.

redshell15 (4a0ffd1) judged the ignore files rg reads above where it starts as words, by
their lexical paths (``.ignore``, ``.rgignore``, ``.gitignore``, ``.git/info/exclude`` in each
directory up to the workspace's root), and silenced rg's messages about those it meets while
walking. But where ``.git`` is a file (a linked worktree's ``gitdir: ...``), rg reads the
``commondir`` file of the git directory it names and then ``<commondir>/info/exclude``: a path
no lexical judge sees, and rg 13 prints its unparsable lines above where it starts whatever
``--no-ignore-messages`` says. A workspace whose ``.git`` file named a git directory whose
``commondir`` named a directory holding ``info/exclude`` linked to the workspace's ``.env``
(a symbolic or a hard link) or to the home's key made ``cd src && rg needle``, ``rg needle
src`` and ``rg --files src`` print each secret line holding an unclosed ``[`` without
bubblewrap and on Daytona. rg now runs with ``--no-ignore-exclude``. Each attack is checked
first with a plain rg to print the mark.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import pytest_asyncio
from shell_backends import (
    BACKENDS,
    DaytonaPool,
    call_tool,
    daytona_pool,
    restricted_bash,
)

from rho_adapters.daytona import DaytonaExecutor
from rho_adapters.fakes.daytona import FakeDaytona
from rho_adapters.local import LocalExecutor
from rho_domain.permissions import FileWriteMode

MARKS = ("SECRET-ENV", "SECRET-SSH")
LINKS = ("symbolic-env", "symbolic-home", "hard-env")


def _workspace(root: Path, how: str, key: Path) -> Path:
    """A workspace whose .git file names ``wt``, whose commondir names ``common``."""
    ws = root / f"ws-{how}"
    (ws / "src").mkdir(parents=True)
    (ws / "src/a.txt").write_text("needle\n")
    (ws / ".env").write_text("API_KEY=SECRET-ENV-1[x\n")
    (ws / "wt").mkdir()
    (ws / "common/info").mkdir(parents=True)
    (ws / ".git").write_text(f"gitdir: {ws}/wt\n")
    (ws / "wt/commondir").write_text(f"{ws}/common\n")
    exclude = ws / "common/info/exclude"
    if how == "symbolic-env":
        exclude.symlink_to(ws / ".env")
    elif how == "symbolic-home":
        exclude.symlink_to(key)
    else:
        os.link(ws / ".env", exclude)
    return ws


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("rgexclude")
    key = root / "home/.ssh/id_rsa"
    key.parent.mkdir(parents=True)
    key.write_text("SECRET-SSH-1[x\n")
    for how in LINKS:
        ws = _workspace(root, how, key)
        plain = subprocess.run(
            ["rg", "--no-ignore-messages", "needle"],
            cwd=ws / "src",
            capture_output=True,
            text=True,
            check=False,
        )
        assert [m for m in MARKS if m in plain.stdout + plain.stderr], plain
    return root


# The tests on the module's workspaces share one event loop and, on Daytona, one sandbox per
# workspace (``daytonas``): a sandbox per case paid its creation and set-up scripts (about 70
# ms of CPU) each time. Each case still runs its own command with every check the executor
# makes.
daytonas = pytest_asyncio.fixture(scope="module", loop_scope="module")(daytona_pool)


async def _run(
    ws: Path,
    command: str,
    backend: str,
    homes: tuple[str, ...] = (),
    pool: DaytonaPool | None = None,
) -> str:
    """``command``'s answer in ``ws`` on ``backend``; on Daytona in ``pool``'s sandbox for
    ``ws`` when a pool is given, else in a new one."""
    root = str(ws)
    if backend == "daytona" and pool is not None:
        return await call_tool(*restricted_bash(command), pool.get(root, homes))
    if backend == "daytona":
        fake = FakeDaytona(polls_until_started=0)
        daytona = DaytonaExecutor(
            fake.settings(working_dir=root),
            file_write=FileWriteMode.OFF,
            transport=fake.transport,
            homes=homes,
        )
        try:
            return await call_tool(*restricted_bash(command), daytona)
        finally:
            await daytona.aclose()
    local = LocalExecutor(root, sandbox=backend == "bwrap", homes=list(homes))
    return await call_tool(*restricted_bash(command), local)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("how", LINKS)
@pytest.mark.parametrize(
    "command", ["cd src && rg needle", "rg needle src", "rg --files src", "cd src && rg -l x ."]
)
@pytest.mark.asyncio(loop_scope="module")
async def test_rg_never_prints_the_exclude_file_a_git_file_points_at(
    base: Path, backend: str, how: str, command: str, daytonas: DaytonaPool
) -> None:
    out = await _run(base / f"ws-{how}", command, backend, (str(base / "home"),), daytonas)
    assert [m for m in MARKS if m in out] == [], out
    assert "Command refused" not in out, out  # rg still searches, without that file


@pytest.mark.parametrize("backend", BACKENDS)
async def test_the_ignore_files_rg_reads_still_apply(tmp_path: Path, backend: str) -> None:
    """.gitignore and .ignore still keep their files out of a search."""
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    (ws / ".gitignore").write_text("build/\n")
    (ws / ".ignore").write_text("*.log\n")
    (ws / "build").mkdir()
    (ws / "build/out.txt").write_text("needle\n")
    (ws / "run.log").write_text("needle\n")
    (ws / "kept.txt").write_text("needle\n")
    out = await _run(ws, "rg -l needle", backend)
    assert "kept.txt" in out, out
    assert "out.txt" not in out, out
    assert "run.log" not in out, out
