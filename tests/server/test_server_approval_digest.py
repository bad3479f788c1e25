"""An approval over HTTP answers the call its answerer was shown, not whatever holds its id.

``rho-agent serve`` runs in a subprocess against the loopback fake OpenAI server. The
session's trace is rewritten between the showing (``GET /api/sessions/{id}``, which gives
each pending call's ``digest``) and the answer, as whoever can write the session directory
could: the answer carries the digest back, the server compares it with the call it holds,
and a different call is refused (409, the call still waits, nothing runs). Before the digest,
both answers below ran the call the approver never saw."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from server_support import Place, Serve, http, place, serve_env, shown_in

from rho_adapters.fakes.loopback import LoopbackServer
from rho_adapters.fakes.wire import call, text_reply, tool_reply

SHOWN = call("write", {"path": "notes.txt", "content": "hi\n"}, "c1")
REAL = call("write", {"path": "pwned.txt", "content": "owned\n"}, "c1")


def _serve(where: Place, model: LoopbackServer) -> Serve:
    env = serve_env(where.home, model.base_url)
    return Serve(where.work, env, "--allow-profile", "developer")


def _post(serve: Serve, path: str, body: dict[str, Any]) -> httpx.Response:
    return http().post(f"{serve.url}{path}", json=body, headers=serve.auth, timeout=30)


def _detail(serve: Serve, sid: str) -> dict[str, Any]:
    got = http().get(f"{serve.url}/api/sessions/{sid}", headers=serve.auth, timeout=30)
    assert got.status_code == 200, got.text
    return dict(got.json())


def _waiting(serve: Serve, sid: str) -> dict[str, Any]:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        detail = _detail(serve, sid)
        if detail["status"] == "awaiting_approval" and not detail["running_here"]:
            return detail
        time.sleep(0.05)
    raise AssertionError(f"session {sid} never waited for approval: {detail}")


def _rewrite(trace: Path, old: str, new: str) -> None:
    """Replace the trace as a writer of the directory would (a new file: another inode)."""
    text = trace.read_text(encoding="utf-8")
    assert old in text
    swapped = trace.with_name("trace.new")
    swapped.write_text(text.replace(old, new), encoding="utf-8")
    os.replace(swapped, trace)


@pytest.fixture
def where(tmp_path: Path) -> Place:
    return place(tmp_path)


def test_a_call_rewritten_after_it_was_shown_is_refused_and_still_waits(where: Place) -> None:
    with LoopbackServer([tool_reply(SHOWN), text_reply("Wrote it.")]) as model:
        serve = _serve(where, model)
        try:
            sid = _post(serve, "/api/sessions", {"prompt": "note", "profile": "developer"})
            sid = sid.json()["id"]
            shown = _waiting(serve, sid)["pending_approvals"]
            assert [(p["call_id"], p["tool"]) for p in shown] == [("c1", "write")]
            assert shown[0]["digest"] == shown_in(where.work, "write", SHOWN.arguments)
            serve.stop()  # a restart: the answer reopens the session from its trace
            _rewrite(where.sessions / sid / "trace.jsonl", "notes.txt", "pwned.txt")
            serve = _serve(where, model)

            answered = _post(
                serve,
                f"/api/sessions/{sid}/approvals/c1",
                {"decision": "approve", "digest": shown[0]["digest"]},
            )
            assert answered.status_code == 409, answered.text
            message = answered.json()["error"]["message"]
            assert "'c1' changed since it was shown" in message
            assert "pwned.txt" in message
            assert "still waits" in message
            time.sleep(0.3)  # a run the answer started would have written by now
            assert not (where.work / "pwned.txt").exists()
            assert not (where.work / "notes.txt").exists()
            again = _waiting(serve, sid)["pending_approvals"]
            assert [p["call_id"] for p in again] == ["c1"]  # not answered: it still waits
            assert again[0]["digest"] != shown[0]["digest"]
            assert len(model.requests) == 1
        finally:
            assert serve.stop() == 0


def test_a_held_call_shown_otherwise_from_the_trace_is_refused(where: Place) -> None:
    # the server holds the model's call in memory; the trace it shows from says another
    with LoopbackServer([tool_reply(REAL), text_reply("Wrote it.")]) as model:
        serve = _serve(where, model)
        try:
            sid = _post(serve, "/api/sessions", {"prompt": "note", "profile": "developer"})
            sid = sid.json()["id"]
            _waiting(serve, sid)
            _rewrite(where.sessions / sid / "trace.jsonl", "pwned.txt", "notes.txt")
            shown = _detail(serve, sid)["pending_approvals"]
            assert '"notes.txt"' in shown[0]["arguments"]  # what the approver reads

            answered = _post(
                serve,
                f"/api/sessions/{sid}/approvals/c1",
                {"decision": "approve", "digest": shown[0]["digest"]},
            )
            assert answered.status_code == 409, answered.text
            assert "changed since it was shown" in answered.json()["error"]["message"]
            time.sleep(0.3)
            assert not (where.work / "pwned.txt").exists()

            # the call the server holds, answered with its own digest, is taken; but its
            # trace is not the file the run writes any more (replaced: another inode), and the
            # run ends in error at its next write rather than go on into a file with no name
            # (bd73117): nothing runs, nothing of the run is lost unsaid
            real = shown_in(where.work, "write", REAL.arguments)
            ok = _post(
                serve, f"/api/sessions/{sid}/approvals/c1", {"decision": "approve", "digest": real}
            )
            assert ok.status_code == 202, ok.text
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                detail = _detail(serve, sid)
                if detail["status"] != "awaiting_approval" and not detail["running_here"]:
                    break
                time.sleep(0.05)
            assert detail["status"] == "error", detail
            assert not (where.work / "pwned.txt").exists()
        finally:
            assert serve.stop() == 0


def test_an_answer_without_a_digest_is_refused(where: Place) -> None:
    with LoopbackServer([tool_reply(SHOWN), text_reply("Wrote it.")]) as model:
        serve = _serve(where, model)
        try:
            sid = _post(serve, "/api/sessions", {"prompt": "note", "profile": "developer"})
            sid = sid.json()["id"]
            _waiting(serve, sid)
            answered = _post(serve, f"/api/sessions/{sid}/approvals/c1", {"decision": "approve"})
            assert answered.status_code == 422, answered.text
            assert answered.json()["error"]["field"] == "digest"
            # the call named in the body (the dashboard's way): the same checks
            approvals = f"/api/sessions/{sid}/approvals"
            named = _post(serve, approvals, {"call_id": "c1", "decision": "approve"})
            assert named.status_code == 422, named.text
            assert named.json()["error"]["field"] == "digest"
            unnamed = _post(serve, approvals, {"decision": "deny"})
            assert unnamed.status_code == 422, unnamed.text
            assert unnamed.json()["error"]["field"] == "call_id"
            # the body route's other spellings: an id the session never showed, the digest
            # of another call, a field it does not take, a key given twice
            shown = shown_in(where.work, "write", SHOWN.arguments)
            other = shown_in(where.work, "write", REAL.arguments)
            refusals = [
                (_post(serve, approvals, {**body, "decision": "approve"}), status, words)
                for body, status, words in (
                    ({"call_id": "c9", "digest": shown}, 404, "no tool call 'c9' awaits"),
                    ({"call_id": "c1", "digest": other}, 409, "'c1' changed since it was shown"),
                    ({"call_id": "c1", "digest": shown, "always": True}, 422, "unknown field"),
                )
            ]
            raw = '{"call_id": "c1", "decision": "deny", "call_id": "c9", "digest": "%s"}'
            twice = http().post(
                f"{serve.url}{approvals}",
                content=raw % shown,
                headers={**serve.auth, "Content-Type": "application/json"},
                timeout=30,
            )
            refusals.append((twice, 422, "'call_id'"))
            for answered, status, words in refusals:
                assert answered.status_code == status, answered.text
                assert words in answered.json()["error"]["message"], answered.text
            assert [p["call_id"] for p in _detail(serve, sid)["pending_approvals"]] == ["c1"]
            assert not (where.work / "notes.txt").exists()
        finally:
            assert serve.stop() == 0
