"""TraceWriter and the file store's appends: lines written and flushed off the event loop, in
order, before the append returns; many sessions' lines in few worker jobs; errors raised to
the caller; a cancelled append's lines still written before the session closes."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

from rho_adapters.store import FileSessionStore
from rho_adapters.store.trace_writer import TraceWriter
from rho_domain import events as ev
from rho_domain.config import AgentConfig
from rho_domain.errors import StoreError
from rho_domain.messages import UserMessage
from rho_domain.ports.store import SessionRecord


class _Watched:
    """A binary file whose writes note the thread they ran on."""

    def __init__(self, path: Path) -> None:
        self.file = path.open("ab")
        self.threads: set[int] = set()

    def write(self, data: bytes) -> int:
        self.threads.add(threading.get_ident())
        return self.file.write(data)

    def flush(self) -> None:
        self.file.flush()

    def close(self) -> None:
        self.file.close()


async def test_lines_are_in_the_file_when_write_returns_and_never_written_on_the_loop(
    tmp_path: Path,
) -> None:
    writer = TraceWriter()
    handle = _Watched(tmp_path / "t.jsonl")
    for i in range(20):
        await writer.write(handle, b"line %d\n" % i)  # type: ignore[arg-type]
        assert (tmp_path / "t.jsonl").read_bytes().endswith(b"line %d\n" % i)
    assert handle.threads
    assert threading.get_ident() not in handle.threads
    handle.close()


async def test_many_handles_share_few_worker_jobs_and_keep_each_ones_order(
    tmp_path: Path,
) -> None:
    writer = TraceWriter()
    handles = [(tmp_path / f"{n}.jsonl").open("ab") for n in range(50)]

    async def session(n: int) -> None:
        for i in range(10):
            await writer.write(handles[n], b"%d\n" % i)

    await asyncio.gather(*(session(n) for n in range(50)))
    for handle in handles:
        handle.close()
    for n in range(50):
        assert (tmp_path / f"{n}.jsonl").read_bytes() == b"".join(b"%d\n" % i for i in range(10))
    assert writer.batches < 500 // 5  # 500 writes, batched (one job per write: 500)


async def test_a_write_error_is_raised_by_write(tmp_path: Path) -> None:
    writer = TraceWriter()
    (tmp_path / "r").write_bytes(b"")
    with (tmp_path / "r").open("rb") as read_only, pytest.raises(OSError, match="write"):
        await writer.write(read_only, b"x\n")


async def test_a_cancelled_write_still_lands_and_settled_waits_for_it(tmp_path: Path) -> None:
    writer = TraceWriter()
    gate = threading.Event()

    class _Slow:
        def __init__(self) -> None:
            self.data = b""

        def write(self, data: bytes) -> int:
            gate.wait(5)
            self.data += data
            return len(data)

        def flush(self) -> None:
            pass

    handle: Any = _Slow()
    task = asyncio.create_task(writer.write(handle, b"kept\n"))
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert handle.data == b""
    settling = asyncio.create_task(writer.settled(handle))
    await asyncio.sleep(0.01)
    assert not settling.done()
    gate.set()
    await settling
    assert handle.data == b"kept\n"


def _record(session_id: str) -> SessionRecord:
    return SessionRecord(id=session_id, config=AgentConfig(model="m"), created_at=1.0)


async def test_the_file_store_writes_a_plain_append_off_the_loop_before_returning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = FileSessionStore(tmp_path)
    await store.create(_record("s1"))
    loop_thread = threading.get_ident()
    written_on: list[int] = []
    real_write = TraceWriter._drain

    def drain(self: TraceWriter) -> None:
        written_on.append(threading.get_ident())
        real_write(self)

    monkeypatch.setattr(TraceWriter, "_drain", drain)
    message = ev.MessageAdded(at=2.0, message=UserMessage("hello"))
    await store.append("s1", [message])
    assert b'"hello"' in (tmp_path / "s1" / "trace.jsonl").read_bytes()
    assert written_on
    assert loop_thread not in written_on
    await store.release("s1")
    with pytest.raises(StoreError, match="not open"):
        await store.append("s1", [message])
