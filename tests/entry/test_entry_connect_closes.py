"""connect closes what it opens, on success, on an error and on a cancellation.

The store it chooses from ``root`` (a PostgreSQL URL here: the server's ``pg_stat_activity``
counts this process's connections by an ``application_name`` of the test's own), the
coordinator's hold on its session (a file store's lock, cancelled while it was being created)
and an export request no answer came for (cancelled while a running session was asked).
"""

from __future__ import annotations

import asyncio
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

from rho_adapters.store import FileSessionStore
from rho_domain import events as ev
from rho_domain.config import AgentConfig
from rho_domain.errors import SessionNotFound
from rho_domain.messages import UserMessage
from rho_domain.ports.store import SessionRecord, SessionStore
from rho_entry.config.stores import choose_store
from rho_entry.connect import connect

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "store"))
from pg_rig import connections, named, pg_server_url, schema_url

__all__ = ["pg_server_url"]


async def _stored(store: SessionStore, session_id: str, *, hold: bool = False) -> str:
    """A session with a run that asked one thing in ``store``: released, or held (``hold``),
    its run still going on as far as anyone asking it can tell."""
    record = SessionRecord(id=session_id, created_at=1000.0, config=AgentConfig(model="m1"))
    await store.create(record)
    start = ev.RunStarted(at=1000.0, run_id="r1", prompt="go")
    message = ev.MessageAdded(at=1000.0, message=UserMessage(f"what {session_id} knows"))
    await store.append(session_id, [start, message])
    if not hold:
        await store.release(session_id)
    return session_id


async def _none_left(server_url: str, name: str, within: float = 5.0) -> int:
    """This process's connections under ``name`` once they settle (the server drops a closed
    connection's row shortly after), waited for with the loop running."""
    deadline = time.monotonic() + within
    while (count := connections(server_url, name)) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    return count


async def test_the_postgresql_store_it_opens_is_closed_after_success_and_error(
    pg_server_url: str,
) -> None:
    from rho_adapters.pgstore import postgres_store

    url = schema_url(pg_server_url)
    name = f"rho-connect-{uuid.uuid4().hex[:8]}"
    store_url = named(url, name)
    source = postgres_store(url, origin="the test")
    try:
        await _stored(source.store, "pgsource0001")
    finally:
        await source.aclose()

    connected = await connect(["pgsource0001"], root=store_url, wait=0)
    assert [e.session_id for e in connected.sources] == ["pgsource0001"]
    assert await _none_left(pg_server_url, name) == 0  # the pool and listener given back

    with pytest.raises(SessionNotFound):
        await connect(["nope"], root=store_url, wait=0)
    assert await _none_left(pg_server_url, name) == 0

    check = postgres_store(url, origin="the test")  # and the coordinator was stored
    try:
        _record, events = await check.sessions.recording(connected.session_id)
        assert "what pgsource0001 knows" in str(events)
    finally:
        await check.aclose()


async def test_a_cancellation_while_the_coordinator_is_created_releases_it(
    tmp_path: Path,
) -> None:
    await _stored(FileSessionStore(tmp_path), "filesource01")
    chosen = choose_store(tmp_path, {}, origin="the test")
    store = chosen.store
    assert isinstance(store, FileSessionStore)
    entered, gate, created = threading.Event(), threading.Event(), threading.Event()
    create = store._create

    def held_create(record: SessionRecord) -> None:  # the create's thread, held midway
        entered.set()
        gate.wait(30)
        try:
            create(record)
        finally:
            created.set()

    store._create = held_create  # type: ignore[method-assign]
    asking = asyncio.ensure_future(connect(["filesource01"], store=chosen, wait=0))
    try:
        assert await asyncio.to_thread(entered.wait, 30), "the coordinator was never created"
        asking.cancel()
        await asyncio.sleep(0.05)  # the cancellation is delivered while the thread is held
    finally:
        gate.set()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(asking, 30)
    assert await asyncio.to_thread(created.wait, 30)  # the create's thread is done
    (coordinator,) = [p.name for p in tmp_path.iterdir() if p.name != "filesource01"]
    # released: its lock is free, so another store object (as another process) opens it
    other = FileSessionStore(tmp_path)
    record, _events = await other.open(coordinator)
    await other.release(coordinator)
    assert record.labels["connected_from"] == "filesource01"


async def test_a_cancellation_while_a_running_session_is_asked_withdraws_the_request(
    tmp_path: Path,
) -> None:
    running = FileSessionStore(tmp_path)
    await _stored(running, "running00001", hold=True)  # held by this process: running
    exports = tmp_path / "running00001" / "exports"
    try:
        asking = asyncio.ensure_future(connect(["running00001"], root=tmp_path, wait=30))
        for _ in range(600):
            if exports.is_dir() and list(exports.glob("*.request")):
                break
            await asyncio.sleep(0.05)
        else:
            raise AssertionError("connect never asked for the export")
        asking.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(asking, 30)
        assert list(exports.glob("*.request")) == []  # nobody would read its answer
    finally:
        await running.release("running00001")
