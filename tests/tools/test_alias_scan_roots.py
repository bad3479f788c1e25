"""The hard-link alias scan walks the trees a stage opens, not the texts it is given.

Before a restricted stage runs, the runner looks for other names (hard links) of secrets below
the workspace and below each directory the stage names (``hardlinks.find_aliases``). A word
that is only a text is no tree the program opens: ``awk -F/``'s separator and ``grep``'s
pattern ``/`` name the root directory, and scanning it walked the whole file system (~1 s of
CPU a command). A directory operand outside the workspace is still scanned, and a hard link
to a secret found there is still left out of the walk.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import pytest
from shell_backends import call_tool, restricted_bash, run_restricted

from rho_adapters.local import LocalExecutor, hardlinks


@pytest.fixture
def scanned(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every root the alias scan walks during the test."""
    roots: list[str] = []
    real = hardlinks.find_aliases

    def recording(paths: Sequence[str], *args: object, **kwargs: object) -> hardlinks.Aliases:
        roots.extend(paths)
        return real(paths, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(hardlinks, "find_aliases", recording)
    return roots


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("awk -F/ '{print $2}' a.txt", "y"),
        ("cut -d/ -f3 a.txt", "z"),
        ("grep / a.txt", "x/y/z"),
    ],
)
async def test_a_text_naming_the_root_is_not_scanned(
    tmp_path: Path, scanned: list[str], command: str, expected: str
) -> None:
    (tmp_path / "a.txt").write_text("x/y/z\n")
    out = await run_restricted(str(tmp_path), command, "no-bwrap")
    assert out.splitlines()[0] == expected, out
    assert scanned, "the scan ran"
    workspace = tmp_path.resolve()
    assert all(Path(root).is_relative_to(workspace) for root in scanned), scanned


async def test_a_directory_operand_outside_the_workspace_is_still_scanned(
    tmp_path: Path, scanned: list[str]
) -> None:
    ws, shared, vault = tmp_path / "ws", tmp_path / "shared", tmp_path / "vault"
    for made in (ws, shared, vault):
        made.mkdir()
    (vault / "token.txt").write_text("hunter2\n")
    os.link(vault / "token.txt", shared / "notes.txt")  # another name of the secret
    executor = LocalExecutor(
        str(ws),
        extra_read_roots=(str(shared),),
        secret_locations=(str(vault),),
        sandbox=False,
    )
    out = await call_tool(*restricted_bash(f"grep -r hunter {shared}"), executor)
    assert str(shared.resolve()) in scanned
    # the alias found is a secret location for grep's walk: left out, so nothing matches
    assert "hunter2" not in out
    assert out.startswith("[exit code 1"), out
    (shared / "plain.txt").write_text("hunter the cat\n")  # the walk itself still runs
    out = await call_tool(*restricted_bash(f"grep -r hunter {shared}"), executor)
    assert "plain.txt:hunter the cat" in out, out
    assert "hunter2" not in out
