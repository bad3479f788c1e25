"""A session directory a killed process left half created (no trace: nothing recorded) is
taken over by the next ``create`` of that id, as a durable run re-executed after its worker
died inside ``create`` needs; one with a trace, or one a live process holds, is not. A
``create`` that fails part-way (a full disk) removes what it wrote."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
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


# The create runs under a 512-byte RLIMIT_FSIZE (Python ignores SIGXFSZ: the write past it
# fails with EFBIG, as on a full disk): config.yaml is cut short, the creation fails.
FULL_DISK_CREATE = """
import asyncio, resource, sys
from rho_adapters.store import FileSessionStore
from rho_domain.config import AgentConfig
from rho_domain.errors import StoreError
from rho_domain.ports.store import SessionRecord

store = FileSessionStore(sys.argv[1])
record = SessionRecord(id="full", created_at=0.0, config=AgentConfig())
sys.dont_write_bytecode = True
resource.setrlimit(resource.RLIMIT_FSIZE, (512, 512))
try:
    asyncio.run(store.create(record))
except StoreError as exc:
    print(exc)
"""


def test_a_creation_that_fails_part_way_leaves_no_half_session(tmp_path: Path) -> None:
    """Before, the directory stayed with a config.yaml cut short and its lock file, under an
    id nobody was given: listed for good, while the CLI said "nothing was saved"."""
    done = subprocess.run(
        [sys.executable, "-c", FULL_DISK_CREATE, str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    assert "cannot create session full" in done.stdout  # the attack reached the create
    assert "File too large" in done.stdout
    assert list(tmp_path.iterdir()) == []


def test_the_root_is_made_with_the_first_session_and_again_once_removed(tmp_path: Path) -> None:
    # the root is made only when a session directory cannot be (not before each creation)
    store = FileSessionStore(tmp_path / "home" / "sessions")

    async def create(session_id: str) -> None:
        await store.create(record(session_id))
        await store.release(session_id)

    asyncio.run(create("s1"))
    shutil.rmtree(tmp_path / "home" / "sessions")
    asyncio.run(create("s2"))
    assert (tmp_path / "home" / "sessions" / "s2" / "trace.jsonl").is_file()
