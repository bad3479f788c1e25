"""Where git reads its repository from is judged like any path: a secret location or a
directory out of reach is refused, whatever points git there.

A workspace can name another repository without any path word: its ``.git`` may be a file
(``gitdir: /root/.password-store/.git``, as a linked worktree's is), its git directory may
hold a ``commondir`` file, its ``objects`` and ``refs`` may be symbolic links into another
repository, its ``objects/info/alternates`` may borrow another's objects, and a workspace
inside a larger repository is read through the ``.git`` of a parent. git then reads that
repository's objects: before this suite, ``git log -p`` and ``git show HEAD:site/login``
in such a workspace printed the home's password store without bubblewrap and on Daytona
(the sandbox hides homes and, under ``read_outside_workspace: deny``, everything outside the
workspace, so git found no repository there). Every backend runs each attack on a real
repository that holds the marked content (checked with a plain git first).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import pytest_asyncio
from shell_backends import BACKENDS, DaytonaPool, call_tool, daytona_pool, restricted_bash

from rho_adapters.local import LocalExecutor
from rho_domain.errors import PathOutsideWorkspace
from rho_domain.shell.git_repo import alternates

ENV = {"PATH": "/usr/bin:/bin", "HOME": "/dev/null", "GIT_CONFIG_GLOBAL": "/dev/null"}
MARKS = ("SECRET-PASS", "OUTSIDE-MARK")
ATTACKS = [
    "git log -p",
    "git log -p --all",
    "git show HEAD:site/login",
    "git show HEAD",
    "git grep -e SECRET -e OUTSIDE HEAD",
    "git diff HEAD~1 HEAD",
    "git ls-tree -r HEAD",
    "git status",
]


def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=cwd,
        env=ENV,
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout


def _repo(path: Path, files: dict[str, str]) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    _git(path, "init", "-q", "-b", "main")
    (path / "first.txt").write_text("first\n")
    _git(path, "add", "first.txt")
    _git(path, "commit", "-qm", "first")
    for rel, text in files.items():
        (path / rel).parent.mkdir(parents=True, exist_ok=True)
        (path / rel).write_text(text)
    _git(path, "add", ".")
    _git(path, "commit", "-qm", "second")
    return path


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("gitreach")
    store = _repo(root / "home/.password-store", {"site/login": "SECRET-PASS-1\n"})
    other = _repo(root / "srv/other", {"site/login": "OUTSIDE-MARK-1\n"})
    # 1. a gitfile naming the home's password store (a secret location)
    (root / "ws-gitfile").mkdir()
    (root / "ws-gitfile/.git").write_text(f"gitdir: {store}/.git\n")
    # 2. a gitfile naming a repository outside the workspace (out of reach under deny)
    (root / "ws-outside").mkdir()
    (root / "ws-outside/.git").write_text(f"gitdir: {other}/.git\n")
    # 3. a git directory of its own whose commondir is the password store's
    own = root / "ws-commondir/.git"
    own.mkdir(parents=True)
    (own / "HEAD").write_text("ref: refs/heads/main\n")
    (own / "commondir").write_text(f"{store}/.git\n")
    # 4. a git directory of its own whose objects and refs are links into the password store
    shared = root / "ws-shared/.git"
    _git(shared.parent.parent, "init", "-q", "-b", "main", "ws-shared")
    for name in ("objects", "refs"):
        shutil.rmtree(shared / name)
        (shared / name).symlink_to(store / ".git" / name)
    # 5. objects borrowed through alternates (a ref naming a commit only the store holds)
    borrow = root / "ws-alternates/.git"
    _git(borrow.parent.parent, "init", "-q", "-b", "main", "ws-alternates")
    (borrow / "objects/info/alternates").write_text(f"{store}/.git/objects\n")
    head = _git(store, "rev-parse", "HEAD").strip()
    (borrow / "refs/heads/main").write_text(head + "\n")
    # 6. the same, its alternates line C-quoted (git unquotes it)
    quoted = root / "ws-quoted/.git"
    _git(quoted.parent.parent, "init", "-q", "-b", "main", "ws-quoted")
    (quoted / "objects/info/alternates").write_text(f'"{store}/.git/objects"\n')
    (quoted / "refs/heads/main").write_text(head + "\n")
    # 7. a workspace inside a larger repository: git finds the parent's .git
    _repo(root / "big", {"ws/readme.txt": "inside\n", "site/login": "OUTSIDE-MARK-2\n"})
    for ws, text in (("ws-gitfile", "SECRET-PASS"), ("ws-outside", "OUTSIDE-MARK")):
        assert text in _git(root / ws, "log", "-p")  # the target exists and holds the mark
    for ws in ("ws-commondir", "ws-shared", "ws-alternates", "ws-quoted"):
        assert "SECRET-PASS" in _git(root / ws, "log", "-p")
    assert "OUTSIDE-MARK" in _git(root / "big/ws", "log", "-p")
    return root


# The attack families run on the module's event loop and, on Daytona, on one executor per
# workspace (``daytonas``): a new one per case paid the sandbox's creation and set-up scripts
# before the command. Each case still runs its own command, the repository check included.
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


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    "ws",
    [
        "ws-gitfile",
        "ws-outside",
        "ws-commondir",
        "ws-shared",
        "ws-alternates",
        "ws-quoted",
        "big/ws",
    ],
)
@pytest.mark.parametrize("command", ATTACKS)
@pytest.mark.asyncio(loop_scope="module")
async def test_git_never_reads_a_repository_out_of_reach(
    base: Path, backend: str, ws: str, command: str, daytonas: DaytonaPool
) -> None:
    out = await _run(base, ws, command, backend, daytonas)
    assert [m for m in MARKS if m in out] == [], out


@pytest.mark.parametrize("backend", ["no-bwrap", "daytona"])
@pytest.mark.parametrize(
    ("ws", "reason"),
    [
        ("ws-gitfile", "SensitivePath: git: the repository git would read"),
        ("ws-commondir", "SensitivePath: git: the repository git would read"),
        ("ws-shared", "SensitivePath: git: the repository git would read"),
        ("ws-alternates", "SensitivePath: git: the repository git would read"),
        ("ws-quoted", "PathOutsideWorkspace: git: the repository's objects/info/alternates"),
        ("ws-outside", "PathOutsideWorkspace: git: the repository git would read"),
        ("big/ws", "PathOutsideWorkspace: git: the repository git would read"),
    ],
)
@pytest.mark.asyncio(loop_scope="module")
async def test_the_refusal_says_where_the_repository_is(
    base: Path, backend: str, ws: str, reason: str, daytonas: DaytonaPool
) -> None:
    out = await _run(base, ws, "git log --oneline", backend, daytonas)
    assert out.startswith(reason), out


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_repository_inside_the_workspace_still_answers(
    tmp_path: Path, backend: str
) -> None:
    _repo(tmp_path / "ws", {"src/app.py": "print('app')\n"})
    command = "git log -p --oneline && cd src && git log --oneline -1"
    out = await _run(tmp_path, "ws", command, backend)
    assert "+print('app')" in out, out
    assert out.count("second") == 2, out


def test_alternates_are_read_as_git_reads_them() -> None:
    text = "# borrowed\n\n../../o2/objects\n/abs/objects\n"
    found = alternates("/r/.git/objects", text)
    assert found == ("/r/.git/objects/../../o2/objects", "/abs/objects")
    with pytest.raises(PathOutsideWorkspace, match="quoted"):
        alternates("/r/.git/objects", '"/abs/objects"\n')
