"""An installed distribution's metadata is never written, in any mode (varwrite15c).

redwrite15 refused site-packages, dist-packages and node_modules, and create-only creates
only documents and data, yet both wrote ``evil.dist-info/entry_points.txt`` (a ``.txt`` outside
any hidden directory): importlib.metadata finds any ``*.dist-info`` or ``*.egg-info`` directory
on sys.path, the workspace among it for ``python -m pytest``, and pytest imports the module
every ``pytest11`` entry point names at its start (a project script with top-level effects,
anything importable). setuptools writes this metadata; no project's work does."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from write_backends import WRITERS

from rho_adapters.fakes import MemoryExecutor
from rho_domain.errors import SensitivePath
from rho_domain.permissions import FileWriteMode

BUILDERS = WRITERS
ENTRY_POINTS = b"[pytest11]\nzen = this\n"  # 'this' prints the Zen of Python when imported
PATHS = [
    "evil.dist-info/entry_points.txt",
    "src/evil.egg-info/entry_points.txt",
    "Evil-1.0.DIST-INFO/entry_points.txt",
    "evil.egg-info",
]
INSTALLED = "installed code that tools run"


@pytest.mark.parametrize("mode", [FileWriteMode.FULL, FileWriteMode.CREATE_ONLY])
@pytest.mark.parametrize("backend", sorted(BUILDERS))
@pytest.mark.parametrize("path", PATHS)
async def test_installed_metadata_is_never_written(
    tmp_path: Path, backend: str, mode: FileWriteMode, path: str
) -> None:
    executor = BUILDERS[backend](tmp_path, mode)
    try:
        with pytest.raises(SensitivePath, match=INSTALLED):  # written before
            await executor.write(path, ENTRY_POINTS, overwrite=mode is FileWriteMode.FULL)
        if isinstance(executor, MemoryExecutor):
            assert not executor.files
    finally:
        await executor.aclose()
    assert not (tmp_path / path).exists()


async def test_pytest_in_the_workspace_imports_no_planted_plugin(tmp_path: Path) -> None:
    (tmp_path / "test_a.py").write_text("def test_a():\n    pass\n")
    executor = BUILDERS["local"](tmp_path, FileWriteMode.CREATE_ONLY)
    try:
        with pytest.raises(SensitivePath, match=INSTALLED):
            await executor.write("evil.dist-info/entry_points.txt", ENTRY_POINTS, overwrite=False)
    finally:
        await executor.aclose()
    # Hypothesis's plugin is half of a bare pytest's start (0.3 of 0.75 s of CPU) and no part
    # of the attack: blocking it by name leaves every other pytest11 entry point, a planted
    # one among them, to be imported as before (one planted by hand prints the Zen).
    blocked = ("-p", "no:cacheprovider", "-p", "no:randomly", "-p", "no:hypothesispytest")
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", *blocked],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert "1 passed" in run.stdout, run.stdout + run.stderr
    assert "Zen of Python" not in run.stdout
