"""The other names a secret's copy has: a rotation's number, emacs' autosave, a file
manager's copy mark, the other spellings of a backup's or an archive's suffix.

Before varshell18b the twin rule knew ``.bak``, ``.gz``, ``~``... but not these: ``cat
id_rsa.1`` (logrotate's, or ``cp --backup=numbered``'s), ``cat .netrc-20240101`` (logrotate's
dateext), ``cat 'keys/#id_ed25519#'`` (emacs' autosave), ``cat '.netrc (copy)'`` (GNOME's
copy), ``cat 'credentials (2).json'`` (a download's), ``cat id_ed25519.bkp``, ``zcat
server.pem.1.gz`` (a rotation's compressed copy), ``cat 'dot/.ssh.1/config'``, ``cat
dot/.kube-old/config`` (a kubeconfig's token), ``cat .env_old`` and ``cat 'Copy of
.pgpass'`` (older Windows') printed the
secret without bubblewrap and on Daytona, and under bubblewrap too (it masks what the policy
names); ``grep -ra`` and ``rg -a`` walked into them. Now ``secret_twins.name_stems`` takes
each off, in the policy, the xargs guard's ``sh`` and Daytona's scan. Ordinary rotated logs
and copies, and templates, stay readable.
"""

from __future__ import annotations

import gzip
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

FILES = {
    "id_rsa.1": b"COPY-ROTATED\n",
    ".netrc-20240101": b"machine x password COPY-DATEEXT\n",
    "keys/#id_ed25519#": b"COPY-EMACS\n",
    ".netrc (copy)": b"machine x password COPY-GNOME\n",
    "credentials (2).json": b'{"key": "COPY-DOWNLOAD"}\n',
    "id_ed25519.bkp": b"COPY-BKP\n",
    "server.pem.1.gz": gzip.compress(b"COPY-PEMGZ\n"),
    "dot/.ssh.1/config": b"Host x # COPY-SSHDIR\n",
    "dot/.kube-old/config": b"token: COPY-KUBEOLD\n",
    ".env_old": b"API_KEY=COPY-ENVOLD\n",
    "Copy of .pgpass": b"db:5432:*:u:COPY-COPYOF\n",
    "logs/app.log.1": b"LOG-ROTATED\n",
    "notes (copy).md": b"NOTES-COPY\n",
    ".env.sample": b"TEMPLATE=1\n",
}
_KINDS = "ROTATED DATEEXT EMACS GNOME DOWNLOAD BKP PEMGZ SSHDIR KUBEOLD ENVOLD COPYOF"
MARKS = tuple(f"COPY-{kind}" for kind in _KINDS.split(" "))
ATTACKS = {
    "cat id_rsa.1": "'id_rsa.1' names a secrets file",
    "cat .netrc-20240101": "names a secrets file",
    "cat 'keys/#id_ed25519#'": "names a secrets file",
    "cat '.netrc (copy)'": "names a secrets file",
    "cat 'credentials (2).json'": "/credentials.json' is a secrets file",
    "cat id_ed25519.bkp": "names a secrets file",
    "zcat server.pem.1.gz": "/server.pem' is a secrets file",
    "cat dot/.ssh.1/config": "/.ssh/config' is a secret location",
    "cat dot/.kube-old/config": "/.kube/config' is a secret location",
    "cat .env_old": "'.env_old' names a secrets file",
    "cat 'Copy of .pgpass'": "'Copy of .pgpass' names a secrets file",
    "grep -ra COPY- .": "",
    "rg -a COPY-": "",
    "printf '%s\\n' 'id_rsa.1' '#x#' | xargs -d '\\n' cat": "",  # skipped, or hidden
}

# One sandbox for a case's commands, which leave its workspace as it was: a new one per
# command paid its creation and set-up scripts every time (about 90 ms of CPU).
sandboxes = pytest_asyncio.fixture(case_pool)


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("copies") / "ws"
    for rel, data in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    return root


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_secrets_rotated_autosaved_or_file_manager_copy_is_never_read(
    ws: Path, backend: str, sandboxes: DaytonaPool
) -> None:
    plain = subprocess.run(
        "cat id_rsa.1 .netrc-20240101 'keys/#id_ed25519#' '.netrc (copy)' 'credentials (2).json'"
        " id_ed25519.bkp dot/.ssh.1/config dot/.kube-old/config .env_old 'Copy of .pgpass';"
        " zcat server.pem.1.gz",
        shell=True,
        cwd=ws,
        capture_output=True,
        text=True,
    ).stdout
    assert all(m in plain for m in MARKS), plain  # each attack reaches its mark
    for command, refusal in ATTACKS.items():
        out = await run_restricted(str(ws), command, backend, sandboxes)
        assert refusal in out, (command, out)
        assert [m for m in MARKS if m in out] == [], (command, out)
    out = await run_restricted(
        str(ws), "cat logs/app.log.1 'notes (copy).md' .env.sample", backend, sandboxes
    )
    assert all(m in out for m in ("LOG-ROTATED", "NOTES-COPY", "TEMPLATE=1")), out
    executor = reading_outside(backend, str(ws))
    try:
        out = await call_tool(ReadHandler(), {"path": "credentials (2).json"}, executor)
        assert "is a copy of a secret" in out, out
    finally:
        await executor.aclose()
