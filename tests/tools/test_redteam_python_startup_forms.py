"""Python's start-up modules are never written in any form the import system takes
(varwrite15c).

redwrite15 refused sitecustomize.py and usercustomize.py, but under ``file_write: full`` the
write tool wrote the same modules as a package (``src/sitecustomize/__init__.py``, or any
file of a namespace package ``sitecustomize/``), as a sourceless ``.pyc`` and as a compiled
extension module: Python's site imports each at every start with ``src`` on PYTHONPATH (shown
with a real interpreter: the package and the .pyc each ran)."""

from __future__ import annotations

import os
import py_compile
import subprocess
import sys
from pathlib import Path

import pytest
from write_backends import writers

from rho_adapters.fakes import MemoryExecutor
from rho_domain.errors import SensitivePath
from rho_domain.permissions import FileWriteMode

FULL = FileWriteMode.FULL
PYTHON = "is code Python runs at every start"


BUILDERS = writers(FULL)
FORMS = [
    "src/sitecustomize/__init__.py",
    "src/sitecustomize/hooks.py",
    "lib/UserCustomize/__init__.py",
    "src/sitecustomize.pyc",
    "src/usercustomize.pyc",
    "src/sitecustomize.cpython-312-x86_64-linux-gnu.so",
    "src/sitecustomize.abi3.so",
]


PAYLOAD = b"print('STARTUP RAN')\n"


@pytest.mark.parametrize("backend", sorted(BUILDERS))
@pytest.mark.parametrize("path", FORMS)
async def test_python_startup_modules_are_never_written_in_any_form(
    tmp_path: Path, backend: str, path: str
) -> None:
    executor = BUILDERS[backend](tmp_path)
    try:
        with pytest.raises(SensitivePath, match=PYTHON):  # written before
            await executor.write(path, PAYLOAD, overwrite=True)
        if isinstance(executor, MemoryExecutor):
            assert not executor.files
    finally:
        await executor.aclose()
    assert not (tmp_path / path).exists()


@pytest.mark.parametrize("path", ["src/sitecustomize/__init__.py", "src/sitecustomize.pyc"])
async def test_python_on_the_workspace_path_runs_no_planted_startup(
    tmp_path: Path, path: str
) -> None:
    source = tmp_path / "payload.py"
    source.write_bytes(PAYLOAD)
    data = PAYLOAD
    if path.endswith(".pyc"):  # a real sourceless module
        py_compile.compile(str(source), cfile=str(tmp_path / "payload.pyc"), doraise=True)
        data = (tmp_path / "payload.pyc").read_bytes()
    executor = BUILDERS["local"](tmp_path)
    try:
        with pytest.raises(SensitivePath, match=PYTHON):
            await executor.write(path, data, overwrite=True)
    finally:
        await executor.aclose()
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "src")}
    run = subprocess.run(
        [sys.executable, "-c", "pass"], env=env, capture_output=True, text=True, timeout=60
    )
    assert "STARTUP RAN" not in run.stdout


async def test_documents_and_helpers_of_that_name_are_written(tmp_path: Path) -> None:
    executor = BUILDERS["local"](tmp_path)
    try:
        for path in ("docs/sitecustomize.md", "src/sitecustomize_helper.py"):
            await executor.write(path, b"x = 1\n", overwrite=True)
    finally:
        await executor.aclose()
    assert (tmp_path / "src/sitecustomize_helper.py").exists()
