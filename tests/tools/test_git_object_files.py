"""The files git opens by itself in its object directory are judged like its other files.

redshell15 (08c91ff) judged every file with several names in a repository's directories as a
possible alias of a secret, but left ``objects`` out whole: a local clone's objects are hard
links, and no object is a text git prints. Yet ``objects/info/alternates`` is text git reads by
itself and quotes: hard-linked to the workspace's ``.env``, every history reader printed
"error: object directory .git/objects/API_KEY=SECRET-ENV-1 does not exist" without bubblewrap
and on Daytona; an ``objects`` directory that is a link within the workspace (walked for its
links only) did the same. Now only what is named as object data (loose objects, packs and
their indexes, a multi-pack index: ``git_repo.OBJECT_DATA``) is left out, in every directory
git opens by itself. Every attack runs on a real repository, checked first with a plain git
to print the mark.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import pytest_asyncio
from shell_backends import BACKENDS, DaytonaPool, daytona_pool
from test_git_repository_files import _git, _repo, _run, _workspace

from rho_domain.shell.git_repo import is_object_data

MARK = "SECRET-ENV"


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("gitobjects")
    (root / "home").mkdir()
    # 1. objects/info/alternates, a hard link of the workspace's .env
    ws = _workspace(root, "ws-alternates-hard")
    os.link(ws / ".env", ws / ".git/objects/info/alternates")
    # 2. the same in an objects directory that is a link within the workspace
    ws = _workspace(root, "ws-objects-link")
    (ws / ".git/objects").rename(ws / "objects-kept")
    (ws / ".git/objects").symlink_to(ws / "objects-kept")
    os.link(ws / ".env", ws / "objects-kept/info/alternates")
    # 3. a local clone (its loose objects and packs hard links of the source's), and a .env
    source = _repo(root / "source", {"src/app.py": "print('app')\n"})
    _git(source, "repack", "-adq")
    (source / "src/app.py").write_text("print('two')\n")
    _git(source, "commit", "-qam", "second")
    _git(root, "clone", "-q", "--local", str(source), str(root / "ws-clone"))
    (root / "ws-clone/.env").write_text("API_KEY=SECRET-ENV-1\n")
    linked = subprocess.run(
        ["find", str(root / "ws-clone/.git/objects"), "-type", "f", "-links", "+1"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert any("/pack/" in p for p in linked), linked
    assert any("/pack/" not in p for p in linked), linked
    # The mark is there and a plain git prints it.
    assert MARK in _git(root / "ws-alternates-hard", "log")
    assert MARK in _git(root / "ws-objects-link", "log")
    return root


# On Daytona one executor per workspace (``daytonas``), as a session's commands run: a new
# one per case paid the sandbox's creation and set-up scripts (9 sandboxes, now 3); no command
# here changes its workspace, and each is still its own, the repository check included.
daytonas = pytest_asyncio.fixture(scope="module", loop_scope="module")(daytona_pool)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("ws", ["ws-alternates-hard", "ws-objects-link"])
@pytest.mark.parametrize("command", ["git log --oneline", "git status", "git rev-list HEAD"])
@pytest.mark.asyncio(loop_scope="module")
async def test_git_never_prints_an_alternates_file_hard_linked_to_a_secret(
    base: Path, backend: str, ws: str, command: str, daytonas: DaytonaPool
) -> None:
    out = await _run(base, ws, command, backend, daytonas)
    assert MARK not in out, out


@pytest.mark.parametrize("backend", ["no-bwrap", "daytona"])
@pytest.mark.parametrize("ws", ["ws-alternates-hard", "ws-objects-link"])
@pytest.mark.asyncio(loop_scope="module")
async def test_the_refusal_names_the_alternates_file(
    base: Path, backend: str, ws: str, daytonas: DaytonaPool
) -> None:
    out = await _run(base, ws, "git log --oneline", backend, daytonas)
    assert out.startswith("SensitivePath: git: the repository's file "), out
    assert "info/alternates is another name (a hard link) of a secrets file" in out, out


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.asyncio(loop_scope="module")
async def test_a_local_clone_whose_objects_are_hard_links_still_answers(
    base: Path, backend: str, daytonas: DaytonaPool
) -> None:
    command = "git log --oneline && git show --stat HEAD~1"
    out = await _run(base, "ws-clone", command, backend, daytonas)
    assert "second" in out, out
    assert "first" in out, out


def test_object_data_is_named_as_git_names_it() -> None:
    hex40, hex64 = "0123456789abcdef" * 2 + "01234567", "0123456789abcdef" * 4
    assert is_object_data(f"/r/.git/objects/{hex40[:2]}/{hex40[2:]}")
    assert is_object_data(f"/r/.git/objects/{hex64[:2]}/{hex64[2:]}")
    assert is_object_data(f"/r/.git/objects/pack/pack-{hex40}.pack")
    assert is_object_data(f"/r/objects-kept/pack/pack-{hex64}.idx")
    assert is_object_data("/r/.git/objects/pack/multi-pack-index")
    assert not is_object_data("/r/.git/objects/info/alternates")
    assert not is_object_data("/r/.git/objects/info/commit-graphs/commit-graph-chain")
    assert not is_object_data(f"/r/.git/objects/pack/pack-{hex40}.pack.note")
    assert not is_object_data(f"/r/.git/objects/{hex40[:2]}/{hex40[2:]}x")
