"""A secret's copy under the name a compressor, a backup or an editor gives it is a secret.

Before redshell18 the name rules judged the name as it is: ``zcat id_rsa.gz`` printed the
key, and so did ``cat id_rsa.bak``, ``zcat .netrc.gz``, ``cat server.pem~`` and the ``read``
tool on ``credentials.bak``, ``head .docker/config.json.orig`` the docker login, ``cat
.ssh.bak/config`` (a directory's copy) an SSH config and ``cat .id_rsa.swp`` (vim's swap) a
key, without bubblewrap and on Daytona, and most of them under bubblewrap too (it masks what
the policy names, which named none). Now
every rule judges the path with each of ``secret_twins.TWIN_SUFFIXES`` taken off its name in
turn, in Python and in the xargs guard's ``sh`` (``test_secrets_policy``'s differential holds
the two together); a walker skips the twins the scan finds (on Daytona, its ``find``). An
ordinary compressed log and an SSH public key's backup stay readable.
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
    "id_rsa.gz": gzip.compress(b"TWIN-IDGZ\n"),
    ".netrc.gz": gzip.compress(b"TWIN-NETRC\n"),
    "keys/id_ed25519.bak": b"TWIN-IDBAK\n",
    "server.pem~": b"TWIN-PEM\n",
    "credentials.bak": b"TWIN-CRED\n",
    "dot/.docker/config.json.orig": b'{"auths": "TWIN-DOCKER"}\n',
    "dot/.bundle/config.bak": b"BUNDLE_GEMS__EXAMPLE__COM: TWIN-BUNDLE\n",
    "dot/.ssh.bak/config": b"Host x # TWIN-SSHDIR\n",
    "dot/.ssh.tar.gz": gzip.compress(b".ssh/id_rsa TWIN-SSHTAR\n"),
    "vim/.id_rsa.swp": b"b0VIM 9.0 TWIN-SWAP\n",
    "logs/app.log.gz": gzip.compress(b"LOG-LINE\n"),
    "id_rsa.pub.bak": b"ssh-ed25519 PUBLIC\n",
}
MARKS = (
    "TWIN-IDGZ",
    "TWIN-NETRC",
    "TWIN-IDBAK",
    "TWIN-PEM",
    "TWIN-CRED",
    "TWIN-DOCKER",
    "TWIN-BUNDLE",
    "TWIN-SSHDIR",
    "TWIN-SSHTAR",
    "TWIN-SWAP",
)
ATTACKS = {
    "grep -ra TWIN .": "",
    "grep -ra TWIN dot": "",
    "rg -a TWIN": "",
    "zcat id_rsa.gz": "'id_rsa.gz' names a secrets file",  # the bare word (varshell18b)
    "zcat .netrc.gz": "'.netrc.gz' names a secrets file",
    "cat keys/id_ed25519.bak": "'keys/id_ed25519.bak' names a secrets file",
    "cat server.pem~": "/server.pem' is a secrets file",
    "cd dot && head .docker/config.json.orig": "/.docker/config.json' is a secret location",
    "cat dot/.ssh.bak/config": "/.ssh/config' is a secret location",
    "zcat dot/.ssh.tar.gz": "/dot/.ssh' is a secret location",
    "cat vim/.id_rsa.swp": "'vim/.id_rsa.swp' names a secrets file",
    "echo dot/.ssh.bak/config | xargs cat": "",  # skipped, or hidden by bubblewrap
    "echo credentials.bak | xargs cat": "rho: skipped credentials.bak",
}

# One sandbox for a case's commands, which leave its workspace as it was: a new one per
# command paid its creation and set-up scripts every time (about 90 ms of CPU).
sandboxes = pytest_asyncio.fixture(case_pool)


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("twins") / "ws"
    for rel, data in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    return root


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_secrets_compressed_or_backup_copy_is_never_read(
    ws: Path, backend: str, sandboxes: DaytonaPool
) -> None:
    plain = subprocess.run(
        "zcat id_rsa.gz .netrc.gz dot/.ssh.tar.gz; cat keys/id_ed25519.bak server.pem~"
        " credentials.bak dot/.docker/config.json.orig dot/.bundle/config.bak dot/.ssh.bak/config"
        " vim/.id_rsa.swp",
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
    executor = reading_outside(backend, str(ws))
    try:
        out = await call_tool(ReadHandler(), {"path": "credentials.bak"}, executor)
        assert "is a copy of a secret" in out, out
        assert "PUBLIC" in await call_tool(ReadHandler(), {"path": "id_rsa.pub.bak"}, executor)
    finally:
        await executor.aclose()
    out = await run_restricted(str(ws), "zcat logs/app.log.gz", backend, sandboxes)
    assert "LOG-LINE" in out, out
