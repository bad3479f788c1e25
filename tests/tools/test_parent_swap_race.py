"""A parent of the workspace swapped for a link while a command starts never starts it (or
shows it) elsewhere (redshell26).

The executor walks the working directory from ``/`` without following a link before each
command, but the process took it by path again: ``Popen(cwd=path)`` and bubblewrap's
``--ro-bind-try ROOT ROOT`` followed ``~/code -> /elsewhere`` made after the walk, so ``cat
f.txt`` printed ``/elsewhere/app/f.txt`` (locally) or the sandbox showed ``/elsewhere/app`` as
the workspace. Now the walk's own descriptors are what the process starts in and binds.

A real process swaps the parent back and forth while commands run; whatever the interleaving,
each command prints the workspace's file or is refused, so the test cannot pass by luck with
the fix in place (without it, 1 to 14 in 60 printed the other file here, on each backend;
the rest were refused by the walk before each command)."""

from __future__ import annotations

from pathlib import Path

import pytest
from shell_backends import call_tool, restricted_bash
from swap_support import LOCAL_SANDBOXES, swapping

from rho_adapters.local import LocalExecutor


@pytest.mark.asyncio
@pytest.mark.parametrize("sandbox", LOCAL_SANDBOXES)
async def test_a_parent_swapped_for_a_link_mid_command_is_never_followed(
    tmp_path: Path, sandbox: bool
) -> None:
    for place, words in (("code", "IN-THE-WORKSPACE"), ("elsewhere", "K-SWAP26-ELSEWHERE")):
        (tmp_path / place / "app").mkdir(parents=True)
        (tmp_path / place / "app/f.txt").write_text(f"{words}\n")
    (tmp_path / "link").symlink_to(tmp_path / "elsewhere")
    executor = LocalExecutor(str(tmp_path / "code/app"), sandbox=sandbox)
    answers: list[str] = []
    with swapping(tmp_path / "code", tmp_path / "link"):
        for _ in range(60):
            answers.append(await call_tool(*restricted_bash("cat f.txt"), executor))
    leaked = [a for a in answers if "K-SWAP26-ELSEWHERE" in a]
    assert not leaked, leaked[:2]
    if (tmp_path / "code").is_symlink():  # stopped exchanged: put the directory back
        (tmp_path / "code").rename(tmp_path / "swapped")
        (tmp_path / "link").rename(tmp_path / "code")
    assert "IN-THE-WORKSPACE" in await call_tool(*restricted_bash("cat f.txt"), executor)
