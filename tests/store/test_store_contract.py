"""One SessionStore contract, run on the in-memory fake, the file store and PostgreSQL."""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
from pg_rig import pg_server_url, schema_url
from store_support import build_session

from rho_adapters.fakes import FakeClock, MemorySessionStore, call, text, tools
from rho_adapters.pgstore import PgBackend, StoreAddress, of_backend
from rho_adapters.store import FileSessionStore
from rho_domain import events as ev
from rho_domain.config import AgentConfig
from rho_domain.errors import SessionLocked, SessionNotFound, StoreError
from rho_domain.messages import Usage, UserMessage
from rho_domain.permissions import developer_profile
from rho_domain.ports.store import FIRST_PROMPT_CHARS, SessionRecord, SessionStore
from rho_domain.run import RunStatus
from rho_domain.state import State

Factory = Callable[[Path], SessionStore]
FACTORIES: dict[str, Factory] = {
    "memory": lambda _: MemorySessionStore(),
    "file": lambda tmp: FileSessionStore(tmp / "sessions", heartbeat=0.05),
}


__all__ = ["pg_server_url"]  # the session-scoped PostgreSQL, used by the postgres case


@pytest.fixture(params=[*sorted(FACTORIES), "postgres"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[SessionStore]:
    backend = None
    if request.param == "postgres":
        url = schema_url(request.getfixturevalue("pg_server_url"))
        backend = PgBackend(StoreAddress(url, "the test"), heartbeat=0.1, stale_after=0.5)
        made: SessionStore = of_backend(backend).store
    else:
        made = FACTORIES[request.param](tmp_path)
    yield made
    for info in await made.list(limit=1000):
        await made.release(info.id)  # stop heartbeats; release is idempotent
    if backend is not None:
        backend.close()


def record(session_id: str, at: float = 1000.0, **config: object) -> SessionRecord:
    return SessionRecord(
        id=session_id,
        created_at=at,
        config=AgentConfig(model="m1", **config),  # type: ignore[arg-type]
        labels={"team": "sre"},
        parent_id="parent1",
    )


def run_events(run_id: str, prompt: str, at: float = 1001.0) -> list[ev.Event]:
    return [
        ev.RunStarted(at=at, run_id=run_id, prompt=prompt),
        ev.MessageAdded(at=at, message=UserMessage(prompt)),
        ev.TextDelta(at=at, text="ephemeral"),
        ev.UsageRecorded(at=at, usage=Usage(input_tokens=7, output_tokens=3), prompt_tokens=7),
    ]


async def test_created_session_is_listed(store: SessionStore) -> None:
    await store.create(record("abc123", profile=developer_profile()))
    [info] = await store.list()
    assert (info.id, info.model, info.profile, info.parent_id) == (
        "abc123",
        "m1",
        "developer",
        "parent1",
    )
    assert info.created_at == 1000.0


async def test_creating_an_existing_id_fails(store: SessionStore) -> None:
    await store.create(record("abc123"))
    with pytest.raises(StoreError, match="abc123"):
        await store.create(record("abc123"))


async def test_reopen_returns_record_and_persistent_events_in_order(store: SessionStore) -> None:
    await store.create(record("abc123"))
    events = run_events("r1", "hello")
    await store.append("abc123", events)
    await store.release("abc123")
    got_record, got_events = await store.open("abc123")
    assert got_record.id == "abc123"
    assert got_record.config == AgentConfig(model="m1")
    assert got_record.labels == {"team": "sre"}
    assert got_record.parent_id == "parent1"
    assert list(got_events) == [e for e in events if ev.is_persistent(e)]


async def test_a_held_session_cannot_be_opened_twice(store: SessionStore) -> None:
    await store.create(record("abc123"))
    with pytest.raises(SessionLocked):
        await store.open("abc123")
    await store.release("abc123")
    await store.release("abc123")  # idempotent
    await store.open("abc123")
    with pytest.raises(SessionLocked):
        await store.open("abc123")


async def test_prefixes_latest_and_unknown_ids(store: SessionStore) -> None:
    for i, session_id in enumerate(("aa11", "aa22", "bb33")):
        await store.create(record(session_id, at=1000.0 + i))
        await store.release(session_id)
    record_b, _ = await store.open("bb")
    assert record_b.id == "bb33"
    await store.release("bb33")
    record_latest, _ = await store.open("latest")
    assert record_latest.id == "bb33"
    await store.release("bb33")
    with pytest.raises(SessionNotFound, match=r"aa11.*aa22"):
        await store.open("aa")
    with pytest.raises(SessionNotFound):
        await store.open("zz")


async def test_a_long_first_prompt_is_listed_cut_and_kept_whole_in_the_trace(
    store: SessionStore,
) -> None:
    # meta.json (and PostgreSQL's summary) kept the whole first prompt: a 20 MB prompt made a
    # 20 MB meta.json, rewritten at every status change and heartbeat, read by every listing.
    prompt = "é" * FIRST_PROMPT_CHARS + "the end"
    listed = "é" * FIRST_PROMPT_CHARS + "…"
    await store.create(record("long"))
    await store.append("long", run_events("r1", prompt))
    assert [info.first_prompt for info in await store.list()] == [listed]
    await store.release("long")
    _, events = await store.open("long")  # a store rebuilds its summary from the trace here
    assert [e.prompt for e in events if isinstance(e, ev.RunStarted)] == [prompt]
    assert [info.first_prompt for info in await store.list()] == [listed]
    await store.release("long")


async def test_list_is_newest_first_and_limited(store: SessionStore) -> None:
    for i in range(5):
        await store.create(record(f"s{i}", at=1000.0 + i))
    infos = await store.list(limit=3)
    assert [i.id for i in infos] == ["s4", "s3", "s2"]


async def test_list_reports_status_prompt_usage_and_liveness(store: SessionStore) -> None:
    await store.create(record("live"))
    await store.append("live", run_events("r1", "first question"))
    [info] = await store.list()
    assert (info.status, info.liveness, info.first_prompt) == (
        "running",
        "running",
        "first question",
    )
    assert info.usage.input_tokens == 7
    end = ev.RunEnded(
        at=1002.0,
        run_id="r1",
        status=RunStatus.COMPLETED,
        session_usage=Usage(input_tokens=7, output_tokens=3),
    )
    await store.append("live", [end])
    [info] = await store.list()
    assert info.status == "completed"
    assert info.usage.output_tokens == 3


async def test_a_running_session_whose_holder_left_is_stale(store: SessionStore) -> None:
    await store.create(record("gone"))
    await store.append("gone", run_events("r1", "q"))
    await store.release("gone")  # as if the process died without ending the run
    [info] = await store.list()
    assert info.liveness == "stale"


async def test_an_append_cancelled_while_it_writes_has_taken_its_events_once(
    store: SessionStore,
) -> None:
    # A worker stopping cancels a run while its run_end is written; the journal does not
    # append again what a cancelled append took, so the store must have taken it all.
    await store.create(record("abc123"))
    events = [
        *run_events("r1", "hello"),
        ev.RunEnded(at=1002.0, run_id="r1", status=RunStatus.COMPLETED),
    ]
    appending = asyncio.ensure_future(store.append("abc123", events))
    await asyncio.sleep(0)  # begun, as the journal's own await begins it
    appending.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await appending
    await store.release("abc123")
    _, stored = await store.open("abc123")
    assert list(stored) == [e for e in events if ev.is_persistent(e)]


async def test_append_to_an_unknown_session_fails(store: SessionStore) -> None:
    with pytest.raises(StoreError):
        await store.append("nope", run_events("r1", "q"))


async def test_a_session_run_replays_to_the_same_state(store: SessionStore) -> None:
    turns = [tools(call("echo", {"text": "hi"}), input_tokens=10, output_tokens=2), text("done")]
    session = build_session(turns, store=store, clock=FakeClock())
    result = await session.run("say hi")
    assert result.ok
    await session.close()
    _, events = await store.open(session.id)
    replayed = State.from_events(events)
    assert replayed.messages == session.state.messages
    assert replayed.usage == session.state.usage
    assert replayed.status == session.state.status == "completed"
    assert replayed.run_count == 1


async def test_latest_is_never_a_session_whose_time_is_no_time(store: SessionStore) -> None:
    """A created time of NaN or an infinity (a hand edit of the row or meta.json, a library
    caller's record) is listed as no time; PostgreSQL sorts NaN and Infinity above every
    time, so such a session was ``latest`` however old (a resume of 'latest' continued it)
    and first in a listing (a hundred such rows pushed every real one out). So is a time no
    clock has reached (more than a day ahead: 2096), which was ``latest`` in every store."""
    ahead = time.time() + 70 * 365 * 86_400
    planted = (("zz1", math.nan), ("zz2", math.inf), ("zz3", ahead))
    for session_id, at in (("aa11", time.time() + 3600), *planted):
        await store.create(record(session_id, at=at))
        await store.release(session_id)
    assert (await store.open("latest"))[0].id == "aa11"
    await store.release("aa11")
    assert (await store.list(limit=1))[0].id == "aa11"  # nor first in a listing
    assert len(await store.list(limit=4)) == 4


async def test_latest_among_sessions_of_no_time_is_the_greatest_id(store: SessionStore) -> None:
    """Sessions all dated where no clock has been (2096, NaN: a reader whose clock is behind
    the writers' by more than a day sees every session so) are ordered by id, the greatest
    first, in every store: the memory store took the first created (its ``max`` and sort
    kept ties in insertion order), where files and PostgreSQL take the greatest id."""
    ahead = time.time() + 70 * 365 * 86_400
    for session_id, at in (("bb1", ahead), ("bb3", math.nan), ("bb2", ahead)):
        await store.create(record(session_id, at=at))
        await store.release(session_id)
    assert (await store.open("latest"))[0].id == "bb3"
    await store.release("bb3")
    assert [info.id for info in await store.list(limit=3)] == ["bb3", "bb2", "bb1"]
