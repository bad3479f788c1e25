"""Secret-named links and nested repositories made after the Daytona sandbox (redshell24).

The agent is readonly, but another process (the user's build, a checkout, a clone) may make
``.env -> prod.conf``, ``.ssh -> keys`` or a nested clone whose configuration names
``store --file=notes.txt`` while a session runs. Before redshell24 the Daytona executor
found them only when its sandbox was made: afterwards ``cat prod.conf``, ``cat keys/k.txt``,
``cat sub/notes.txt``, ``grep -r`` and the read tool printed them for the whole session. The
scan now rides with every command's words request (no request more) and with each read's
(one more request), and a nested repository it meets for the first time has its
configuration read then. (Locally the sandbox scans at each command's start; without it, and
for the file tools, the scan is remembered two seconds: docs/security.md.)
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from shell_backends import call_tool, new_daytona, restricted_bash

from rho_domain.tools.read import ReadHandler

MARK = "K-LATE-MARK"
READ = ("prod.conf", "keys/k.txt", "sub/notes.txt")


@pytest.mark.asyncio
async def test_daytona_judges_links_and_clones_made_after_its_sandbox(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "keys").mkdir(parents=True)
    (root / "prod.conf").write_text(f"TOKEN={MARK}-env\n")
    (root / "keys/k.txt").write_text(f"{MARK}-key\n")
    (root / "plain.txt").write_text("plain words\n")
    executor = new_daytona(str(root))
    try:
        before = await call_tool(*restricted_bash("cat prod.conf"), executor)
        assert MARK in before, before  # the sandbox exists; nothing names it a secret yet
        os.symlink("prod.conf", root / ".env")
        os.symlink("keys", root / ".ssh")
        env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "GIT_CONFIG_NOSYSTEM": "1"}
        subprocess.run(["git", "init", "-q", str(root / "sub")], env=env, check=True)
        (root / "sub/.git/config").open("a").write(
            "[credential]\n\thelper = store --file=notes.txt\n"
        )
        (root / "sub/notes.txt").write_text(f"https://u:{MARK}-store@h.example\n")
        for command in (*(f"cat {path}" for path in READ), "grep -r K-LATE ."):
            out = await call_tool(*restricted_bash(command), executor)
            assert MARK not in out, (command, out)
            assert command.startswith("grep") or out.startswith("SensitivePath"), out
        for path in READ:
            out = await call_tool(ReadHandler(), {"path": path}, executor)
            assert out.startswith("SensitivePath"), out
        assert "plain words" in await call_tool(ReadHandler(), {"path": "plain.txt"}, executor)
    finally:
        await executor.aclose()
