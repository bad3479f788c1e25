"""An approval over HTTP answers the call run where it was shown to run.

A session released after ``approval_hold`` is reopened by the answer from its stored
``config.yaml``. Before, a writer of that file could move ``working_dir`` (inside the
roots, so reopening took it) between the showing and the answer: the approved call ran in
the other directory. Now the shown digest covers the directory, the reopened session checks
it against its own, and the answer is refused (409, nothing runs, the call still waits)."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from server_support import app_for, client_for, opened_meanwhile, place, shown_in, wait_idle

from rho_adapters.fakes import ScriptedModel, call, text, tools
from rho_adapters.store import FileSessionStore
from rho_entry.server.answers import Answer
from rho_entry.server.errors import Conflict

WRITE = call("write", {"path": "out.txt", "content": "hi\n"}, id="c1")


async def test_an_answer_after_config_yaml_moved_working_dir_is_refused(tmp_path: Path) -> None:
    where = place(tmp_path)
    (where.work / "sub").mkdir()
    app = app_for(where, ScriptedModel([tools(WRITE), text("Wrote it.")]), approval_hold=0.0)
    async with client_for(app) as client:
        sid = (await _create(client))["id"]
        handle = app.state.host.runs.handles[sid]
        detail = await wait_idle(client, sid)
        await asyncio.wait_for(handle.wait_done(), 30)  # released (bounded: never hang)
        in_work = os.path.realpath(where.work)
        (shown,) = detail["pending_approvals"]
        assert shown["working_dir"] == in_work
        assert shown["digest"] == shown_in(where.work, WRITE.name, WRITE.arguments)
        config = where.sessions / sid / "config.yaml"
        text_before = config.read_text(encoding="utf-8")
        assert f"working_dir: {in_work}" in text_before
        config.write_text(text_before.replace(in_work, f"{in_work}/sub"), encoding="utf-8")

        approve = {"decision": "approve", "digest": shown["digest"]}
        refused = await client.post(f"/api/sessions/{sid}/approvals/c1", json=approve)
        assert refused.status_code == 409, refused.text
        message = refused.json()["error"]["message"]
        assert f"asked about to run in {in_work}, but the session now runs it in" in message
        assert "the directory changed" in message
        detail = await wait_idle(client, sid)
        assert detail["status"] == "awaiting_approval"
        assert [p["call_id"] for p in detail["pending_approvals"]] == ["c1"]
        assert not (where.work / "sub" / "out.txt").exists()

    assert not (where.work / "out.txt").exists()  # an unchanged session approves:
    # test_server_api.py's test_a_session_waiting_too_long_for_approval_is_released


async def test_a_refused_answer_lets_go_of_the_session_reopened_for_it(tmp_path: Path) -> None:
    """The session reopened with the edited config.yaml is not kept: before, it stayed held
    (never released, whatever ``approval_hold``: a reopened session ends no run), so with
    config.yaml put back the answer was still refused ("now runs it in .../sub")."""
    where = place(tmp_path)
    (where.work / "sub").mkdir()
    app = app_for(where, ScriptedModel([tools(WRITE), text("Wrote it.")]), approval_hold=0.0)
    async with client_for(app) as client:
        sid = (await _create(client))["id"]
        runs = app.state.host.runs
        handle = runs.handles[sid]
        detail = await wait_idle(client, sid)
        await asyncio.wait_for(handle.wait_done(), 30)
        in_work = os.path.realpath(where.work)
        config = where.sessions / sid / "config.yaml"
        text_before = config.read_text(encoding="utf-8")
        config.write_text(text_before.replace(in_work, f"{in_work}/sub"), encoding="utf-8")
        approve = {"decision": "approve", "digest": detail["pending_approvals"][0]["digest"]}
        refused = await client.post(f"/api/sessions/{sid}/approvals/c1", json=approve)
        assert refused.status_code == 409, refused.text
        assert sid not in runs.handles  # let go at once, not held with the edited config

        config.write_text(text_before, encoding="utf-8")
        answered = await client.post(f"/api/sessions/{sid}/approvals/c1", json=approve)
        assert answered.status_code == 202, answered.text
        assert (await wait_idle(client, sid))["status"] == "completed"
    assert (where.work / "out.txt").read_text(encoding="utf-8") == "hi\n"
    assert not (where.work / "sub" / "out.txt").exists()


async def test_a_session_still_opening_when_its_answer_gave_up_is_released(
    tmp_path: Path,
) -> None:
    """Reopened for an answer that gave up waiting for it (409, ``answer_grace``), it settles
    waiting for approval afterwards: released after ``approval_hold`` (before, never: a
    reopened session ends no run, so it was held, and locked, until the server stopped)."""
    where = place(tmp_path)
    model = ScriptedModel([tools(WRITE), text("Wrote it.")])
    app = app_for(where, model, approval_hold=0.0, answer_grace=0.0)
    async with client_for(app) as client:
        sid = (await _create(client))["id"]
        runs = app.state.host.runs
        first = runs.handles[sid]
        detail = await wait_idle(client, sid)
        await asyncio.wait_for(first.wait_done(), 30)
        approve = {"decision": "approve", "digest": detail["pending_approvals"][0]["digest"]}
        busy = await client.post(f"/api/sessions/{sid}/approvals/c1", json=approve)
        assert busy.status_code == 409, busy.text
        assert "is running" in busy.json()["error"]["message"]
        reopened = runs.runtime.get_handle(sid)
        assert reopened is not None
        await asyncio.wait_for(reopened.wait_done(), 30)  # released, not held for good
        assert sid not in runs.handles


async def test_a_trace_rewritten_in_place_is_shown_as_it_is_now(tmp_path: Path) -> None:
    """What an answer binds to is read whole, never from a read's mark: a trace whose lines
    were rewritten in place with the same lengths (what ``TraceMarks`` does not notice, by
    design: it re-reads none of what it read) shows the call as it is now, and the digest
    shown is that call's. A stream replayed from the start shows it too."""
    where = place(tmp_path)
    app = app_for(where, ScriptedModel([tools(WRITE), text("Wrote it.")]))
    async with client_for(app) as client:
        sid = (await _create(client))["id"]
        await wait_idle(client, sid)  # the stream and the listing took their marks
        assert (await client.get("/api/sessions")).status_code == 200
        trace = where.sessions / sid / "trace.jsonl"
        data = trace.read_bytes()
        with trace.open("r+b") as handle:  # the same inode, lengths and newlines
            handle.write(data.replace(b"out.txt", b"etc.txt"))
        (shown,) = (await client.get(f"/api/sessions/{sid}")).json()["pending_approvals"]
        assert '"etc.txt"' in shown["arguments"]
        moved = call("write", {"path": "etc.txt", "content": "hi\n"}, id="c1")
        assert shown["digest"] == shown_in(where.work, moved.name, moved.arguments)
        replay = await client.get(f"/api/sessions/{sid}/stream", params={"until": "idle"})
        assert "out.txt" not in replay.text


