"""Executor contract: the same file semantics from MemoryExecutor (the fake), LocalExecutor and
DaytonaExecutor (over FakeDaytona, real processes), each built with the same ``file_write``
setting."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from rho_adapters.daytona import DaytonaExecutor
from rho_adapters.fakes import FakeDaytona
from rho_adapters.fakes.memory_executor import MemoryExecutor
from rho_adapters.local import LocalExecutor
from rho_domain.errors import PathOutsideWorkspace, PermissionDenied, ToolError
from rho_domain.permissions import FileWriteMode
from rho_domain.ports.executor import Command, Executor, FileKind

Factory = Callable[[Path, FileWriteMode], Executor]


def _workspace(tmp_path: Path) -> Path:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.txt").write_bytes(b"hello\n")
    return tmp_path


def _local(tmp_path: Path, file_write: FileWriteMode) -> Executor:
    return LocalExecutor(str(_workspace(tmp_path)), file_write=file_write)


def _memory(tmp_path: Path, file_write: FileWriteMode) -> Executor:
    return MemoryExecutor({"src/a.txt": b"hello\n"}, root=str(tmp_path), file_write=file_write)


def _daytona(tmp_path: Path, file_write: FileWriteMode) -> Executor:
    fake = FakeDaytona()
    settings = fake.settings(working_dir=str(_workspace(tmp_path)))
    return DaytonaExecutor(settings, file_write=file_write, transport=fake.transport)


FACTORIES: dict[str, Factory] = {"local": _local, "memory": _memory, "daytona": _daytona}


async def _built(
    request: pytest.FixtureRequest, tmp_path: Path, file_write: FileWriteMode
) -> AsyncIterator[Executor]:
    executor = FACTORIES[request.param](tmp_path, file_write)
    try:
        yield executor
    finally:
        await executor.aclose()


@pytest.fixture(params=sorted(FACTORIES))
async def executor(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Executor]:
    async for built in _built(request, tmp_path, FileWriteMode.FULL):
        yield built


@pytest.fixture(params=sorted(FACTORIES))
async def create_only(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Executor]:
    async for built in _built(request, tmp_path, FileWriteMode.CREATE_ONLY):
        yield built


@pytest.fixture(params=sorted(FACTORIES))
async def read_only(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Executor]:
    async for built in _built(request, tmp_path, FileWriteMode.OFF):
        yield built


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


async def test_executor_contract_create_only_creates_but_never_overwrites(
    create_only: Executor,
) -> None:
    assert await create_only.write("src/new.txt", b"1", overwrite=False) is False
    with pytest.raises(PermissionDenied):
        await create_only.write("src/new.txt", b"2", overwrite=True)
    with pytest.raises(PermissionDenied):
        await create_only.write("src/a.txt", b"2", overwrite=False)
    assert await create_only.read("src/a.txt") == b"hello\n"


async def test_executor_contract_file_write_off_refuses_every_write(read_only: Executor) -> None:
    for overwrite in (False, True):
        with pytest.raises(PermissionDenied):
            await read_only.write("src/new.txt", b"1", overwrite=overwrite)
    assert await read_only.read("src/a.txt") == b"hello\n"
    assert {e.name for e in await read_only.list_dir("src")} == {"a.txt"}


async def test_executor_contract_a_shell_string_needs_allow_shell(executor: Executor) -> None:
    with pytest.raises(PermissionDenied):
        await executor.run(Command(shell="ls"))


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


async def test_memory_executor_sees_edits_of_its_public_files_dict() -> None:
    """MemoryExecutor lists through a sorted index of ``files``; tests edit that dict
    directly, so an added, removed or re-added key shows at once, in ``files`` order, and a
    name that only prefixes another (``src`` / ``src2``) is not its directory."""
    fake = MemoryExecutor({"src/b.txt": "1", "src2/x": "", "src/a.txt": "22"})
    assert [e.name for e in await fake.list_dir("src")] == ["b.txt", "a.txt"]
    fake.files["src/c/d.txt"] = b""
    del fake.files["src/b.txt"]
    listed = await fake.list_dir("src")
    assert [(e.name, e.kind, e.size) for e in listed] == [
        ("a.txt", FileKind.FILE, 2),
        ("c", FileKind.DIRECTORY, 0),
    ]
    fake.files.pop("src/a.txt")
    fake.files["src/a.txt"] = b"333"  # re-added: now after c in the dict's order
    assert [(e.name, e.size) for e in await fake.list_dir("src")] == [("c", 0), ("a.txt", 3)]
    assert (await fake.stat("src/c")).kind == FileKind.DIRECTORY
    with pytest.raises(ToolError, match="not a directory"):
        await fake.list_dir("sr")
    del fake.files["src/c/d.txt"]
    with pytest.raises(ToolError):
        await fake.stat("src/c")
