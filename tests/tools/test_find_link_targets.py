"""find tells nothing about the targets of the links it meets while walking.

Without ``-L`` find does not follow links, but some tests and directives look through one:
``-xtype`` (the target's type), ``-readable``/``-writable``/``-executable`` (access(2) on the
target) and ``-printf``'s ``%Y`` (the target's type, ``N`` when missing). With
``gone -> <outside>/missing``, ``there -> <outside>/x.txt`` and ``dir -> <outside>``,
``find . -printf '%p:%Y'`` printed ``N``, ``f`` and ``d``: whether files out of reach exist
and what they are, which ``stat there`` and ``ls -lL`` are refused for, without bubblewrap
and on Daytona (bubblewrap hides them: every one was ``N``). Now refused, naming the primary
or the directive; ``%y`` (the link's own type) and ``%AY``/``%TY`` (years) still print.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from shell_backends import BACKENDS, run_restricted

ATTACKS = {
    "find . -name 'l-*' -printf '%p:%Y\\n'": "-printf's %Y follows",
    "find . -name 'l-*' -printf '%p:%-3Y\\n'": "-printf's %Y follows",
    "find . -name 'l-*' -xtype f": "-xtype follows",
    "find . -name 'l-*' -readable": "-readable follows",
    "find . -name 'l-*' -not -writable": "-writable follows",
    "find . -name 'l-*' -executable": "-executable follows",
}


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("findlinks")
    (root / "outside").mkdir()
    (root / "outside/x.txt").write_text("x\n")
    ws = root / "ws"
    ws.mkdir()
    for name, target in (("gone", "missing"), ("there", "x.txt"), ("dir", "")):
        (ws / f"l-{name}").symlink_to(root / "outside" / target)
    plain = subprocess.run(
        ["find", ".", "-name", "l-*", "-printf", "%p:%Y\n"], cwd=ws, capture_output=True, text=True
    )  # the attack reaches: the targets' types differ
    assert sorted(plain.stdout.split()) == ["./l-dir:d", "./l-gone:N", "./l-there:f"]
    return ws


@pytest.mark.parametrize("backend", BACKENDS)
async def test_find_looks_through_no_link(workspace: Path, backend: str) -> None:
    for command, refusal in ATTACKS.items():
        out = await run_restricted(str(workspace), command, backend)
        assert f"find: {refusal}" in out, (command, out)
    kept = "find . -name 'l-*' -printf '%p:%y:%AY:%%Y\\n'"
    out = await run_restricted(str(workspace), kept, backend)
    assert "./l-there:l:" in out, out
    assert ":%Y" in out, out
