"""A secret's copies under the marks varshell18b did not know.

Before redshell19 each of these printed the secret without bubblewrap and on Daytona, and
under bubblewrap too (it masks what the policy names): ``cat id_rsa.~1~`` (GNU ``cp
--backup=numbered``'s, emacs' numbered backup), ``cat dot/.ssh.~2~/config`` (a directory
backed up so), ``cat id_ed25519.bak2`` (a backup suffix given a number), ``cat .netrc.new``
(a replacement's copy), ``cat .pgpass.ucf-old`` and ``cat credentials.pacsave`` (ucf's and
pacman's copies of a configuration file; ``.ucf-old`` was read as ``.ucf`` plus ``-old``),
``cat server.pem.crdownload`` (a download's part), ``cat id_rsa.b64`` (an encoder's copy),
``cat .netrc.rej`` (a patch's rejected hunks), ``cat .id_ed25519.kate-swp`` (Kate's swap
file), ``cat .netrc,v`` (an RCS file: every revision, whole) and ``cat 'Copy (2) of
.pgpass'`` (older Windows' second copy); ``grep -ra`` and ``rg -a`` walked into them and an
``xargs`` item reached them. Ordinary files under the same marks stay readable.
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

COPIES = {
    "id_rsa.~1~": "NUMBERED",
    "dot/.ssh.~2~/config": "SSHNUM",
    "id_ed25519.bak2": "BAKNUM",
    ".netrc.new": "NEW",
    ".pgpass.ucf-old": "UCF",
    "credentials.pacsave": "PACMAN",
    "server.pem.crdownload": "PART",
    "id_rsa.b64": "BASE64",
    ".netrc.rej": "REJECT",
    ".id_ed25519.kate-swp": "KATE",
    ".netrc,v": "RCS",
    "Copy (2) of .pgpass": "NTHCOPY",
}
ORDINARY = {"notes.txt.new": "NOTES-NEW", "app.log.~1~": "LOG-NUM", "report.txt,v": "RCS-OK"}
MARKS = tuple(f"COPY-{mark}" for mark in COPIES.values())

# One sandbox for a case's commands, which leave its workspace as it was: a new one per
# command paid its creation and set-up scripts every time (about 90 ms of CPU).
sandboxes = pytest_asyncio.fixture(case_pool)


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("marks") / "ws"
    for rel, mark in [*((r, f"COPY-{m}") for r, m in COPIES.items()), *ORDINARY.items()]:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(f"password {mark}\n")
    return root


def _quoted(rel: str) -> str:
    return "'" + rel + "'"


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_secrets_numbered_packaged_or_partial_copy_is_never_read(
    ws: Path, backend: str, sandboxes: DaytonaPool
) -> None:
    cat_all = "cat " + " ".join(_quoted(rel) for rel in COPIES)
    plain = subprocess.run(cat_all, shell=True, cwd=ws, capture_output=True, text=True).stdout
    assert all(m in plain for m in MARKS), plain  # each attack reaches its mark
    commands = [f"cat {_quoted(rel)}" for rel in COPIES]
    commands += ["grep -ra COPY- .", "rg -a COPY-"]
    items = " ".join(_quoted(rel) for rel in ("id_rsa.~1~", "id_ed25519.bak2", ".netrc,v"))
    commands.append(f"printf '%s\\n' {items} 'Copy (2) of .pgpass' | xargs -d '\\n' cat")
    for command in commands:
        out = await run_restricted(str(ws), command, backend, sandboxes)
        assert [m for m in MARKS if m in out] == [], (command, out)
        if command.startswith("cat "):
            assert "secret" in out, (command, out)
    out = await run_restricted(
        str(ws), "cat " + " ".join(map(_quoted, ORDINARY)), backend, sandboxes
    )
    assert all(m in out for m in ORDINARY.values()), out
    executor = reading_outside(backend, str(ws))
    try:
        out = await call_tool(ReadHandler(), {"path": "Copy (2) of .pgpass"}, executor)
        assert "is a copy of a secret" in out, out
    finally:
        await executor.aclose()
