"""Executor contract: the same file semantics from MemoryExecutor (the fake) and LocalExecutor."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from rho_adapters.fakes.memory_executor import MemoryExecutor
from rho_adapters.local import LocalExecutor
from rho_domain.errors import PathOutsideWorkspace, PermissionDenied, ToolError
from rho_domain.permissions import FileWriteMode
from rho_domain.ports.executor import Executor, FileKind


def _local(tmp_path: Path) -> Executor:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.txt").write_bytes(b"hello\n")
    return LocalExecutor(str(tmp_path), file_write=FileWriteMode.FULL)


def _memory(tmp_path: Path) -> Executor:
    return MemoryExecutor({"src/a.txt": b"hello\n"}, root=str(tmp_path))


FACTORIES: list[Callable[[Path], Executor]] = [_local, _memory]


@pytest.fixture(params=FACTORIES, ids=["local", "memory"])
def executor(request: pytest.FixtureRequest, tmp_path: Path) -> Executor:
    factory: Callable[[Path], Executor] = request.param
    return factory(tmp_path)


async def test_executor_contract_read_ranges(executor: Executor) -> None:
    assert await executor.read("src/a.txt") == b"hello\n"
    assert await executor.read("src/a.txt", offset=1, length=3) == b"ell"
    with pytest.raises(ToolError):
        await executor.read("src/missing.txt")


async def test_executor_contract_write_create_and_overwrite(executor: Executor) -> None:
    assert await executor.write("src/b.txt", b"1", overwrite=False) is False
    with pytest.raises(PermissionDenied):
        await executor.write("src/b.txt", b"2", overwrite=False)
    assert await executor.write("src/b.txt", b"3", overwrite=True) is True
    assert await executor.read("src/b.txt") == b"3"


async def test_executor_contract_listing_and_stat(executor: Executor) -> None:
    names = {e.name: e.kind for e in await executor.list_dir(".")}
    assert names == {"src": FileKind.DIRECTORY}
    info = await executor.stat("src/a.txt")
    assert (info.path, info.kind, info.size) == ("src/a.txt", FileKind.FILE, 6)


async def test_executor_contract_confinement(executor: Executor) -> None:
    with pytest.raises(PathOutsideWorkspace):
        await executor.read("../outside.txt")
    with pytest.raises(PathOutsideWorkspace):
        await executor.write("/etc/rho-test", b"x", overwrite=False)
