"""No write plants a git repository: a file named HEAD holding a ref is never written.

Red-team pass (redwrite15) under ``file_write: full``: .git is never written, but git takes
any directory holding a valid HEAD (and objects/, refs/) for a bare repository. The write
tool put vendor/lib/HEAD, vendor/lib/config with ``core.pager = touch pwned; cat``,
vendor/lib/objects/ and vendor/lib/refs/heads/: ``cd vendor/lib && git branch`` on a
terminal then ran the pager (git 2.39; core.fsmonitor, core.sshCommand and aliases alike)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from rho_adapters.daytona import DaytonaExecutor
from rho_adapters.fakes import FakeDaytona
from rho_adapters.local import LocalExecutor
from rho_domain.errors import SensitivePath
from rho_domain.permissions import FileWriteMode
from rho_domain.ports.executor import Executor

FULL = FileWriteMode.FULL
PLANTED = "would be a git HEAD, which makes its directory a repository"
CONFIG = b'[core]\n\tbare = true\n\tpager = "touch pwned; cat"\n'


def _executor(ws: Path, backend: str) -> Executor:
    if backend == "local":
        return LocalExecutor(str(ws), file_write=FULL)
    fake = FakeDaytona()
    settings = fake.settings(working_dir=str(ws))
    return DaytonaExecutor(settings, file_write=FULL, transport=fake.transport)


@pytest.mark.parametrize("backend", ["local", "daytona"])
@pytest.mark.parametrize(
    ("name", "head"),
    [
        ("HEAD", b"ref: refs/heads/main\n"),
        ("HEAD", b"ref:refs/heads/main"),
        ("HEAD", b"0123456789abcdef0123456789abcdef01234567\n"),
        ("head", b"ref: refs/heads/main\n"),  # the same file on a case-insensitive disk
    ],
)
async def test_a_head_is_never_written(
    tmp_path: Path, backend: str, name: str, head: bytes
) -> None:
    executor = _executor(tmp_path, backend)
    try:
        for part, data in (("config", CONFIG), ("objects/info/packs", b""), ("refs/heads/x", b"")):
            await executor.write(f"vendor/lib/{part}", data, overwrite=True)
        with pytest.raises(SensitivePath) as refused:
            await executor.write(f"vendor/lib/{name}", head, overwrite=True)
    finally:
        await executor.aclose()
    assert PLANTED in str(refused.value)
    assert not (tmp_path / "vendor" / "lib" / name).exists()
    if git := shutil.which("git"):
        # Without its HEAD the directory is no repository: git never reads that config.
        found = subprocess.run(
            [git, "rev-parse", "--git-dir"],
            cwd=tmp_path / "vendor" / "lib",
            capture_output=True,
            text=True,
            env={"PATH": "/usr/bin:/bin", "GIT_CEILING_DIRECTORIES": str(tmp_path)},
            check=False,
        )
        assert found.returncode != 0, found.stdout


async def test_a_file_named_head_with_other_text_is_written(tmp_path: Path) -> None:
    executor = _executor(tmp_path, "local")
    try:
        await executor.write("notes/HEAD", b"the head of the list\n", overwrite=True)
    finally:
        await executor.aclose()
    assert (tmp_path / "notes" / "HEAD").read_bytes() == b"the head of the list\n"
