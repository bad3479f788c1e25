"""Services' credential files at fixed places are secrets, outside the workspace too.

The policy refused ``/etc/shadow`` and SSH host keys, but not the files in which packages keep
credentials at well-known paths (``rho_domain/service_secrets.py``). Under
``read_outside_workspace: allow`` (or with ``/etc/mysql`` as a read root), before redshell16,
``cat /etc/mysql/debian.cnf`` (a database's maintenance login), ``grep -r user /etc/mysql``,
``xargs cat`` and the ``read`` tool printed it on every backend, bubblewrap included (the
sandbox masked only the policy's system secrets). Run on this machine's real file, where it
exists and is readable (a MariaDB or MySQL package installs it), with the checks on for the
three backends and, for the sandbox alone, with them off.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from shell_backends import BACKENDS, call_tool, reading_outside, restricted_bash

from rho_adapters.daytona import DaytonaExecutor
from rho_adapters.local import LocalExecutor
from rho_adapters.local.executor import sandbox_available
from rho_domain.reach import OutsideReads
from rho_domain.service_secrets import MASKED_GLOBS, SERVICE_SECRET_GLOBS, SERVICE_SECRETS
from rho_domain.tools.read import ReadHandler

TARGET = "/etc/mysql/debian.cnf"
MARK = "[client]"  # its first section, in every version of the file
REFUSED = f"is a secret location ({TARGET})"
ATTACKS = {
    f"cat {TARGET}": REFUSED,
    f"grep -c user {TARGET}": REFUSED,
    "head /etc/mysql/conf.d/../debian.cnf": REFUSED,
    f"echo {TARGET} | xargs cat": f"rho: skipped {TARGET}: a secret file is never read",
}

pytestmark = pytest.mark.skipif(
    not os.access(TARGET, os.R_OK) or MARK not in Path(TARGET).read_text(errors="replace"),
    reason=f"no readable {TARGET} on this machine",
)


@pytest.fixture(scope="module")
def workspace() -> Iterator[str]:
    """Under /var/tmp: /tmp is the sandbox's own, closed under allow."""
    ws = tempfile.mkdtemp(prefix="rho-service-secrets-", dir="/var/tmp")
    yield ws
    shutil.rmtree(ws, ignore_errors=True)


@pytest.mark.parametrize("backend", BACKENDS)
async def test_service_credentials_are_refused_outside_the_workspace(
    workspace: str, backend: str
) -> None:
    executor = reading_outside(backend, workspace)
    try:
        for command, refusal in ATTACKS.items():
            out = await call_tool(*restricted_bash(command), executor)
            assert refusal in out, (command, out)
            assert MARK not in out, (command, out)
        # a walk skips it (it printed the file's name before), and still searches the rest
        out = await call_tool(*restricted_bash("grep -r -l -e client -e user /etc/mysql"), executor)
        assert TARGET not in out, out
        assert "refused" not in out, out
        out = await call_tool(ReadHandler(), {"path": TARGET}, executor)
        assert REFUSED in out, out
        assert MARK not in out, out
    finally:
        if isinstance(executor, DaytonaExecutor):
            await executor.aclose()


@pytest.mark.skipif(not sandbox_available(), reason="bubblewrap not installed")
async def test_the_sandbox_alone_masks_them(workspace: str) -> None:
    executor = LocalExecutor(workspace, sandbox=True, read_outside=OutsideReads.ALLOW)
    result = await executor.run_unchecked(["/bin/cat", TARGET], cwd=workspace)
    assert MARK not in result.output, result.output
    shown = await executor.run_unchecked(["/bin/cat", "/etc/passwd"], cwd=workspace)
    assert "root:" in shown.output  # the rest of /etc stays in view


def test_the_sandbox_masks_only_in_roots_directories() -> None:
    """A mask below a directory the sandbox cannot enter (PostgreSQL's 0700 data directory,
    owned by postgres) made bubblewrap fail every command of an agent run as root ("Can't
    mkdir parents for /var/lib/postgresql/15/main/global/1260_vm"): the sandbox masks only
    the services' secrets in root's own directories; the policy refuses the rest."""
    masked = (*SERVICE_SECRETS, *MASKED_GLOBS)
    roots = ("/etc/", "/var/backups/", "/var/lib/samba/", "/run/credstore", "/var/lib/systemd/",
             "/var/lib/rancher/", "/var/lib/iwd", "/var/lib/tailscale", "/var/lib/krb5kdc",
             "/var/kerberos/", "/var/lib/sss", "/var/lib/waagent/")  # fmt: skip
    assert all(p.startswith(roots) for p in masked)
    assert "/var/lib/postgresql/*/main/global/1260*" in SERVICE_SECRET_GLOBS
