"""Executor contract: the same file semantics from MemoryExecutor (the fake), LocalExecutor and
DaytonaExecutor (over FakeDaytona, real processes)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from rho_adapters.daytona import DaytonaExecutor
from rho_adapters.fakes.daytona import FakeDaytona
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


def _daytona(tmp_path: Path) -> Executor:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.txt").write_bytes(b"hello\n")
    fake = FakeDaytona(polls_until_started=1)
    return DaytonaExecutor(
        fake.settings(working_dir=str(tmp_path)),
        file_write=FileWriteMode.FULL,
        transport=fake.transport,
    )


FACTORIES: list[Callable[[Path], Executor]] = [_local, _memory, _daytona]


@pytest.fixture(params=FACTORIES, ids=["local", "memory", "daytona"])
async def executor(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Executor]:
    factory: Callable[[Path], Executor] = request.param
    made = factory(tmp_path)
    try:
        yield made
    finally:
        await made.aclose()


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


async def test_executor_contract_glob(executor: Executor) -> None:
    await executor.write("src/b.txt", b"2", overwrite=False)
    await executor.write("src/.hidden.txt", b"3", overwrite=False)
    await executor.write("src/deep/c.txt", b"4", overwrite=False)
    assert await executor.glob("src/*.txt") == ("src/a.txt", "src/b.txt")
    assert await executor.glob("*.txt", cwd="src") == ("a.txt", "b.txt")
    assert await executor.glob("src/.*") == ("src/.hidden.txt",)
    assert await executor.glob("*/*/") == ("src/deep/",)
    assert await executor.glob("src/[ab].t?t") == ("src/a.txt", "src/b.txt")
    assert await executor.glob("src/*.nomatch") == ()
    assert await executor.glob("missing/*") == ()
    with pytest.raises(PermissionDenied):
        await executor.glob("../*")
