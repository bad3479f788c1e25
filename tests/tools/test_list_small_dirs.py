"""LocalExecutor.list_dir: a small directory is listed on the event loop (no worker thread)
while the alias scan is fresh (a secret-named link's target may be the directory: the scan
that finds it runs in a thread, at most every two seconds), a larger one in a thread, with
the same entries; a walk over many small directories still gives the loop a turn per
directory; the secrets policy holds on both paths. Real files."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import pytest

from rho_adapters.local import LocalExecutor
from rho_adapters.local.files import SMALL_ENTRIES
from rho_domain.errors import SensitivePath
from rho_domain.ports.executor import FileKind

T = TypeVar("T")


class CountingPool(ThreadPoolExecutor):
    """The loop's default executor, counting what is handed to its threads."""

    def __init__(self) -> None:
        super().__init__(max_workers=2)
        self.submitted = 0

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        self.submitted += 1
        return super().submit(fn, *args, **kwargs)


@pytest.fixture
async def pool() -> AsyncIterator[CountingPool]:
    counting = CountingPool()
    asyncio.get_running_loop().set_default_executor(counting)
    yield counting
    counting.shutdown()


def _files(directory: Path, count: int) -> Path:
    directory.mkdir()
    for i in range(count):
        (directory / f"file{i:03}.txt").write_text("x" * i)
    return directory


async def test_a_small_directory_is_listed_without_a_thread(
    tmp_path: Path, pool: CountingPool
) -> None:
    _files(tmp_path / "small", 20)
    (tmp_path / "small" / "sub").mkdir()
    (tmp_path / "small" / "link").symlink_to("file001.txt")
    executor = LocalExecutor(str(tmp_path))
    await executor.list_dir("small")  # the alias scan, in a thread
    pool.submitted = 0
    entries = await executor.list_dir("small")
    assert pool.submitted == 0
    by_name = {e.name: e for e in entries}
    assert len(by_name) == 22
    assert by_name["file005.txt"].size == 5
    assert by_name["file005.txt"].path == "small/file005.txt"
    assert by_name["sub"].kind is FileKind.DIRECTORY
    assert by_name["link"].link_target == "file001.txt"


async def test_a_larger_directory_is_listed_in_a_thread_with_every_entry(
    tmp_path: Path, pool: CountingPool
) -> None:
    _files(tmp_path / "large", SMALL_ENTRIES + 1)
    entries = await LocalExecutor(str(tmp_path)).list_dir("large")
    assert pool.submitted == 1
    assert sorted(e.name for e in entries) == [f"file{i:03}.txt" for i in range(SMALL_ENTRIES + 1)]
    assert {e.path for e in entries} == {f"large/file{i:03}.txt" for i in range(65)}


async def test_a_walk_over_small_directories_lets_the_loop_run(
    tmp_path: Path, pool: CountingPool
) -> None:
    for d in range(50):
        _files(tmp_path / f"d{d}", 3)
    executor = LocalExecutor(str(tmp_path))
    await executor.list_dir("d0")  # the alias scan, in a thread
    pool.submitted = 0
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0)

    task = asyncio.create_task(ticker())
    await asyncio.sleep(0)
    started = ticks
    for d in range(50):
        await executor.list_dir(f"d{d}")
    task.cancel()
    assert pool.submitted <= 1  # the scan again, if two seconds passed on a stalled machine
    assert ticks - started >= 50  # a turn for the others after each directory


@pytest.mark.parametrize("count", [2, SMALL_ENTRIES + 1])
async def test_a_secret_directory_is_refused_on_both_paths(
    tmp_path: Path, pool: CountingPool, count: int
) -> None:
    _files(tmp_path / ".ssh", count)
    with pytest.raises(SensitivePath):
        await LocalExecutor(str(tmp_path)).list_dir(".ssh")


async def test_listing_the_workspace_does_not_walk_its_parent(tmp_path: Path) -> None:
    # oneshot24: a directory listed was scanned for aliases from its parent (a file's own
    # directory is its parent; a directory's is itself), so ``list .`` walked everything
    # beside the workspace (all of ~/code for ~/code/app, up to 200,000 entries: 17.5 ms of
    # CPU a 10,000), and a secret-named link there leading to the workspace (``.ssh ->
    # app``) refused ``list .`` as "another name ... of a secrets file" while the read tool
    # read every file in it (the workspace is open even inside a secret location:
    # ``SecretPolicy.open_trees``). A link inside the workspace is still found.
    ws = tmp_path / "ws"
    (ws / "keys").mkdir(parents=True)
    (ws / "a.txt").write_text("plain\n")
    (tmp_path / ".ssh").symlink_to("ws")
    # made before the first scan: a new executor answers from the last one's scan for its
    # two seconds (``hardlinks.SharedScans``), so one made after it is seen two seconds on
    # (test_alias_scans_shared.py)
    (ws / ".ssh").symlink_to("keys")
    executor = LocalExecutor(str(ws))
    assert sorted(entry.name for entry in await executor.list_dir(".")) == [
        ".ssh",
        "a.txt",
        "keys",
    ]
    assert await executor.read("a.txt") == b"plain\n"
    with pytest.raises(SensitivePath, match="a link named as one leads to"):
        await LocalExecutor(str(ws)).list_dir("keys")
