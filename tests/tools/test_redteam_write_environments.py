"""An environment's installed code is never written (red-team pass redwrite16).

Before: the write rules refused a virtual environment's site-packages, pyvenv.cfg and
activation scripts, and wrote the rest of it under ``file_write: full``: its ``bin/`` console
scripts (``.venv/bin/pytest``, overwritten with its mode 0755 kept: the next ``pytest`` runs
the model's code) and any new program there (``.venv/bin/git``: the first git on the PATH of
whoever activates the environment), a conda environment's (``.pixi/envs/default/bin``), PEP
582's ``__pypackages__`` and Yarn's Plug'n'Play install (``.pnp.cjs``, the loader node runs
first; ``.yarn/releases``, the yarn every yarn command runs). Now a directory holding an
environment's marker (pyvenv.cfg, conda-meta/) refuses every write below it, on each
backend, and the Plug'n'Play files and ``__pypackages__`` are installed code by name."""

from __future__ import annotations

from pathlib import Path

import pytest
from write_backends import writer

from rho_domain.errors import SensitivePath
from rho_domain.permissions import FileWriteMode
from rho_domain.ports.executor import Executor

ENV = "a Python or conda environment"
INSTALLED = "installed code"
CASES = [
    (".venv/bin/pytest", ENV),
    (".venv/bin/git", ENV),
    (".tox/py312/lib/python3.12/helper.py", INSTALLED),  # .tox by name since varwrite16b
    (".pixi/envs/default/bin/python3", ENV),
    ("__pypackages__/3.12/lib/requests/__init__.py", INSTALLED),
    (".pnp.cjs", INSTALLED),
    (".yarn/releases/yarn-4.1.0.cjs", INSTALLED),
    (".yarn/unplugged/esbuild/install.js", INSTALLED),
]
MARKERS = {
    ".venv/pyvenv.cfg": b"home = /usr/bin\n",
    ".venv/bin/pytest": b"#!/bin/sh\nexec python -m pytest\n",
    ".tox/py312/pyvenv.cfg": b"home = /usr/bin\n",
    ".pixi/envs/default/conda-meta/history": b"",
}


def _build(backend: str, ws: Path) -> Executor:
    executor = writer(backend, ws, FileWriteMode.FULL, MARKERS)
    if backend != "memory":
        (ws / ".venv/bin/pytest").chmod(0o755)
    return executor


@pytest.mark.parametrize("backend", ["local", "daytona", "memory"])
async def test_an_environment_s_installed_code_is_never_written(
    tmp_path: Path, backend: str
) -> None:
    executor = _build(backend, tmp_path)
    refused: dict[str, bool] = {}
    try:
        for path, why in CASES:
            with pytest.raises(SensitivePath) as caught:
                await executor.write(path, b"import os; os.system('id')\n", overwrite=True)
            refused[path] = why in str(caught.value)
        # the project's own files beside the environments are written as before
        await executor.write("src/venv_tools.py", b"ok\n", overwrite=True)
    finally:
        await executor.aclose()
    assert refused == dict.fromkeys((path for path, _ in CASES), True)
    if backend != "memory":
        assert (tmp_path / ".venv/bin/pytest").read_bytes() == MARKERS[".venv/bin/pytest"]
        assert not (tmp_path / ".venv/bin/git").exists()
        assert [p.name for p in (tmp_path / ".venv/bin").iterdir()] == ["pytest"]
