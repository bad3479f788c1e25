"""A session directory a killed process left half created (no trace: nothing recorded) is
taken over by the next ``create`` of that id, as a durable run re-executed after its worker
died inside ``create`` needs; one with a trace, or one a live process holds, is not."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from rho_adapters.store import FileSessionStore
from rho_domain.config import AgentConfig
from rho_domain.errors import SessionLocked, StoreError
from rho_domain.ports.store import SessionRecord


def record(session_id: str) -> SessionRecord:
    return SessionRecord(id=session_id, created_at=0.0, config=AgentConfig())


def test_a_torn_creation_is_taken_over(tmp_path: Path) -> None:
    torn = tmp_path / "s1"
    torn.mkdir()
    (torn / "config.yaml").write_bytes(b"")  # killed before writing it, and before the trace
    store = FileSessionStore(tmp_path)

    async def create_and_open() -> int:
        await store.create(record("s1"))
        await store.release("s1")
        _, events = await store.open("s1")
        await store.release("s1")
        return len(events)

    assert asyncio.run(create_and_open()) == 0
    assert (torn / "trace.jsonl").is_file()
    assert (torn / "config.yaml").read_text()


def test_a_session_with_a_trace_is_not_taken_over(tmp_path: Path) -> None:
    store = FileSessionStore(tmp_path)

    async def twice() -> None:
        await store.create(record("s2"))
        await store.release("s2")
        await store.create(record("s2"))

    with pytest.raises(StoreError, match="already exists"):
        asyncio.run(twice())


def test_a_half_created_session_a_live_process_holds_is_not_taken_over(tmp_path: Path) -> None:
    holder, other = FileSessionStore(tmp_path), FileSessionStore(tmp_path)

    async def race() -> None:
        await holder.create(record("s3"))
        (tmp_path / "s3" / "trace.jsonl").unlink()  # as if still between its two writes
        await other.create(record("s3"))

    with pytest.raises(SessionLocked):
        asyncio.run(race())