async def test_an_answer_while_the_hold_lets_go_is_taken(tmp_path: Path) -> None:
    """``approval_hold`` let the session go (``handle.cancel``) and an answer came while it
    closed: that handle took no answer any more, so the answer was a 404 "no tool call 'c1'
    awaits approval (pending: none)", while c1 still waited in the trace (a retry a moment
    later was taken). Now the answer waits for the session to close, reopens it, and runs."""
    where = place(tmp_path)
    app = app_for(where, ScriptedModel([tools(WRITE), text("Wrote it.")]))
    async with client_for(app) as client:
        sid = (await _create(client))["id"]
        (shown,) = (await wait_idle(client, sid))["pending_approvals"]
        runs = app.state.host.runs
        held = runs.handles[sid]
        # its session is released only once the answer waits for it: the answer comes
        # mid-close, whatever the machine's load
        gate, store = asyncio.Event(), app.state.host.store
        release, wait_closed = store.release, runs.closed

        async def slow_release(session_id: str) -> None:
            await gate.wait()
            await release(session_id)

        async def closed(handle: object, grace: float) -> None:
            gate.set()
            await wait_closed(handle, grace)

        store.release, runs.closed = slow_release, closed
        held.cancel()  # what the hold does once approval_hold has passed
        approve = {"decision": "approve", "digest": shown["digest"]}
        answered = await client.post(f"/api/sessions/{sid}/approvals/c1", json=approve)
        gate.set()
        assert answered.status_code == 202, answered.text
        assert (await wait_idle(client, sid))["status"] == "completed"
    assert (where.work / "out.txt").read_text() == "hi\n"


