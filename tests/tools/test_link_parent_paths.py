"""A path that climbs with ``..`` after a symbolic link names the same file on every backend.

The kernel (and ``cat``, and the local executor, which walks by descriptor) reads
``lnk/../x.txt`` as the ``x.txt`` beside ``lnk``'s target. Before varshell19b, Daytona's file
tools normalised the path first: ``read out/../x.txt`` (``out -> <outside>/dir``) read the
workspace's own ``x.txt`` where the local executor refuses a file out of reach, and
``read deep/../x.txt`` (``deep -> sub/deeper``) read ``x.txt`` instead of ``sub/x.txt``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from shell_backends import call_tool, new_daytona

from rho_adapters.local import LocalExecutor
from rho_domain.ports.executor import Executor
from rho_domain.tools.listing import ListHandler
from rho_domain.tools.read import ReadHandler


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    top = tmp_path_factory.mktemp("dotdot")
    (top / "outside" / "dir").mkdir(parents=True)
    (top / "outside" / "x.txt").write_text("OUTSIDE-MARK\n")
    root = top / "ws"
    (root / "sub" / "deeper").mkdir(parents=True)
    (root / "x.txt").write_text("WS-ROOT-MARK\n")
    (root / "sub" / "x.txt").write_text("SUB-MARK\n")
    os.symlink(top / "outside" / "dir", root / "out")
    os.symlink("sub/deeper", root / "deep")
    return root


@pytest.mark.parametrize("backend", ["local", "daytona"])
async def test_dotdot_after_a_link_is_read_as_the_kernel_reads_it(ws: Path, backend: str) -> None:
    executor: Executor = new_daytona(str(ws)) if backend == "daytona" else LocalExecutor(str(ws))
    try:
        out = await call_tool(ReadHandler(), {"path": "out/../x.txt"}, executor)
        assert "PathOutsideWorkspace" in out, out
        assert "MARK" not in out, out
        out = await call_tool(ReadHandler(), {"path": "deep/../x.txt"}, executor)
        assert "SUB-MARK" in out, out
        out = await call_tool(ListHandler(), {"path": "deep/.."}, executor)
        assert "deeper" in out, out
        assert "sub" not in out.split(), out
    finally:
        await executor.aclose()
