"""ls and tree tell nothing about the targets of the links they meet while walking.

With ``l-dir -> <outside>``, ``l-gone -> <outside>/missing``, ``l-there -> <outside>/x.txt``,
``ls -lF`` printed ``l-dir -> <outside>/`` (``--indicator-style=file-type`` and ``--classify``
alike), ``ls --group-directories-first`` sorted ``l-dir`` before ``a-file``, ``tree`` counted
``2 directories`` for a workspace with one (``-J``, ``-X`` too), ``tree -d`` listed ``l-dir``
alone, ``--prune`` dropped it, ``-F`` marked it ``/``, ``--dirsfirst`` sorted it first, ``-H``
linked ``l-dir/``: without bubblewrap and on Daytona (bubblewrap hides the targets). ``-C``
coloured ``l-gone`` as an orphan (the tool drops escapes today; refused all the same). Each is
refused naming the option; tree's report is left out.

The ``list`` tool on Daytona listed the daemon's ``GET /files``, Go's ``os.Stat`` of each
entry: ``l-there`` as a file of ``x.txt``'s size and time, ``l-dir`` as a directory, and
``l-gone`` not at all (whether a file outside exists). It lists by ``find -P`` now, as locally.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import httpx
import pytest
from shell_backends import BACKENDS, call_tool, run_restricted

from rho_adapters.daytona import DaytonaExecutor
from rho_adapters.fakes.daytona import TOOLBOX_URL, FakeDaytona
from rho_adapters.local import LocalExecutor
from rho_domain.tools.listing import ListHandler

ATTACKS = {
    "ls -lF": "ls: -F (--classify) looks at the target",
    "ls -l --classify": "ls: --classify looks at the target",
    "ls -l --indicator-style=file-type": "ls: --indicator-style=file-type looks",
    "ls -l --indicator-style=classify": "ls: --indicator-style=classify looks",
    "ls --group-directories-first": "ls: --group-directories-first looks",
    "tree -d": "tree: -d looks at the target",
    "tree --prune": "tree: --prune looks",
    "tree -F": "tree: -F looks",
    "tree -C": "tree: -C looks",
    "tree --dirsfirst": "tree: --dirsfirst looks",
    "tree -H .": "tree: -H looks",
}


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("listlinks")
    (root / "outside").mkdir()
    (root / "outside/x.txt").write_text("x" * 4321)
    ws = root / "ws"
    ws.mkdir()
    (ws / "a-file").write_text("a\n")
    for name, target in (("gone", "missing"), ("there", "x.txt"), ("dir", "")):
        (ws / f"l-{name}").symlink_to(root / "outside" / target)
    plain = subprocess.run(["tree", "-d", "--noreport"], cwd=ws, capture_output=True, text=True)
    assert "l-dir" in plain.stdout  # the attack reaches: tree tells the link to a directory
    return ws


@pytest.mark.parametrize("backend", BACKENDS)
async def test_ls_and_tree_look_through_no_link(workspace: Path, backend: str) -> None:
    for command, refusal in ATTACKS.items():
        out = await run_restricted(str(workspace), command, backend)
        assert refusal in out, (command, out)
    kept = await run_restricted(
        str(workspace), "ls -lp; tree -a; tree -P 'l-*' -J; ls -l --color=always", backend
    )
    for shown in ("l-there ->", "l-dir ->"):
        assert shown in kept, kept
    for hidden in ("/\n", "directories", "report"):
        assert hidden not in kept, kept


async def test_the_daytona_list_tool_tells_nothing_of_a_link_s_target(workspace: Path) -> None:
    local = await call_tool(ListHandler(), {}, LocalExecutor(str(workspace), sandbox=False))
    fake = FakeDaytona(polls_until_started=0)
    executor = DaytonaExecutor(fake.settings(working_dir=str(workspace)), transport=fake.transport)
    try:
        shown = await call_tool(ListHandler(), {}, executor)
        async with httpx.AsyncClient(transport=fake.transport) as client:
            answer = await client.get(
                f"{TOOLBOX_URL}/{executor.sandbox_id}/files",
                params={"path": str(workspace)},
                headers={"authorization": f"Bearer {fake.api_key}"},
            )
    finally:
        await executor.aclose()
    daemon = {entry["name"]: entry for entry in answer.json()}
    # what the daemon's own listing tells: the target's size and kind, no dangling link
    assert (daemon["l-there"]["size"], daemon["l-dir"]["isDir"]) == (4321, True)
    assert "l-gone" not in daemon
    assert shown == local, (shown, local)
    for line in ("link          -  l-gone -> ", "link          -  l-dir -> "):
        assert line in shown, shown
    assert "4.2K" not in shown, shown
    assert not [line for line in shown.splitlines() if line.startswith("dir")], shown