async def test_only_the_calls_asked_about_are_listed_as_waiting(tmp_path: Path) -> None:
    """A turn of two writes stops for approval of the first; the second is asked about only
    once the first is answered. GET /api/sessions/ID (and the store's ``approvals``, which
    ``rho-agent monitor`` answers from) listed both, the second with a digest of no place
    (``working_dir`` ''): answered in the listed order (``rho-agent --server``'s prompt does),
    the second was refused, 'changed since it was shown', though nothing had changed."""
    where = place(tmp_path)
    second = call("write", {"path": "b.txt", "content": "b\n"}, id="c2")
    app = app_for(where, ScriptedModel([tools(WRITE, second), text("Wrote them.")]))
    async with client_for(app) as client:
        sid, in_work = (await _create(client))["id"], os.path.realpath(where.work)
        for call_id in ("c1", "c2"):
            (shown,) = (await wait_idle(client, sid))["pending_approvals"]
            assert (shown["call_id"], shown["working_dir"]) == (call_id, in_work)
            stored = await app.state.host.sessions.approvals(sid)
            assert [p.call_id for p in stored] == [call_id]
            approve = {"decision": "approve", "digest": shown["digest"]}
            answered = await client.post(f"/api/sessions/{sid}/approvals/{call_id}", json=approve)
            assert answered.status_code == 202, answered.text
        assert (await wait_idle(client, sid))["status"] == "completed"
    assert (where.work / "b.txt").read_text() == "b\n"


async def test_two_answers_at_once_to_a_released_session(tmp_path: Path) -> None:
    """Two answers to a released session at once (a double click, a retry): both found no
    handle and both reopened it; the second was refused 409 in the runtime's words for
    library callers ('await that handle (runtime.get_handle(...))'). Now answers to a
    session take turns: the second finds the call answered, a 404 as on a held session."""
    where = place(tmp_path)
    app = app_for(where, ScriptedModel([tools(WRITE), text("Wrote it.")]), approval_hold=0.0)
    async with client_for(app) as client:
        sid = (await _create(client))["id"]
        runs, sessions = app.state.host.runs, app.state.host.sessions
        first = runs.handles[sid]
        (shown,) = (await wait_idle(client, sid))["pending_approvals"]
        await asyncio.wait_for(first.wait_done(), 30)  # released
        # both answers have found no handle (or the second waits its turn) before either
        # reopens it: the race, whatever the machine's load
        arrived, both = [0, 0], asyncio.Event()

        def arrive(at: int) -> None:
            arrived[at] += 1
            if sum(arrived) == 2:
                both.set()

        recording, answering = sessions.recording, runs.turn

        async def gated(session_id: str) -> object:
            arrive(0)
            await both.wait()
            return await recording(session_id)

        @contextlib.asynccontextmanager
        async def taking_turns(session_id: str) -> AsyncIterator[None]:
            if arrived[1] == 0 and len(turns) == 1:
                arrive(1)  # waits behind the first
            turns.append(session_id)
            async with answering(session_id):
                yield

        turns: list[str] = []
        sessions.recording, runs.turn = gated, taking_turns
        approve = {"decision": "approve", "digest": shown["digest"]}
        answers = await asyncio.gather(
            *(client.post(f"/api/sessions/{sid}/approvals/c1", json=approve) for _ in "ab")
        )
        assert sorted(a.status_code for a in answers) == [202, 404], [a.text for a in answers]
        assert "(pending: none)" in max(answers, key=lambda a: a.status_code).text
        assert (await wait_idle(client, sid))["status"] == "completed"
        # a dispatch that finds the session taken anyway is refused in a route's words
        feed, done = await app.state.host.feeds.current(sid), app.state.host.feeds.done(sid)
        reopened = await runs.dispatch(sid, None, feed, done=done)
        try:
            with pytest.raises(Conflict, match=r"^session \w+ was taken by another request"):
                await runs.dispatch(sid, None, feed, done=done)
        finally:
            await asyncio.wait_for(reopened.wait_done(), 30)
    assert (where.work / "out.txt").read_text() == "hi\n"


