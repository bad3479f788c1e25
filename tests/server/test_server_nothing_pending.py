"""Nothing pending means nothing runs (issue 29, item 4): an answer to a call that does not
wait, or a resume without a prompt when no call waits, is refused with 404 before any run
is dispatched, so the model server receives no request. ``rho-agent serve`` runs in a
subprocess against the loopback fake OpenAI server, whose request log is the witness."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from server_support import Place, Serve, http, place, serve_env

from rho_adapters.fakes.loopback import LoopbackServer
from rho_adapters.fakes.wire import call, text_reply, tool_reply

WRITE = call("write", {"path": "out.txt", "content": "hi\n"}, "c1")


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Place, Serve, LoopbackServer]]:
    where = place(tmp_path)
    replies = [text_reply("first answer"), tool_reply(WRITE), text_reply("Wrote it.")]
    with LoopbackServer(replies) as model:
        env = serve_env(where.home, model.base_url)
        allow = ("--allow-profile", "readonly", "--allow-profile", "developer")
        serve = Serve(where.work, env, *allow)
        try:
            yield where, serve, model
        finally:
            assert serve.stop() == 0


def _post(serve: Serve, path: str, body: dict[str, Any]) -> httpx.Response:
    return http().post(f"{serve.url}{path}", json=body, headers=serve.auth, timeout=30)


def _settled(serve: Serve, session_id: str, status: str) -> dict[str, Any]:
    """The session's detail once no run is in progress and its status is ``status``."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        detail = http().get(f"{serve.url}/api/sessions/{session_id}", headers=serve.auth).json()
        if detail["status"] == status and not detail["running_here"]:
            return dict(detail)
        time.sleep(0.05)
    raise AssertionError(f"session {session_id} never settled {status}: {detail}")


def test_an_answer_or_a_resume_with_nothing_pending_sends_no_model_call(
    served: tuple[Place, Serve, LoopbackServer],
) -> None:
    where, serve, model = served
    created = _post(serve, "/api/sessions", {"prompt": "hello"})
    assert created.status_code == 201, created.text
    sid = created.json()["id"]
    _settled(serve, sid, "completed")
    assert len(model.requests) == 1
    trace = where.sessions / sid / "trace.jsonl"
    lines = trace.read_text(encoding="utf-8")

    answered = _post(
        serve, f"/api/sessions/{sid}/approvals/c1", {"decision": "approve", "digest": "0" * 32}
    )
    assert answered.status_code == 404, answered.text
    assert "no tool call 'c1' awaits approval (pending: none)" in answered.text
    assert len(model.requests) == 1
    resumed = _post(serve, f"/api/sessions/{sid}/resume", {})
    assert resumed.status_code == 404, resumed.text
    assert "nothing pending to continue" in resumed.json()["error"]["message"]
    resumed_null = _post(serve, f"/api/sessions/{sid}/resume", {"prompt": None})
    assert resumed_null.status_code == 404, resumed_null.text

    # one wait for the three refusals: a run any of them dispatched would have called the
    # model by now
    time.sleep(0.5)
    assert len(model.requests) == 1
    assert trace.read_text(encoding="utf-8") == lines  # no run_start, no run_end


def test_an_unknown_call_is_refused_and_the_waiting_one_still_runs(
    served: tuple[Place, Serve, LoopbackServer],
) -> None:
    where, serve, model = served
    first = _post(serve, "/api/sessions", {"prompt": "hello"})
    _settled(serve, first.json()["id"], "completed")
    created = _post(serve, "/api/sessions", {"prompt": "write", "profile": "developer"})
    sid = created.json()["id"]
    detail = _settled(serve, sid, "awaiting_approval")
    assert [p["call_id"] for p in detail["pending_approvals"]] == ["c1"]
    assert len(model.requests) == 2

    wrong = _post(
        serve, f"/api/sessions/{sid}/approvals/c9", {"decision": "approve", "digest": "0" * 32}
    )
    assert wrong.status_code == 404, wrong.text
    assert "pending: c1" in wrong.text
    assert len(model.requests) == 2
    assert not (where.work / "out.txt").exists()

    resumed = _post(serve, f"/api/sessions/{sid}/resume", {})  # pending work: it runs
    assert resumed.status_code == 202, resumed.text
    again = _settled(serve, sid, "awaiting_approval")
    assert [p["call_id"] for p in again["pending_approvals"]] == ["c1"]
    shown = again["pending_approvals"][0]["digest"]
    right = _post(
        serve, f"/api/sessions/{sid}/approvals/c1", {"decision": "approve", "digest": shown}
    )
    assert right.status_code == 202, right.text
    _settled(serve, sid, "completed")
    assert (where.work / "out.txt").read_text() == "hi\n"
    assert len(model.requests) == 3
