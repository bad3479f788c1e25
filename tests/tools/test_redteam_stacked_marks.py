"""A secret's copy under two marks stacked, or under a mark on a directory above it.

Each name below is a secret's copy by the policy (``secrets.twin_stems``), which takes marks
off one at a time and off every directory of a path: ``id_rsa.bak~``, ``.netrc.orig.gz``,
``id_ed25519.1.bak``, ``id_rsa (copy).bak``, ``.pgpass.~1~.gz``, ``.aws.bak/credentials``,
``.config.old/gcloud/credentials.db``, ``.kube.orig.bak/config``,
``.local.bak/share/keyrings/login.keyring``. ``cat``, ``grep -r``, ``rg``, an ``xargs`` item,
the ``read`` tool and a listing walk must each keep away from them on every backend.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import pytest_asyncio
from shell_backends import (
    BACKENDS,
    DaytonaPool,
    call_tool,
    case_pool,
    reading_outside,
    run_restricted,
)

from rho_domain.tools.read import ReadHandler

STACKED = (
    "id_rsa.bak~",
    ".netrc.orig.gz",
    "id_ed25519.1.bak",
    "id_rsa (copy).bak",
    ".pgpass.~1~.gz",
    "a/.aws.bak/credentials",
    "b/.config.old/gcloud/credentials.db",
    "c/.kube.orig.bak/config",
    "d/.local.bak/share/keyrings/login.keyring",
    "e/.ssh.bak~/known_hosts",
    "f/.docker-old/config.json",
)

# One sandbox for a case's commands, which leave its workspace as it was: a new one per
# command paid its creation and set-up scripts every time (about 90 ms of CPU).
sandboxes = pytest_asyncio.fixture(case_pool)


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("stacked") / "ws"
    for i, rel in enumerate(STACKED):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(f"password STACKED-{i}-MARK\n")
    (root / "notes.bak~").write_text("password ORDINARY-MARK\n")
    return root


def _q(rel: str) -> str:
    return "'" + rel + "'"


@pytest.mark.parametrize("backend", BACKENDS)
async def test_stacked_and_parent_marks_are_copies_of_the_secret(
    ws: Path, backend: str, sandboxes: DaytonaPool
) -> None:
    plain = subprocess.run(["grep", "-ra", "MARK", "."], cwd=ws, capture_output=True, text=True)
    assert plain.stdout.count("STACKED-") == len(STACKED), plain.stdout  # each attack reaches
    commands = [f"cat {_q(rel)}" for rel in STACKED]
    commands += ["grep -ra MARK .", "rg -a -uu MARK", "find . -type f", "ls -AR", "tree -a"]
    commands.append("printf '%s\\n' " + " ".join(map(_q, STACKED)) + " | xargs -d '\\n' cat")
    for command in commands:
        out = await run_restricted(str(ws), command, backend, sandboxes)
        assert "STACKED-" not in out, (command, out)
        if command.startswith("cat "):
            assert "secret" in out, (command, out)
        if not command.startswith(("find", "ls", "tree")):
            continue  # its refusal or the guard's notice names the file
        inside = ("known_hosts", "credentials.db", "login.keyring", "aws.bak/credentials")
        assert [name for name in inside if name in out] == [], (command, out)
    out = await run_restricted(str(ws), "grep -r MARK .", backend, sandboxes)
    assert "ORDINARY-MARK" in out, out
    executor = reading_outside(backend, str(ws))
    try:
        for rel in STACKED:
            out = await call_tool(ReadHandler(), {"path": rel}, executor)
            assert "secret" in out, (rel, out)
    finally:
        await executor.aclose()
