"""rg's ignore files above a start in a read root are judged as the workspace's are.

redshell15 (4a0ffd1) judged the ignore files rg reads above where it starts as words, up to
the workspace's root; a start in a read root (``extra_read_roots``) was never climbed. rg 13
prints the unparsable lines of those files whatever ``--no-ignore-messages`` says, so a read
root whose ``.ignore`` was a symbolic link to its ``.env``, or whose ``docs/.rgignore`` was a
hard link of ``docs/.env``, made ``rg needle ROOT/docs`` and ``rg --files ROOT/docs/sub``
print the secret ("error parsing glob 'API_KEY=...[x'") without bubblewrap and on Daytona
(bubblewrap masks the read root's secrets). Each attack is checked first with a plain rg to
print the mark.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from shell_backends import BACKENDS, call_tool, restricted_bash

from rho_adapters.daytona import DaytonaExecutor
from rho_adapters.fakes.daytona import FakeDaytona
from rho_adapters.local import LocalExecutor
from rho_domain.permissions import FileWriteMode
from rho_domain.shell.ignore_files import implied_ignore_files

MARK = "SECRET-ENV"


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("rgreadroots")
    (root / "ws").mkdir()
    (root / "ws/a.txt").write_text("hi\n")
    for name in ("symbolic", "hard", "plain"):
        shared = root / name
        (shared / "docs/sub").mkdir(parents=True)
        (shared / "docs/sub/n.txt").write_text("needle\n")
        (shared / "docs/sub/skip.log").write_text("needle\n")
        (shared / ".env").write_text("API_KEY=SECRET-ENV-1[x\n")
    (root / "symbolic/.ignore").symlink_to(root / "symbolic/.env")
    (root / "hard/.env").rename(root / "hard/docs/.env")
    os.link(root / "hard/docs/.env", root / "hard/docs/.rgignore")
    (root / "plain/.ignore").write_text("*.log\n")
    for name in ("symbolic", "hard"):
        plain = subprocess.run(
            ["rg", "--no-ignore-messages", "needle", str(root / name / "docs/sub")],
            capture_output=True,
            text=True,
            check=False,
        )
        assert MARK in plain.stderr, plain
    return root


async def _run(base: Path, command: str, backend: str) -> str:
    root = str(base / "ws")
    extra = tuple(str(base / name) for name in ("symbolic", "hard", "plain"))
    if backend == "daytona":
        fake = FakeDaytona(polls_until_started=0)
        daytona = DaytonaExecutor(
            fake.settings(working_dir=root),
            file_write=FileWriteMode.OFF,
            transport=fake.transport,
            extra_read_roots=extra,
        )
        try:
            return await call_tool(*restricted_bash(command), daytona)
        finally:
            await daytona.aclose()
    local = LocalExecutor(root, sandbox=backend == "bwrap", extra_read_roots=extra)
    return await call_tool(*restricted_bash(command), local)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", ["symbolic", "hard"])
@pytest.mark.parametrize("command", ["rg needle {}/docs", "rg --files {}/docs/sub"])
async def test_rg_never_prints_a_read_roots_ignore_file_linked_to_a_secret(
    base: Path, backend: str, name: str, command: str
) -> None:
    out = await _run(base, command.format(base / name), backend)
    assert MARK not in out, out


@pytest.mark.parametrize("backend", ["no-bwrap", "daytona"])
@pytest.mark.parametrize("name", ["symbolic", "hard"])
async def test_the_refusal_names_the_ignore_file(base: Path, backend: str, name: str) -> None:
    out = await _run(base, f"rg needle {base / name}/docs/sub", backend)
    assert out.startswith("SensitivePath: rg: "), out
    assert ".ignore" in out or ".rgignore" in out, out


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_read_roots_own_ignore_file_still_applies(base: Path, backend: str) -> None:
    out = await _run(base, f"rg -l needle {base}/plain/docs", backend)
    assert "n.txt" in out, out
    assert "skip.log" not in out, out


def test_a_start_climbs_to_the_innermost_root_holding_it() -> None:
    implied = implied_ignore_files(["rg", "x", "/r/docs"], "/w/src", "/w", ["/r", "/"])
    assert "/r/.ignore" in implied
    assert "/w/.ignore" in implied
    assert "/.ignore" not in implied  # the workspace and the read root are the innermost
    elsewhere = implied_ignore_files(["rg", "x", "/elsewhere/d"], "/w", "/w", ["/r"])
    assert [p for p in elsewhere if not p.startswith("/w/")] == []  # no root holds it
