"""The Daytona executor finds the sandbox's home directories, as the local one finds the machine's.

It judged with the homes it was given (``/root``, ``/home/daytona``) whatever the sandbox held,
while the local executor scans this machine's (``rho_adapters/local/homes.py``: the user's,
``/root`` and every directory under ``/home``). In an image with another user (an ubuntu
image's ``/home/ubuntu``), under ``read_outside_workspace: allow``, before redshell16,
``ls -a /home/<user>`` listed it and ``cat``, ``head`` and the ``read`` tool printed its hidden
entries (``.bashrc`` here; ``.m2/settings.xml``, ``.config/rclone/rclone.conf`` elsewhere),
which rule 2b of the policy hides in every home it knows. Here FakeDaytona's sandbox is this
machine, and the executor is given no home at all: what it refuses, it found.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator

import pytest
from shell_backends import call_tool, restricted_bash

from rho_adapters.daytona import DaytonaExecutor
from rho_adapters.fakes.daytona import FakeDaytona
from rho_adapters.local.homes import machine_homes
from rho_domain.permissions import FileWriteMode
from rho_domain.reach import OutsideReads
from rho_domain.tools.read import ReadHandler


def _hidden_file() -> tuple[str, str] | None:
    """A home of this machine and a readable hidden regular file in it, if there is one."""
    for home in machine_homes():
        try:
            entries = sorted(os.scandir(home), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            hidden = entry.name.startswith(".") and entry.is_file(follow_symlinks=False)
            if hidden and os.access(entry.path, os.R_OK):
                return home, entry.path
    return None


FOUND = _hidden_file()
pytestmark = pytest.mark.skipif(FOUND is None, reason="no readable hidden file in a home here")


@pytest.fixture
def workspace() -> Iterator[str]:
    """Under /var/tmp: in no home."""
    ws = tempfile.mkdtemp(prefix="rho-daytona-homes-", dir="/var/tmp")
    yield ws
    shutil.rmtree(ws, ignore_errors=True)


async def test_the_sandbox_homes_are_found_and_hidden(workspace: str) -> None:
    assert FOUND is not None
    home, hidden = FOUND
    with open(hidden, "rb") as plain:  # the attack's target is really there to read
        plain.read(1)
    fake = FakeDaytona(polls_until_started=0)
    executor = DaytonaExecutor(
        fake.settings(working_dir=workspace),
        file_write=FileWriteMode.OFF,
        transport=fake.transport,
        homes=(),
        read_outside=OutsideReads.ALLOW,
    )
    try:
        for command in (f"head -c 64 {hidden}", f"cat {hidden}"):
            out = await call_tool(*restricted_bash(command), executor)
            assert f"is a hidden entry of the home directory {home}" in out, (command, out)
        out = await call_tool(*restricted_bash(f"ls -a {home}"), executor)
        assert "is in a home directory" in out, out
        out = await call_tool(ReadHandler(), {"path": hidden}, executor)
        assert f"is a hidden entry of the home directory {home}" in out, out
        assert home in executor.policy.homes
    finally:
        await executor.aclose()
