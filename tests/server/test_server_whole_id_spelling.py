"""The ``=ID`` spelling and short ids through the HTTP API, on a real uvicorn socket.

``=ID`` is a person's spelling (``--resume =nightly``: the session ``nightly`` whole, not
every id that begins with it, ``run.whole_id_of``); the API takes ids exact and never a
person's shorthand, so ``=ID`` names no session there: a 404 on every route, the session
untouched. And a session whose id is shorter than ``run.ID_LENGTH`` (a peer's or a hand's:
``nightly``) beside one whose id begins with it (``nightly-2``) is reached by its exact id on
every route, never the other one, and is not refused as ambiguous.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import httpx
import pytest
from server_support import UvicornThread, app_for, place
from test_server_stored_authority import craft

from rho_adapters.fakes import FunctionModel, text

SHORT, LONGER, WHOLE = "nightly", "nightly-2", "c0ffee000001"
ROUTES = [
    ("GET", "/api/sessions/{id}"),
    ("GET", "/api/sessions/{id}/stream"),
    ("POST", "/api/sessions/{id}/chat"),
    ("POST", "/api/sessions/{id}/resume"),
    ("POST", "/api/sessions/{id}/cancel"),
    ("POST", "/api/sessions/{id}/approvals/call_1"),
    ("DELETE", "/api/sessions/{id}"),
]


@pytest.fixture
def served(tmp_path: Path) -> tuple[UvicornThread, Path, FunctionModel]:
    where = place(tmp_path)
    for sid in (SHORT, LONGER, WHOLE):
        craft(where, sid)
    model = FunctionModel(lambda request: text("ok"))
    return UvicornThread(app_for(where, model, profiles=("readonly",))), where.sessions, model


def _untouched(sessions: Path) -> dict[str, list[str]]:
    return {
        sid: sorted(p.name for p in (sessions / sid).iterdir()) for sid in (SHORT, LONGER, WHOLE)
    }


@pytest.mark.parametrize("spelling", [f"={WHOLE}", f"={SHORT}", "=", f"={WHOLE[:6]}"])
def test_the_whole_id_spelling_names_no_session_over_http(
    served: tuple[UvicornThread, Path, FunctionModel], spelling: str
) -> None:
    server, sessions, model = served
    before = _untouched(sessions)
    with server, httpx.Client(base_url=server.url, headers=server.auth, timeout=30) as http:
        for method, route in ROUTES:
            approval = {"decision": "approve", "digest": "0" * 32}
            body = approval if "approvals" in route else {"prompt": "go"}
            answer = http.request(
                method,
                route.format(id=quote(spelling, safe="")),
                json=body if method == "POST" else None,
            )
            assert answer.status_code == 404, (method, route, spelling, answer.text)
            assert f"no session {spelling!r}" in answer.json()["error"]["message"]
    assert model.requests == []
    assert _untouched(sessions) == before


def test_a_short_id_beside_a_longer_one_is_reached_by_its_exact_id(
    served: tuple[UvicornThread, Path, FunctionModel],
) -> None:
    server, sessions, model = served
    with server, httpx.Client(base_url=server.url, headers=server.auth, timeout=30) as http:
        shown = http.get(f"/api/sessions/{SHORT}")
        assert shown.status_code == 200, shown.text
        assert shown.json()["id"] == SHORT
        chat = http.post(f"/api/sessions/{SHORT}/chat", json={"prompt": "go"})
        assert chat.status_code == 202, chat.text
        assert chat.json()["id"] == SHORT
        idle = http.get(f"/api/sessions/{SHORT}/stream", params={"until": "idle"})
        assert idle.status_code == 200, idle.text
        assert "run_end" in idle.text  # the short session's own feed, to its idle end
        cancel = http.post(f"/api/sessions/{SHORT}/cancel")
        assert cancel.status_code == 409, cancel.text  # its own state: nothing runs
        assert f"session {SHORT} has no run in progress" in cancel.text
    assert "run_end" in (sessions / SHORT / "trace.jsonl").read_text()
    assert (sessions / LONGER / "trace.jsonl").read_text() == ""  # the other one untouched
    assert len(model.requests) == 1