async def test_a_message_while_the_hold_lets_go_is_taken(tmp_path: Path) -> None:
    """A chat message that came while ``approval_hold`` let the session go (its handle
    closing: status running, no run in progress) was a 409 'is running; wait for it or
    cancel it', though a retry a moment later was taken. Now it waits for the close
    (``answer_grace``) and starts its run, superseding the pending call."""
    where = place(tmp_path)
    app = app_for(where, ScriptedModel([tools(WRITE), text("Left it.")]))
    async with client_for(app) as client:
        sid = (await _create(client))["id"]
        await wait_idle(client, sid)
        runs, store = app.state.host.runs, app.state.host.store
        held = runs.handles[sid]
        # its session is released only once the message waits for it: mid-close, whatever
        # the machine's load
        gate = asyncio.Event()
        release, wait_closed = store.release, runs.closed

        async def slow_release(session_id: str) -> None:
            await gate.wait()
            await release(session_id)

        async def closed(handle: object, grace: float) -> None:
            gate.set()
            await wait_closed(handle, grace)

        store.release, runs.closed = slow_release, closed
        held.cancel()  # what the hold does once approval_hold has passed
        assert held.closing
        sent = await client.post(f"/api/sessions/{sid}/chat", json={"prompt": "leave it"})
        gate.set()
        assert sent.status_code == 202, sent.text
        assert (await wait_idle(client, sid))["status"] == "completed"
    assert not (where.work / "out.txt").exists()  # superseded, never run


async def test_a_session_reopened_for_an_answer_that_ends_or_is_left(tmp_path: Path) -> None:
    """Reopened for an answer, the session ended before it took it: another process opened
    it meanwhile (a terminal's ``--resume``; on a shared store, another host), or a cancel
    came while it opened. The answer was a 404 'pending: none' though the call still waited
    (now a 409 saying why). An answer whose request was cancelled while the session opened
    (client gone, shutdown) left it held until the server stopped (now released after the
    hold)."""
    where = place(tmp_path)
    app = app_for(where, ScriptedModel([tools(WRITE), text("Wrote it.")]), approval_hold=0.0)
    async with client_for(app) as client:
        sid = (await _create(client))["id"]
        host = app.state.host
        runs, sessions, store = host.runs, host.sessions, host.store
        first = runs.handles[sid]
        (shown,) = (await wait_idle(client, sid))["pending_approvals"]
        await asyncio.wait_for(first.wait_done(), 30)  # released
        approve = {"decision": "approve", "digest": shown["digest"]}
        url = f"/api/sessions/{sid}/approvals/c1"

        # another process opens it between the answer's checks and its reopening
        other = FileSessionStore(where.sessions)
        with opened_meanwhile(sessions, other):
            refused = await client.post(url, json=approve)
        await other.release(sid)
        assert refused.status_code == 409, refused.text
        assert "ended before it took the answer (session" in refused.text
        assert "'c1' still waits" in refused.text

        # a cancel, and then a cancelled request, while the reopened session opens
        entered, gate, open_ = asyncio.Event(), asyncio.Event(), store.open

        async def slow_open(session_id: str) -> object:
            entered.set()
            await gate.wait()
            return await open_(session_id)

        store.open = slow_open
        answering = asyncio.ensure_future(client.post(url, json=approve))
        await entered.wait()
        assert (await client.post(f"/api/sessions/{sid}/cancel")).status_code == 202
        gate.set()
        refused = await answering
        assert refused.status_code == 409, refused.text
        assert "ended before it took the answer (cancelled)" in refused.text
        entered.clear()
        gate.clear()
        answer = Answer(call_id="c1", decision="approve", digest=shown["digest"])
        gone = asyncio.ensure_future(host.answer(sid, "c1", answer.decision, answer.digest))
        await entered.wait()
        reopened = runs.runtime.get_handle(sid)
        assert reopened is not None
        gone.cancel()
        gate.set()
        store.open = open_
        await asyncio.wait_for(reopened.wait_done(), 30)  # let go by the hold, not kept
        assert reopened.status.value == "cancelled"

        answered = await client.post(url, json=approve)  # the call waited all along
        assert answered.status_code == 202, answered.text
        assert (await wait_idle(client, sid))["status"] == "completed"
    assert (where.work / "out.txt").read_text() == "hi\n"


async def _create(client: object) -> dict[str, str]:
    response = await client.post(  # type: ignore[attr-defined]
        "/api/sessions", json={"prompt": "write", "profile": "developer"}
    )
    assert response.status_code == 201, response.text
    return dict(response.json())
