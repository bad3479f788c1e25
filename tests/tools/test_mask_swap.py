"""A directory swapped for a link while the sandbox is scanned and mounted never shows a
secret unmasked (redfiles28).

The sandbox's scan listed the workspace by path and bubblewrap mounts each mask at a path,
looked up when it mounts. A directory holding a ``.env`` (and ``notes``, a hard link of it)
exchanged with a relative link to another directory (``renameat2`` in a loop): the scan,
meeting the link under both names, walked the real directory under neither (7 of 60
commands printed it with the argv checks off), or took the hard link's inode by path again
from the other directory; the masks, found right, were mounted through the link onto the
other directory's files (42 of 100 with the scan mended and no check); and ``cat
sub/notes``, judged while ``sub`` was the link, printed it with the argv checks on. The scan
also resolved the roots again by path: a parent of the workspace swapped for a link made it
scan, and bind by path, the other tree. Now each directory is listed from one descriptor and
must be the one its parent listed (else the walk starts again), the roots are the executor's
own, and before the command a check inside the sandbox stands in each directory holding
masks and finds each mask in place there, running nothing otherwise (``mask_check.py``).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from shell_backends import call_tool, restricted_bash
from swap_support import swapping

from rho_adapters.local import LocalExecutor
from rho_adapters.local.executor import sandbox_available
from rho_adapters.local.runner import CommandRunner
from rho_domain.errors import ExecutorError, RhoError
from rho_domain.reach import OutsideReads
from rho_domain.secrets import SecretPolicy

pytestmark = pytest.mark.skipif(not sandbox_available(), reason="no bubblewrap")

SECRET = "K-MASK28-SECRET"
TRIES = 40


@pytest.fixture
def base() -> Iterator[Path]:
    """A directory of ``/var/tmp`` (the sandbox shows it under ``allow``; ``/tmp`` is the
    sandbox's own)."""
    where = Path(tempfile.mkdtemp(dir="/var/tmp"))
    try:
        yield where
    finally:
        shutil.rmtree(where, ignore_errors=True)


def _pair(real: Path, decoy: Path) -> None:
    """``real`` holds the secret as ``.env`` and its hard link ``notes``; ``decoy`` the same
    names with nothing secret in them, so a mask that lands there is mounted without error."""
    for where, words in ((real, SECRET), (decoy, "DECOY")):
        where.mkdir(parents=True)
        (where / ".env").write_text(f"{words}\n")
        if where == real:
            (where / "notes").hardlink_to(where / ".env")
        else:
            (where / "notes").write_text("DECOY-NOTES\n")


@pytest.mark.asyncio
async def test_a_subdirectory_swapped_while_masks_mount_shows_no_secret(base: Path) -> None:
    _pair(base / "sub", base / "decoy")
    (base / "alt").symlink_to("decoy")  # relative: bubblewrap follows it in the sandbox
    executor = LocalExecutor(str(base), sandbox=True)
    answers = []
    with swapping(base / "sub", base / "alt"):
        for _ in range(TRIES):
            answers.append(
                await _unchecked(
                    executor, "cat sub/.env alt/.env sub/notes alt/notes; echo RAN", base
                )
            )
            answers.append(await call_tool(*restricted_bash("cat sub/notes"), executor))
    _no_secret(answers)


@pytest.mark.asyncio
async def test_under_allow_a_parent_swapped_while_masks_mount_shows_no_secret(
    base: Path,
) -> None:
    _pair(base / "code/app", base / "elsewhere/app")
    (base / "link").symlink_to("elsewhere")
    executor = LocalExecutor(str(base / "code/app"), sandbox=True, read_outside=OutsideReads.ALLOW)
    # the executor's own checks before a command refuse most of these: none may show it
    answers = [await _unchecked(executor, "cat .env notes; echo RAN", base / "code/app")]
    with swapping(base / "code", base / "link"):
        for _ in range(TRIES):
            answers.append(
                await _unchecked(executor, "cat .env notes; echo RAN", base / "code/app")
            )
    _no_secret(answers)


def test_a_root_whose_parent_is_now_a_link_is_never_scanned_through_it(base: Path) -> None:
    _pair(base / "code/app", base / "elsewhere/app")
    root = str(base / "code/app")
    runner = CommandRunner(
        ("/usr/bin", "/bin"), {}, sandbox=True, visible_roots=(root,), policy=SecretPolicy()
    )
    assert any(root in arg for arg in runner._bwrap_args(root))
    (base / "code").rename(base / "old")  # the swap, made between the executor's checks
    (base / "code").symlink_to(base / "elsewhere")
    with pytest.raises(ExecutorError, match="'code' on its path is now a symbolic link"):
        runner._bwrap_args(root)


async def _unchecked(executor: LocalExecutor, line: str, cwd: Path) -> str:
    """``line`` run by ``sh`` in the sandbox alone, or the refusal the executor raised (a
    directory that is a link, or kept changing, when the command is judged)."""
    try:
        done = await executor.run_unchecked(["/bin/sh", "-c", line], cwd=str(cwd))
    except RhoError as exc:  # a refusal (a race in the executor's own walk may say EINVAL)
        return f"{type(exc).__name__}: {exc}"
    return done.output


def _no_secret(answers: list[str]) -> None:
    """No answer shows the secret (a refusal, naming what moved, is an answer too); what
    the masks' check stopped ran nothing; some commands ran."""
    leaked = [a for a in answers if SECRET in a]
    assert not leaked, leaked[:2]
    checked = [a for a in answers if "changed while the sandbox hid them" in a]
    assert all("RAN" not in a for a in checked)  # the masks' check ran nothing
    assert any("RAN" in a for a in answers)  # commands ran


@pytest.mark.asyncio
async def test_without_a_stat_to_check_masks_with_nothing_runs(
    base: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The masks' check runs the system's ``stat``; a system without one refuses the command
    naming what to install, where it ran it with the masks unchecked."""
    from rho_adapters.local import held_dirs

    _pair(base / "sub", base / "decoy")
    executor = LocalExecutor(str(base), sandbox=True)
    monkeypatch.setattr(held_dirs, "_STATS", (str(base / "no-stat"),))
    answer = await _unchecked(executor, "cat sub/.env; echo RAN", base)
    assert "secrets it hides" in answer
    assert "install coreutils" in answer
    assert "RAN" not in answer
    assert SECRET not in answer
