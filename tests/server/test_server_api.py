"""Every route and error of the server, driven in-process through httpx.ASGITransport, with
a scripted model behind the ChatModel port and the real file store and tools."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest
from server_support import (
    Place,
    app_for,
    by_prompt,
    client_for,
    parse_sse,
    place,
    shown_in,
    wait_idle,
)

from rho_adapters.fakes import ScriptedModel, call, text, tools
from rho_adapters.store import read_trace
from rho_domain import events as ev

WRITE = call("write", {"path": "out.txt", "content": "hi\n"}, id="c1")


def _answered(where: Place) -> str:
    """What GET .../{id} shows for c1, run in ``where.work``."""
    return shown_in(where.work, WRITE.name, WRITE.arguments)


async def _create(client: Any, **body: Any) -> dict[str, Any]:
    response = await client.post("/api/sessions", json=body)
    assert response.status_code == 201, response.text
    assert response.headers["location"] == f"/api/sessions/{response.json()['id']}"
    data: dict[str, Any] = response.json()
    return data


async def test_a_conversation_with_an_approval_answered_over_http(tmp_path: Path) -> None:
    where = place(tmp_path)
    app = app_for(where, ScriptedModel([tools(WRITE), text("Wrote it."), text("Bye.")]))
    async with client_for(app) as client:
        session = await _create(client, prompt="write out.txt", profile="developer")
        detail = await wait_idle(client, session["id"])
        assert detail["status"] == "awaiting_approval"
        assert detail["pending_approvals"] == [
            {
                "call_id": "c1",
                "tool": "write",
                "arguments": WRITE.arguments,
                "digest": _answered(where),
                "working_dir": os.path.realpath(where.work),
            }
        ]
        assert not (where.work / "out.txt").exists()  # fails closed: nothing ran

        answered = await client.post(
            f"/api/sessions/{session['id']}/approvals/c1",
            json={"decision": "approve", "digest": _answered(where)},
        )
        assert answered.status_code == 202, answered.text
        detail = await wait_idle(client, session["id"])
        assert detail["status"] == "completed"
        assert detail["pending_approvals"] == []
        assert (where.work / "out.txt").read_text() == "hi\n"

        chatted = await client.post(f"/api/sessions/{session['id']}/chat", json={"prompt": "and?"})
        assert chatted.status_code == 202
        await wait_idle(client, session["id"])
        body = (await client.get(f"/api/sessions/{session['id']}/stream?until=idle")).text
    events = [e for e in parse_sse(body) if "event" in e]
    kinds = [e["event"] for e in events]
    assert kinds.count("run_end") == 3
    assert "approval_resolved" in kinds
    assert "tool_end" in kinds
    ends = [json.loads(e["data"]) for e in events if e["event"] == "run_end"]
    assert [e["status"] for e in ends] == ["awaiting_approval", "completed", "completed"]
    # ids are trace line numbers: the stream is the trace, line for line
    trace = read_trace(where.sessions / session["id"] / "trace.jsonl").events
    persisted = [e for e in events if "id" in e]
    assert [int(e["id"]) for e in persisted] == list(range(1, len(trace) + 1))
    assert [e["event"] for e in persisted] == [e.kind for e in trace]


async def test_deny_and_always(tmp_path: Path) -> None:
    second = call("write", {"path": "b.txt", "content": "b"}, id="c2")
    third = call("write", {"path": "c.txt", "content": "c"}, id="c3")
    # a rejection skips the rest of the batch and waits for the user: no model call
    model = ScriptedModel([tools(WRITE), tools(second), tools(third), text("done")])
    where = place(tmp_path)
    async with client_for(app_for(where, model)) as client:
        sid = (await _create(client, prompt="write", profile="developer"))["id"]
        await wait_idle(client, sid)
        denied = await client.post(
            f"/api/sessions/{sid}/approvals/c1",
            json={"decision": "deny", "digest": _answered(where)},
        )
        assert denied.status_code == 202
        await wait_idle(client, sid)
        assert not (where.work / "out.txt").exists()
        await client.post(f"/api/sessions/{sid}/chat", json={"prompt": "write b and c"})
        detail = await wait_idle(client, sid)
        assert [p["call_id"] for p in detail["pending_approvals"]] == ["c2"]
        always = await client.post(
            f"/api/sessions/{sid}/approvals/c2",
            json={
                "decision": "always",
                "digest": shown_in(where.work, second.name, second.arguments),
            },
        )
        assert always.status_code == 202
        detail = await wait_idle(client, sid)
    assert detail["status"] == "completed"  # c3 ran without asking: write is always allowed
    assert (where.work / "b.txt").exists()
    assert (where.work / "c.txt").exists()


async def test_listing_and_detail_show_status_usage_and_liveness(tmp_path: Path) -> None:
    where = place(tmp_path)
    async with client_for(app_for(where, ScriptedModel([text("hello")]))) as client:
        first = await _create(client)  # no prompt: stored, nothing runs
        assert first["status"] == "created"
        assert first["liveness"] == "created"
        second = await _create(client, prompt="hi", labels={"team": "a"})
        await wait_idle(client, second["id"])
        listed = (await client.get("/api/sessions")).json()["sessions"]
        assert [s["id"] for s in listed] == [second["id"], first["id"]]
        assert listed[0]["status"] == "completed"
        assert listed[0]["liveness"] == "completed"
        assert listed[0]["usage"]["output_tokens"] > 0
        assert listed[0]["labels"] == {"team": "a", "origin": "server"}
        assert (await client.get("/api/sessions?limit=1")).json()["sessions"][0]["id"] == (
            second["id"]
        )


async def test_a_cancel_while_a_session_waits_for_approval_is_a_409_naming_what_to_do(
    tmp_path: Path,
) -> None:
    """Nothing runs while a session waits for approval: a cancel sent while the server held it
    (``approval_hold``) said ``cancelling`` and let the hold go, yet the session stayed
    ``awaiting_approval`` (a client waiting for ``cancelled`` waited for good), where a durable
    server, or this one once the hold ended, said 409. Now 409 at once, the session still
    held here, and the answer continues it."""
    where = place(tmp_path)
    app = app_for(where, ScriptedModel([tools(WRITE), text("Wrote it.")]))
    async with client_for(app) as client:
        sid = (await _create(client, prompt="write out.txt", profile="developer"))["id"]
        assert (await wait_idle(client, sid))["status"] == "awaiting_approval"
        refused = await client.post(f"/api/sessions/{sid}/cancel")
        assert refused.status_code == 409, refused.text
        assert refused.json()["error"]["message"] == (
            f"session {sid} has no run in progress: it waits for approval (GET "
            f"/api/sessions/{sid}: pending_approvals); answer its calls, or deny them, which "
            "runs nothing"
        )
        assert not app.state.host.runs.handles[sid].done  # still held here
        answer = {"decision": "approve", "digest": _answered(where)}
        answered = await client.post(f"/api/sessions/{sid}/approvals/c1", json=answer)
        assert answered.status_code == 202, answered.text
        assert (await wait_idle(client, sid))["status"] == "completed"


async def test_cancel_resume_and_close(tmp_path: Path) -> None:
    where = place(tmp_path)
    model = by_prompt({"go on": "resumed"})
    async with client_for(app_for(where, model)) as client:
        sid = (await _create(client, prompt="wait forever"))["id"]
        await model.hanging.wait()
        assert (await client.post(f"/api/sessions/{sid}/cancel")).json()["outcome"] == "cancelling"
        detail = await wait_idle(client, sid)
        assert detail["status"] == "cancelled"
        again = await client.post(f"/api/sessions/{sid}/cancel")
        assert again.status_code == 409  # nothing runs any more
        resumed = await client.post(f"/api/sessions/{sid}/resume", json={"prompt": "go on"})
        assert resumed.status_code == 202
        assert (await wait_idle(client, sid))["status"] == "completed"
        await client.post(f"/api/sessions/{sid}/chat", json={"prompt": "hang again"})
        closed = await client.delete(f"/api/sessions/{sid}")
        assert closed.status_code == 200
        assert not closed.json()["running_here"]  # stopped (or never started), lock released
        assert closed.json()["liveness"] != "running"
        again = await client.post(f"/api/sessions/{sid}/chat", json={"prompt": "go on"})
        assert again.status_code == 202
        assert (await wait_idle(client, sid))["status"] == "completed"


async def test_create_and_stream_in_one_request(tmp_path: Path) -> None:
    where = place(tmp_path)
    async with client_for(app_for(where, ScriptedModel([text("streamed answer")]))) as client:
        response = await client.post(
            "/api/sessions", json={"prompt": "hi"}, headers={"Accept": "text/event-stream"}
        )
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    events = [e for e in parse_sse(response.text) if "event" in e]
    assert events[0]["event"] == "run_start"
    assert events[-1]["event"] == "run_end"
    assert any(e["event"] == "text_delta" and "id" not in e for e in events)


async def test_templates_fill_the_prompt(tmp_path: Path) -> None:
    where = place(tmp_path)
    (where.home / "prompts").mkdir()
    template = "---\nvars:\n  topic: {required: true}\n---\nExplain {{ topic }}.\n"
    (where.home / "prompts" / "explain.md").write_text(template)
    model = ScriptedModel([text("ok")])
    async with client_for(app_for(where, model)) as client:
        sid = (await _create(client, template="explain", vars={"topic": "retries"}))["id"]
        detail = await wait_idle(client, sid)
        missing = await client.post("/api/sessions", json={"template": "explain"})
        unknown = await client.post("/api/sessions", json={"template": "nope"})
        path = await client.post("/api/sessions", json={"template": "../secret"})
    assert detail["first_prompt"] == "Explain retries."
    assert (missing.status_code, missing.json()["error"]["field"]) == (422, "vars")
    assert (unknown.status_code, unknown.json()["error"]["field"]) == (422, "template")
    assert (path.status_code, path.json()["error"]["field"]) == (422, "template")


async def test_openapi_documents_every_route(tmp_path: Path) -> None:
    from rho_entry.server.routes import API

    async with client_for(app_for(place(tmp_path), ScriptedModel([]))) as client:
        document = (await client.get("/api/openapi.json")).json()
        index = (await client.get("/")).json()
    assert document["openapi"].startswith("3.1")
    for route in API:
        operation = document["paths"][route.path][route.method.lower()]
        guard = {401, 421} if route.method == "GET" else {401, 403, 415, 421}
        assert set(operation["responses"]) == {str(code) for code in {*route.responses, *guard}}
    create = document["paths"]["/api/sessions"]["post"]["requestBody"]["content"]
    fields = create["application/json"]["schema"]["properties"]
    assert {"prompt", "model", "profile", "working_dir", "template", "vars"} <= set(fields)
    answer = document["paths"]["/api/sessions/{id}/approvals/{call_id}"]["post"]
    schema = answer["requestBody"]["content"]["application/json"]["schema"]
    assert schema["properties"]["decision"]["enum"] == ["approve", "deny", "always"]
    assert schema["required"] == ["decision"]  # a denial runs nothing: it may go without
    assert "digest" in schema["properties"]
    assert index["openapi"] == "/api/openapi.json"


async def test_every_route_in_the_table_is_served(tmp_path: Path) -> None:
    """A route the document lists but the app does not serve would answer 404 or 405."""
    from rho_entry.server.routes import API

    async with client_for(app_for(place(tmp_path), ScriptedModel([]))) as client:
        for route in API:
            path = route.path.replace("{id}", "nosuchsession").replace("{call_id}", "c1")
            response = await client.request(route.method, path, json={})
            assert response.status_code != 405, route.path
            if response.status_code >= 400:  # the handler answered, not the router
                assert not response.json()["error"]["message"].startswith("no route"), route.path
        unknown = await client.get("/api/nothing")
        wrong_method = await client.put("/api/sessions")
    assert unknown.status_code == 404
    assert unknown.json()["error"]["code"] == "not_found"
    assert wrong_method.status_code == 405


async def test_a_run_in_progress_is_cancelled_at_shutdown(tmp_path: Path) -> None:
    where = place(tmp_path)
    model = by_prompt({})
    app = app_for(where, model)
    async with client_for(app) as client:
        sid = (await _create(client, prompt="hang"))["id"]
        await model.hanging.wait()
    await app.state.host.aclose()
    trace = read_trace(where.sessions / sid / "trace.jsonl").events
    assert isinstance(trace[-1], ev.RunEnded)
    assert trace[-1].status.value == "cancelled"
    with pytest.raises(FileNotFoundError):
        (where.sessions / sid / "cancel").read_text()  # cancelled in-process, no signal file


def test_the_documentation_covers_every_route_and_event() -> None:
    from rho_domain.events import EVENTS_BY_KIND
    from rho_entry.server.routes import API

    doc = (Path(__file__).resolve().parents[2] / "docs" / "server.md").read_text()
    for route in API:
        assert f"`{route.method} {route.path}" in doc, route.path
    for kind in EVENTS_BY_KIND:
        assert f"| `{kind}` |" in doc, kind


async def test_looking_at_sessions_leaves_no_feed_behind(tmp_path: Path) -> None:
    """Feeds exist while a run or a stream needs them: memory does not grow with reads."""
    where = place(tmp_path)
    app = app_for(where, ScriptedModel([text("a"), text("b")]))
    async with client_for(app) as client:
        ids = [(await _create(client, prompt="hi"))["id"] for _ in range(2)]
        for sid in ids:
            await wait_idle(client, sid)
            await client.get(f"/api/sessions/{sid}")
    assert app.state.host.feeds.kept == {}
    assert app.state.host.runs.handles == {}


async def test_a_new_message_supersedes_pending_approvals(tmp_path: Path) -> None:
    where = place(tmp_path)
    app = app_for(where, ScriptedModel([tools(WRITE), text("Fine, nothing written.")]))
    async with client_for(app) as client:
        sid = (await _create(client, prompt="write", profile="developer"))["id"]
        assert (await wait_idle(client, sid))["status"] == "awaiting_approval"
        chatted = await client.post(f"/api/sessions/{sid}/chat", json={"prompt": "never mind"})
        assert chatted.status_code == 202
        detail = await wait_idle(client, sid)
        late = await client.post(
            f"/api/sessions/{sid}/approvals/c1",
            json={"decision": "approve", "digest": _answered(where)},
        )
    assert detail["status"] == "completed"
    assert detail["pending_approvals"] == []
    assert late.status_code == 404
    assert not (where.work / "out.txt").exists()


async def test_a_stream_can_start_after_a_line_or_at_the_end(tmp_path: Path) -> None:
    where = place(tmp_path)
    async with client_for(app_for(where, ScriptedModel([text("one")]))) as client:
        sid = (await _create(client, prompt="hi"))["id"]
        last = (await wait_idle(client, sid))["last_seq"]
        tail = (await client.get(f"/api/sessions/{sid}/stream?until=idle&after=3")).text
        end = (await client.get(f"/api/sessions/{sid}/stream?until=idle&after=end")).text
    assert [int(e["id"]) for e in parse_sse(tail) if "id" in e] == list(range(4, last + 1))
    assert [e for e in parse_sse(end) if "event" in e] == []


async def test_a_session_waiting_too_long_for_approval_is_released(tmp_path: Path) -> None:
    """After ``approval_hold`` the server lets go of it (the CLI could resume it); an answer
    still continues it, reopened from the trace."""
    from rho_adapters.store import FileSessionStore

    where = place(tmp_path)
    app = app_for(where, ScriptedModel([tools(WRITE), text("Wrote it.")]), approval_hold=0.0)
    async with client_for(app) as client:
        sid = (await _create(client, prompt="write", profile="developer"))["id"]
        handle = app.state.host.runs.handles[sid]
        await wait_idle(client, sid)
        await asyncio.wait_for(handle.wait_done(), 30)  # released (bounded: never hang)
        other = FileSessionStore(where.sessions)
        await other.open(sid)  # nobody holds the lock any more
        await other.release(sid)
        answered = await client.post(
            f"/api/sessions/{sid}/approvals/c1",
            json={"decision": "approve", "digest": _answered(where)},
        )
        assert answered.status_code == 202
        assert (await wait_idle(client, sid))["status"] == "completed"
    assert (where.work / "out.txt").read_text() == "hi\n"
