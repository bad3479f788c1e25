"""One SessionCatalog / SessionControl contract, run on memory, files and a real PostgreSQL.

Each rig is the three faces of one store: the ``SessionStore`` the loop writes through, the
``SignalSource`` it listens to, and the operator's ``FileSessions`` / ``MemorySessions`` /
``PgSessions``. What an operator does through the last must reach the first two.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import attrs
import pytest
from pg_rig import pg_server_url, schema_url
from store_support import build_session

from rho_adapters.codec import encode_event_line
from rho_adapters.fakes import FakeClock, ManualSignals, MemorySessions, MemorySessionStore, text
from rho_adapters.pgstore import PgBackend, StoreAddress, of_backend
from rho_adapters.store import FileSessions, FileSessionStore, FileSignals
from rho_domain import events as ev
from rho_domain.config import AgentConfig
from rho_domain.errors import (
    ConfigError,
    SessionLocked,
    SessionNotFound,
    SessionStateError,
    StoreError,
)
from rho_domain.messages import AssistantMessage, ToolCall, Usage, UserMessage
from rho_domain.ports.session_control import (
    can_be_driven,
    held_by_live_process,
    run_in_progress,
)
from rho_domain.ports.signals import SignalSource
from rho_domain.ports.store import SessionRecord, SessionStore
from rho_domain.run import RunStatus
from rho_entry.connect import export_session

__all__ = ["pg_server_url"]  # the session-scoped server fixture, used through ``rig``


@attrs.frozen
class Rig:
    store: SessionStore
    signals: SignalSource
    sessions: Any  # a SessionCatalog and SessionControl (each adapter subclasses both)
    kind: str


@pytest.fixture(params=["memory", "file", "postgres"])
async def rig(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Rig]:
    backend = None
    if request.param == "memory":
        memory = MemorySessionStore()
        manual = ManualSignals()
        made = Rig(memory, manual, MemorySessions(memory, manual), "memory")
    elif request.param == "file":
        files = FileSessionStore(tmp_path / "sessions", heartbeat=0.05)
        made = Rig(
            files,
            FileSignals(files.session_dir, poll=0.02),
            FileSessions(files.root, poll=0.02),
            "file",
        )
    else:
        url = schema_url(request.getfixturevalue("pg_server_url"))
        backend = PgBackend(StoreAddress(url, "the test"), heartbeat=0.1, stale_after=0.5)
        pg = of_backend(backend)
        made = Rig(pg.store, pg.signals, pg.sessions, "postgres")
    yield made
    for info in await made.store.list(limit=1000):
        await made.store.release(info.id)
    if backend is not None:
        backend.close()


def record(session_id: str, at: float = 1000.0) -> SessionRecord:
    return SessionRecord(
        id=session_id,
        created_at=at,
        config=AgentConfig(model="m1", working_dir="/srv/work"),
        labels={"team": "sre"},
        parent_id="parent1",
    )


def started(run_id: str = "r1", prompt: str = "hello", at: float = 1001.0) -> list[ev.Event]:
    return [
        ev.RunStarted(at=at, run_id=run_id, prompt=prompt),
        ev.MessageAdded(at=at, message=UserMessage(prompt)),
        ev.UsageRecorded(at=at, usage=Usage(input_tokens=7, output_tokens=3), prompt_tokens=7),
    ]


def ended(status: RunStatus = RunStatus.COMPLETED, at: float = 1002.0) -> ev.Event:
    return ev.RunEnded(at=at, run_id="r1", status=status, session_usage=Usage(input_tokens=7))


CALL = ToolCall(id="call_1", name="bash", arguments='{"command": "rm -rf build"}')


def awaiting(at: float = 1001.5) -> list[ev.Event]:
    return [
        ev.MessageAdded(at=at, message=AssistantMessage(text="cleaning", tool_calls=(CALL,))),
        ev.ApprovalRequested(at=at, call=CALL, reason="bash asks", pending=(CALL,)),
        ended(RunStatus.AWAITING_APPROVAL),
    ]


def test_the_two_liveness_questions_have_one_answer_each() -> None:
    assert [
        w for w in ("running", "paused", "idle", "stale", "completed") if run_in_progress(w)
    ] == [
        "running",
        "paused",
    ]
    held = [
        w for w in ("running", "paused", "idle", "stale", "completed") if held_by_live_process(w)
    ]
    assert held == ["running", "paused", "idle"]
    assert can_be_driven("stale")
    assert not can_be_driven("idle")


async def test_liveness_follows_the_holder_and_the_trace(rig: Rig) -> None:
    await rig.store.create(record("abc123"))
    assert (await rig.sessions.info("abc123")).liveness == "idle"
    await rig.store.append("abc123", started())
    [info] = await rig.sessions.sessions()
    assert (info.id, info.status, info.liveness, info.first_prompt) == (
        "abc123",
        "running",
        "running",
        "hello",
    )
    assert info.holder is not None
    assert info.labels == {"team": "sre"}
    assert await rig.sessions.request("abc123", "pause")
    assert (await rig.sessions.info("abc123")).liveness == "paused"
    assert await rig.signals.is_paused("abc123")
    assert await rig.sessions.request("abc123", "resume")
    assert not await rig.sessions.request("abc123", "resume")  # nothing to resume
    assert not await rig.signals.is_paused("abc123")
    await rig.store.release("abc123")  # the holder is gone with the run unfinished
    await _until(lambda: _liveness(rig, "abc123"), "stale")
    info = await rig.sessions.info("abc1")  # a unique prefix
    assert (info.liveness, info.holder) == ("stale", None)


async def test_a_finished_session_shows_its_status(rig: Rig) -> None:
    await rig.store.create(record("done1"))
    await rig.store.append("done1", [*started(), ended()])
    await rig.store.release("done1")
    info = await rig.sessions.info("done1")
    assert (info.status, info.liveness, info.usage.input_tokens) == ("completed", "completed", 7)


async def test_unknown_and_ambiguous_ids_are_refused(rig: Rig) -> None:
    for session_id in ("aa11", "aa22"):
        await rig.store.create(record(session_id))
        await rig.store.release(session_id)
    with pytest.raises(SessionNotFound, match=r"aa11.*aa22"):
        await rig.sessions.info("aa")
    with pytest.raises(SessionNotFound):
        await rig.sessions.trace("zz")
    with pytest.raises(SessionNotFound):
        await rig.sessions.request("zz", "cancel")
    # no id holds a NUL or is longer than a file name: a PostgreSQL query failed on the NUL
    # (StoreError, the server's 500), the file store on the length (OSError)
    for odd in ("aa\x00", "a" * 300):
        with pytest.raises(SessionNotFound, match="no session matches"):
            await rig.sessions.info(odd)


async def test_a_short_id_beside_a_session_it_prefixes_captures_no_spelling(rig: Rig) -> None:
    """A session with a short id (a peer's row in a shared store, a directory anyone writing
    the store made) took ``3f2a`` typed for 3f2a2b3c4d5e: a spelling shorter than the ids
    rho-agent makes is a prefix, so it is ambiguous there; a whole id stays exact."""
    for session_id in ("3f2a2b3c4d5e", "3f2a", "3f2a2b3c4d5e0", "bb12"):
        await rig.store.create(record(session_id))
        await rig.store.release(session_id)
    with pytest.raises(SessionNotFound, match=r"'3f2a' is ambiguous: it matches 3f2a, 3f2a2b"):
        await rig.sessions.info("3f2a")
    with pytest.raises(SessionNotFound, match="ambiguous"):
        await rig.store.open("3f2a")  # what --resume opens
    assert (await rig.sessions.info("3f2a2b3c4d5e")).id == "3f2a2b3c4d5e"
    assert (await rig.sessions.info("bb12")).id == "bb12"  # a short id alone: still found


async def test_a_short_id_others_begin_with_is_named_whole_with_a_mark(rig: Rig) -> None:
    """``nightly`` beside ``nightly-2`` (a library user's chosen ids) was "ambiguous ... type
    more characters", which no spelling of ``nightly`` obeys: the message says ``=nightly``,
    and ``=ID`` names that whole id, never a prefix."""
    for session_id in ("nightly", "nightly-2"):
        await rig.store.create(record(session_id))
        await rig.store.release(session_id)
    with pytest.raises(SessionNotFound, match="or =nightly for the session nightly itself"):
        await rig.sessions.info("nightly")
    with pytest.raises(SessionNotFound, match=r"type more characters$"):
        await rig.sessions.info("night")  # not a whole id: no mark offered
    assert (await rig.sessions.info("=nightly")).id == "nightly"
    assert (await rig.store.open("=nightly"))[0].id == "nightly"  # what --resume opens
    for odd in ("=night", "=", "=nightly-"):
        with pytest.raises(SessionNotFound, match="no session has the whole id"):
            await rig.sessions.info(odd)


async def test_the_record_is_what_was_created(rig: Rig) -> None:
    await rig.store.create(record("rec1"))
    await rig.store.release("rec1")
    got = await rig.sessions.record("rec1")
    assert (got.id, got.parent_id, dict(got.labels), got.config.model) == (
        "rec1",
        "parent1",
        {"team": "sre"},
        "m1",
    )
    assert got.config.working_dir == "/srv/work"


async def test_trace_lines_are_the_trace_codec_byte_for_byte(rig: Rig) -> None:
    await rig.store.create(record("tr1"))
    events = [*started(), ev.TextDelta(at=1001.0, text="not kept"), ended()]
    await rig.store.append("tr1", events[:2])
    await rig.store.append("tr1", events[2:])
    lines = await rig.sessions.trace("tr1")
    expected = b"".join(encode_event_line(e) for e in events if ev.is_persistent(e))
    assert b"".join(line.data + b"\n" for line in lines) == expected
    assert [line.seq for line in lines] == [1, 2, 3, 4]
    after = await rig.sessions.trace("tr1", after=2)
    assert [line.seq for line in after] == [3, 4]
    assert after[-1].data == encode_event_line(events[-1]).rstrip(b"\n")


async def test_last_seq_is_the_last_lines_number_and_reads_follow_it(rig: Rig) -> None:
    """A live tail starts at ``last_seq``; reads after it (and after the line before it, as
    a reader checking what it saw asks) give exactly the lines appended since."""
    await rig.store.create(record("ls1"))
    assert await rig.sessions.last_seq("ls1") == 0
    await rig.store.append("ls1", started())
    assert await rig.sessions.last_seq("ls1") == 3
    assert await rig.sessions.trace("ls1", after=3) == ()
    await rig.store.append("ls1", [ended()])
    assert await rig.sessions.last_seq("ls1") == 4
    assert [line.seq for line in await rig.sessions.trace("ls1", after=3)] == [4]
    again = await rig.sessions.trace("ls1", after=2)
    assert [line.seq for line in again] == [3, 4]
    assert again[-1].data == encode_event_line(ended()).rstrip(b"\n")
    with pytest.raises(SessionNotFound):
        await rig.sessions.last_seq("no-such-session")


async def test_a_read_from_a_tail_gives_what_follows_or_the_whole_rewritten_trace(
    rig: Rig,
) -> None:
    """``trace_reads``: the whole trace first, then only the lines after the tail (the tail's
    line not read again: a listing asked for it at each poll, 100 MB a poll for a long
    last line); a trace whose tail's line was rewritten is read whole again (``restarted``)."""
    await rig.store.create(record("tail1"))
    await rig.store.append("tail1", started())
    first = (await rig.sessions.trace_reads({"tail1": None, "no-such": None}))["tail1"]
    assert first is not None
    assert (first.restarted, [line.seq for line in first.lines]) == (True, [1, 2, 3])
    again = (await rig.sessions.trace_reads({"tail1": first.tail}))["tail1"]
    assert again is not None
    assert (again.restarted, again.lines, again.tail) == (False, (), first.tail)
    await rig.store.append("tail1", [ended()])
    grown = (await rig.sessions.trace_reads({"tail1": first.tail}))["tail1"]
    assert grown is not None
    assert (grown.restarted, [line.seq for line in grown.lines]) == (False, [4])
    if rig.kind == "memory":
        return  # the fake's events are not rewritten in place
    if rig.kind == "file":  # in place, every newline where it was, the line's head changed
        trace = rig.sessions.root / "tail1" / "trace.jsonl"
        data = trace.read_bytes()
        start = data.rindex(b"\n", 0, len(data) - 1) + 1
        trace.write_bytes(data[:start] + data[start:].replace(b"run_end", b"run_xyz", 1))
    else:  # the same line written again: another version of the row
        await rig.sessions.backend.call(
            lambda conn: conn.execute("UPDATE rho_events SET line = line WHERE seq = 4")
        )
    rewritten = (await rig.sessions.trace_reads({"tail1": grown.tail}))["tail1"]
    assert rewritten is not None
    assert (rewritten.restarted, [line.seq for line in rewritten.lines]) == (True, [1, 2, 3, 4])


async def test_follow_gives_old_lines_then_new_ones_and_ends_with_the_run(rig: Rig) -> None:
    await rig.store.create(record("fol1"))
    await rig.store.append("fol1", started())
    seen: list[int] = []

    async def read() -> None:
        async for line in rig.sessions.follow("fol1", after=1):
            seen.append(line.seq)

    reader = asyncio.create_task(read())
    await _until(lambda: _now(len(seen)), 2)
    await rig.store.append("fol1", [ended()])
    await rig.store.release("fol1")
    await asyncio.wait_for(reader, 10)
    assert seen == [2, 3, 4]


async def test_a_cancel_reaches_the_waiting_run(rig: Rig) -> None:
    await rig.store.create(record("can1"))
    await rig.store.append("can1", started())
    waiting = asyncio.create_task(rig.signals.wait_for_cancel("can1"))
    await asyncio.sleep(0.05)
    assert not waiting.done()
    assert await rig.sessions.request("can1", "cancel")
    await asyncio.wait_for(waiting, 5)
    await rig.signals.clear_cancel("can1")
    again = asyncio.create_task(rig.signals.wait_for_cancel("can1"))
    await asyncio.sleep(0.1)
    assert not again.done()  # consumed: the next run is not cancelled too
    again.cancel()


async def test_directives_are_numbered_and_read_after_an_offset(rig: Rig) -> None:
    await rig.store.create(record("dir1"))
    assert await rig.sessions.add_directive("dir1", "focus on tests") == 0
    assert await rig.sessions.add_directive("dir1", "then docs") == 1
    got = await rig.signals.directives("dir1", after=1)
    assert [(d.offset, d.text) for d in got] == [(1, "then docs")]
    # text a PostgreSQL text column cannot hold (it refused the NUL: 'PostgreSQL text fields
    # cannot contain NUL (0x00) bytes'), and text starting as the column's encoded form does
    odd = ["a\x00b", '\x01"x"', "\x01"]
    for odd_text in odd:
        await rig.sessions.add_directive("dir1", odd_text)
    got = await rig.signals.directives("dir1", after=2)
    assert [d.text for d in got] == odd
    # a directive that says nothing was queued, and read as an empty operator message
    for blank in ("", " \n\t"):
        with pytest.raises(ConfigError, match="nothing was queued"):
            await rig.sessions.add_directive("dir1", blank)
    assert await rig.sessions.add_directive("dir1", "last") == 2 + len(odd)


async def test_an_export_is_asked_answered_and_read(rig: Rig) -> None:
    await rig.store.create(record("exp1"))
    request_id = "ask1"
    await rig.sessions.request_export("exp1", request_id)
    assert await rig.signals.export_requests("exp1") == (request_id,)
    assert await rig.sessions.export_answer("exp1", request_id) is None
    await rig.signals.answer_export("exp1", request_id, "# context\n")
    assert await rig.sessions.export_answer("exp1", request_id) == "# context\n"
    assert await rig.signals.export_requests("exp1") == ()
    nul = "ask2"  # a history holding a NUL
    await rig.sessions.request_export("exp1", nul)
    for named in ("../ask3", "ask/3", "", "latest"):  # the id names a file or a row: plain only
        with pytest.raises(StoreError, match="an export request id is ASCII letters"):
            await rig.sessions.request_export("exp1", named)
    await rig.signals.answer_export("exp1", nul, "# context\nuser: a\x00b\n")
    assert await rig.sessions.export_answer("exp1", nul) == "# context\nuser: a\x00b\n"


async def test_an_export_request_interrupted_as_it_is_made_is_withdrawn(
    rig: Rig, monkeypatch: pytest.MonkeyPatch
) -> None:
    # SIGHUP reached `monitor connect` while the request's file was being made (its fsync):
    # the store's id was lost with the interrupt, and the request stayed in the source for it
    # to answer unasked. The asker names the request first and withdraws it by that name.
    await rig.store.create(record("int1"))
    await rig.store.append("int1", started())
    assert (await rig.sessions.info("int1")).liveness == "running"
    made = rig.sessions.request_export

    async def interrupted(session_id: str, request_id: str) -> None:
        await made(session_id, request_id)
        raise asyncio.CancelledError  # as the runner cancels the task the interrupt stopped

    monkeypatch.setattr(rig.sessions, "request_export", interrupted)
    with pytest.raises(asyncio.CancelledError):
        await export_session(rig.sessions, "int1", wait=30)
    assert await rig.signals.export_requests("int1") == ()


async def test_a_pending_approval_is_listed_and_answered_once_released(rig: Rig) -> None:
    await rig.store.create(record("app1"))
    await rig.store.append("app1", [*started(), *awaiting()])
    [pending] = await rig.sessions.approvals("app1")
    assert (pending.call_id, pending.tool, pending.reason) == ("call_1", "bash", "bash asks")
    with pytest.raises(SessionLocked):
        await rig.sessions.answer("app1", "call_1", approved=True)  # its holder answers
    await rig.store.release("app1")
    with pytest.raises(SessionStateError, match="call_1"):
        await rig.sessions.answer("app1", "call_9", approved=True)
    await rig.sessions.answer("app1", "call_1", approved=False, reason="not today")
    assert await rig.sessions.approvals("app1") == ()
    _, events = await rig.store.open("app1")
    answer = events[-1]
    assert isinstance(answer, ev.ApprovalResolved)
    assert (answer.call_id, answer.approved, answer.reason) == ("call_1", False, "not today")
    assert await rig.store.list()  # the answer left the session whole (and reopened)


async def test_a_session_run_reads_back_through_the_catalog(rig: Rig) -> None:
    session = build_session([text("done")], store=rig.store, clock=FakeClock(), signals=rig.signals)
    assert (await session.run("say hi")).ok
    await session.close()
    info = await rig.sessions.info(session.id)
    assert (info.liveness, info.first_prompt) == ("completed", "say hi")
    kinds = [
        line.data.split(b'"kind":"')[1].split(b'"')[0]
        for line in await rig.sessions.trace(session.id)
    ]
    assert (kinds[0], kinds[-1]) == (b"run_start", b"run_end")


async def _liveness(rig: Rig, session_id: str) -> str:
    return str((await rig.sessions.info(session_id)).liveness)


async def _now(value: object) -> object:
    return value


async def _until(probe: Any, expected: object, timeout: float = 5.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while (got := await probe()) != expected:
        assert asyncio.get_running_loop().time() < deadline, f"still {got!r}"
        await asyncio.sleep(0.02)


async def test_a_recording_is_the_record_and_events_without_the_lock(rig: Rig) -> None:
    await rig.store.create(record("rec2"))
    events = [*started(), ended()]
    await rig.store.append("rec2", events)
    got_record, got_events = await rig.sessions.recording("rec2")  # held: read anyway
    assert (got_record.id, got_record.parent_id) == ("rec2", "parent1")
    assert got_events == tuple(events)
