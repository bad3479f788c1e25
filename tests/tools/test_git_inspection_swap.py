"""git's inspections before a stage (its discovery, the type of each object named by id) run
where the stage runs, and an object they could not type is refused (redfiles27).

``git cat-file -p <id>`` of a committed ``.env``'s blob is refused: the executor asks git the
object's type first. That question ran by path (``Popen(cwd=path)``, bubblewrap binding the
workspace by path) while the stage ran in the directories the walk opened, and an answer
without a type passed: a parent swapped for a link to a directory holding no repository
made git answer nothing, and the stage, started after the swap back, printed the secret (2
of 200 commands here without bubblewrap; the interleaving is rare, so the loop below guards
"whatever the interleaving" and the tests after it fail without the fix every time). Now
the inspections start as the stage does (``held_dirs.run_held``) and an object without a
type is refused. On Daytona a git that answers nothing fails the sandbox's script, which
refuses the command (an ``ExecutorError``): it did not fail open.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from shell_backends import call_tool, restricted_bash
from swap_support import LOCAL_SANDBOXES, swapping

from rho_adapters.local import LocalExecutor
from rho_adapters.local.stage_argv import _refuse_blobs
from rho_domain.errors import SensitivePath
from rho_domain.shell.git_objects import objects_refusal

_SECRET = "K-GITSWAP27-SECRET"


def _repository(app: Path) -> str:
    """``app`` as a repository with a committed ``.env``; its blob's id."""
    app.mkdir(parents=True)
    (app / ".env").write_text(f"TOKEN={_SECRET}\n")
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "HOME": str(app)}
    env |= {"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin"}
    for argv in (["init", "-q"], ["add", ".env"], ["commit", "-qm", "x"]):
        subprocess.run(["git", *argv], cwd=app, env=env, check=True)
    done = subprocess.run(["git", "hash-object", ".env"], cwd=app, capture_output=True, text=True)
    return done.stdout.strip()


@pytest.mark.asyncio
@pytest.mark.parametrize("sandbox", LOCAL_SANDBOXES)
async def test_a_blob_id_stays_refused_while_a_parent_is_swapped(
    tmp_path: Path, sandbox: bool
) -> None:
    blob = _repository(tmp_path / "code/app")
    (tmp_path / "elsewhere/app").mkdir(parents=True)  # no repository there
    (tmp_path / "link").symlink_to(tmp_path / "elsewhere")
    executor = LocalExecutor(str(tmp_path / "code/app"), sandbox=sandbox)
    show = restricted_bash(f"git cat-file -p {blob}")
    assert "content named by id" in await call_tool(*show, executor)
    answers: list[str] = []
    with swapping(tmp_path / "code", tmp_path / "link"):
        for _ in range(60):
            answers.append(await call_tool(*show, executor))
    leaked = [a for a in answers if _SECRET in a]
    assert not leaked, leaked[:2]


def test_an_object_git_gave_no_type_for_is_refused() -> None:
    argv = ("git", "show", "HEAD", "v1")
    assert objects_refusal(argv, ("HEAD", "v1"), "commit\ncommit\n") is None
    assert objects_refusal(argv, ("HEAD", "v1"), "commit\nv1 missing\n") is None
    for answer in ("", "commit\n"):
        reason = objects_refusal(argv, ("HEAD", "v1"), answer)
        assert reason is not None
        assert "could not be checked" in reason


def test_locally_an_object_git_could_not_type_is_refused(tmp_path: Path) -> None:
    blob = _repository(tmp_path / "app")
    runner = LocalExecutor(str(tmp_path / "app"), sandbox=False)._runner
    argv = ("git", "cat-file", "-p", blob)
    with pytest.raises(SensitivePath, match="content named by id"):
        _refuse_blobs(runner, argv, (blob,), str(tmp_path / "app"))
    # git finds no repository where it looks (a parent swapped meanwhile): no answer
    nowhere = {"GIT_DIR": str(tmp_path / "gone/.git")}
    with pytest.raises(SensitivePath, match="could not be checked"):
        _refuse_blobs(runner, argv, (blob,), str(tmp_path / "app"), (), nowhere)
