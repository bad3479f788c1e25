"""The files git opens inside its repository by itself are judged like any path: a link from
there to a secret, or out of reach, is refused, whatever the command names.

redshell14 judged where the repository is (its git and common directories, the shared entries
``objects``, ``refs``..., the alternates). Inside those directories git also opens files no word
of the command names, and some of them it prints: ``info/grafts`` (``git log`` and every
history reader print "bad graft data: <the line>"), a rebase's ``rebase-merge/done`` and
``git-rebase-todo`` (``git status`` prints their lines as the commands done and to do),
``packed-refs`` ("unexpected line in .git/packed-refs: <the line>": redshell14 judged only its
real path) and a pack in ``objects/pack`` (another repository's history). Before this suite, a
symbolic link there to the workspace's ``.env`` or the home's ``~/.ssh/id_rsa``, a hard link to
``.env``, or links to another repository's pack printed the secret without bubblewrap and on
Daytona (the
sandbox masks the workspace's secrets and hides homes and what is out of reach). Every attack
runs on a real repository, checked first with a plain git to print the mark.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import pytest_asyncio
from shell_backends import BACKENDS, DaytonaPool, call_tool, daytona_pool, restricted_bash

from rho_adapters.local import LocalExecutor

ENV = {"PATH": "/usr/bin:/bin", "HOME": "/dev/null", "GIT_CONFIG_GLOBAL": "/dev/null"}
MARKS = ("SECRET-ENV", "SECRET-SSH", "SECRET-PASS")


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


def _repo(path: Path, files: dict[str, str]) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    _git(path, "init", "-q", "-b", "main")
    for rel, text in files.items():
        (path / rel).parent.mkdir(parents=True, exist_ok=True)
        (path / rel).write_text(text)
    _git(path, "add", *files)
    _git(path, "commit", "-qm", "first")
    return path


def _workspace(root: Path, name: str) -> Path:
    ws = _repo(root / name, {"src/app.py": "print('app')\n"})
    (ws / ".env").write_text("API_KEY=SECRET-ENV-1\n")
    return ws


def _rebasing(ws: Path) -> Path:
    """The files ``git status`` reads while an interactive rebase stops (done, todo, onto)."""
    merge = ws / ".git/rebase-merge"
    merge.mkdir()
    (merge / "interactive").touch()
    (merge / "head-name").write_text("refs/heads/main\n")
    (merge / "onto").write_text(_git(ws, "rev-parse", "HEAD"))
    return merge


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("gitfiles")
    ssh = root / "home/.ssh"
    ssh.mkdir(parents=True)
    (ssh / "id_rsa").write_text("SECRET-SSH-1\n")
    store = _repo(root / "home/.password-store", {"site/login": "SECRET-PASS-1\n"})
    _git(store, "repack", "-adq")
    # 1. info/grafts, a symbolic link to the workspace's .env
    ws = _workspace(root, "ws-grafts-link")
    (ws / ".git/info/grafts").symlink_to(ws / ".env")
    # 2. info/grafts, a hard link to the workspace's .env
    ws = _workspace(root, "ws-grafts-hard")
    os.link(ws / ".env", ws / ".git/info/grafts")
    # 3. a rebase's todo list linked to a key of the home, its done list to .env
    ws = _workspace(root, "ws-rebase")
    merge = _rebasing(ws)
    (merge / "git-rebase-todo").symlink_to(ssh / "id_rsa")
    os.link(ws / ".env", merge / "done")
    # 4. another repository's pack linked into objects/pack, a branch naming its commit
    ws = _workspace(root, "ws-pack")
    pack_dir = store / ".git/objects/pack"
    for pack in pack_dir.iterdir():
        (ws / ".git/objects/pack" / pack.name).symlink_to(pack)
    head = _git(store, "rev-parse", "HEAD").strip()
    (ws / ".git/refs/heads/stolen").write_text(head + "\n")
    # 5. the same pack links in an objects directory that is itself a link (within reach)
    ws = _workspace(root, "ws-objects-link")
    (ws / ".git/objects").rename(ws / "objects-kept")
    (ws / ".git/objects").symlink_to(ws / "objects-kept")
    for pack in pack_dir.iterdir():
        (ws / "objects-kept/pack" / pack.name).symlink_to(pack)
    (ws / ".git/refs/heads/stolen").write_text(head + "\n")
    # 6. packed-refs (redshell14 judged its real path only) a hard link of .env
    ws = _workspace(root, "ws-packed-hard")
    (ws / ".git/packed-refs").unlink(missing_ok=True)
    os.link(ws / ".env", ws / ".git/packed-refs")
    # The targets exist and a plain git prints them.
    assert "SECRET-ENV" in _git(root / "ws-grafts-link", "log")
    assert "SECRET-ENV" in _git(root / "ws-grafts-hard", "log")
    status = _git(root / "ws-rebase", "status")
    assert "SECRET-SSH" in status, status
    assert "SECRET-ENV" in status, status
    assert "SECRET-PASS" in _git(root / "ws-pack", "log", "-p", "--all")
    assert "SECRET-PASS" in _git(root / "ws-objects-link", "log", "-p", "--all")
    assert "SECRET-ENV" in _git(root / "ws-packed-hard", "branch")
    return root


# The attack cases run on the module's event loop and, on Daytona, on one executor per
# workspace (``daytonas``), as a session's commands do: a new one per case paid the sandbox's
# creation and set-up scripts before the command. Each case still runs its own command.
daytonas = pytest_asyncio.fixture(scope="module", loop_scope="module")(daytona_pool)


async def _run(
    base: Path, ws: str, command: str, backend: str, daytonas: DaytonaPool | None = None
) -> str:
    root, homes = str(base / ws), (str(base / "home"),)
    if backend == "daytona":
        pool = daytonas if daytonas is not None else DaytonaPool()
        try:
            return await call_tool(*restricted_bash(command), pool.get(root, homes))
        finally:
            if daytonas is None:
                await pool.aclose()
    local = LocalExecutor(root, sandbox=backend == "bwrap", homes=list(homes))
    return await call_tool(*restricted_bash(command), local)


ATTACKS = [
    ("ws-grafts-link", "git log"),
    ("ws-grafts-link", "git status"),
    ("ws-grafts-hard", "git log --oneline"),
    ("ws-grafts-hard", "git rev-list HEAD"),
    ("ws-rebase", "git status"),
    ("ws-pack", "git log -p --all"),
    ("ws-pack", "git show stolen"),
    ("ws-objects-link", "git log -p --all"),
    ("ws-packed-hard", "git branch"),
    ("ws-packed-hard", "git show-ref"),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("ws", "command"), ATTACKS)
@pytest.mark.asyncio(loop_scope="module")
async def test_git_never_prints_a_file_linked_into_its_repository(
    base: Path, backend: str, ws: str, command: str, daytonas: DaytonaPool
) -> None:
    out = await _run(base, ws, command, backend, daytonas)
    assert [m for m in MARKS if m in out] == [], out


@pytest.mark.parametrize("backend", ["no-bwrap", "daytona"])
@pytest.mark.parametrize(
    ("ws", "reason"),
    [
        ("ws-grafts-link", "SensitivePath: git: the repository's file "),
        ("ws-grafts-hard", "SensitivePath: git: the repository's file "),
        ("ws-rebase", "SensitivePath: git: the repository's file "),
        ("ws-pack", "SensitivePath: git: the repository's file "),
        ("ws-objects-link", "SensitivePath: git: the repository's file "),
        ("ws-packed-hard", "SensitivePath: git: the repository's file "),
    ],
)
@pytest.mark.asyncio(loop_scope="module")
async def test_the_refusal_names_the_linked_file(
    base: Path, backend: str, ws: str, reason: str, daytonas: DaytonaPool
) -> None:
    out = await _run(base, ws, "git log --oneline", backend, daytonas)
    assert out.startswith(reason), out


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_repository_with_links_inside_itself_still_answers(
    tmp_path: Path, backend: str
) -> None:
    """Links that stay within reach and name no secret are read as git reads them: a ref
    linked to another ref (as old git wrote symbolic refs), a hook linked to a script."""
    ws = _repo(tmp_path / "ws", {"src/app.py": "print('app')\n"})
    (ws / ".git/refs/heads/alias").symlink_to(ws / ".git/refs/heads/main")
    (ws / ".git/hooks/pre-commit").symlink_to(ws / "src/app.py")
    out = await _run(tmp_path, "ws", "git log --oneline alias && git status --short", backend)
    assert "first" in out, out
