"""Session ids in paths, spelled every way a client might: only the exact id names a session.

No hole found; these cover spellings the suite did not try: a prefix of a real id, the id
with a trailing newline (``re``'s ``$`` matches before one), another case, ``latest``, dot
segments encoded, an encoded slash or absolute path, and full-width digits. Each must be a 404
on every session route, read or write (400 for an encoded slash, refused before routing),
and leave the real session untouched.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from server_support import app_for, client_for, place
from test_server_stored_authority import craft

from rho_adapters.fakes import FunctionModel, ScriptedModel, Turn, call, text

SID = "c0ffee000001"
SPELLINGS = [
    SID[:6],  # a unique prefix: the CLI takes one, the API never
    f"{SID}%0A",
    f"{SID}%0D",
    SID.upper(),
    "latest",
    "%2e%2e",
    f"%2e%2e%2F{SID}",
    f"..%2F{SID}",
    f"%2Ftmp%2F{SID}",
    f"{SID}%00",
    "c0ffee00000\uff11",  # full-width 1
    f" {SID}",
]
ROUTES = [
    ("GET", "/api/sessions/{id}"),
    ("GET", "/api/sessions/{id}/stream"),
    ("POST", "/api/sessions/{id}/chat"),
    ("POST", "/api/sessions/{id}/resume"),
    ("POST", "/api/sessions/{id}/cancel"),
    ("POST", "/api/sessions/{id}/approvals/call_1"),
    ("DELETE", "/api/sessions/{id}"),
]


@pytest.mark.parametrize("spelling", SPELLINGS)
async def test_only_the_exact_id_names_a_session(tmp_path: Path, spelling: str) -> None:
    where = place(tmp_path)
    craft(where, SID)
    before = sorted(p.name for p in (where.sessions / SID).iterdir())
    model = FunctionModel(lambda request: text("ok"))
    app = app_for(where, model, profiles=("readonly",))
    async with client_for(app) as client:
        for method, route in ROUTES:
            # a well-formed answer (its digest included), so that only the id can refuse it
            approval = {"decision": "approve", "digest": "0" * 32}
            body = approval if "approvals" in route else {"prompt": "go"}
            answer = await client.request(
                method,
                route.format(id=spelling),
                json=body if method == "POST" else None,
            )
            # an encoded slash is refused before routing (400, server/target.py)
            expected = 400 if "%2F" in spelling.upper() else 404
            assert answer.status_code == expected, (method, route, spelling, answer.text)
        real = await client.get(f"/api/sessions/{SID}")
    assert real.status_code == 200
    assert model.requests == []
    assert sorted(p.name for p in (where.sessions / SID).iterdir()) == before
    assert (where.sessions / SID / "trace.jsonl").read_text() == ""


async def test_the_client_sends_a_call_id_and_a_session_id_as_one_segment(tmp_path: Path) -> None:
    """A call id is the model's choice, and AgentClient wrote it into the path as it came:
    httpx resolved ``../../SID/cancel`` to ``/api/sessions/SID/cancel``, so answering that
    call of another session (``--server``'s approval prompt) cancelled SID's run (here a 409:
    SID has none in progress, which shows where it landed). Now each id is one segment: no
    session ``elsewhere``, 404, and SID is untouched; ``?`` and ``#`` no longer cut the path."""
    from rho_entry.client import AgentClient
    from rho_entry.server.errors import NotFound

    where = place(tmp_path)
    craft(where, SID)
    app = app_for(where, FunctionModel(lambda request: text("ok")), profiles=("readonly",))
    transport = httpx.ASGITransport(app=app)
    token = app.state.token
    async with AgentClient("http://localhost", token=token, transport=transport) as client:
        try:
            with pytest.raises(NotFound) as refused:
                await client.answer("elsewhere", f"../../{SID}/cancel", "deny", digest="0" * 32)
            assert "elsewhere" in str(refused.value)
            for spelling in (f"{SID}?x", f"{SID}#x", ".."):
                with pytest.raises(NotFound):
                    await client.get_session(spelling)
            assert (await client.get_session(SID))["status"] == "completed"
        finally:
            await app.state.host.aclose()


async def test_a_call_whose_id_holds_a_slash_can_be_answered(tmp_path: Path) -> None:
    """The model chose the call id ``a/../b``: sent as one segment (``a%2F..%2Fb``) it reached
    the server decoded and matched no route (404 ``no route``), so no client, the dashboard
    included, could approve or deny it and the session waited for good. The approvals
    route now takes the rest of the path as the call id."""
    from rho_entry.client import AgentClient

    where = place(tmp_path)
    write = call("write", {"path": "n.txt", "content": "x"}, id="a/../b")
    app = app_for(where, ScriptedModel([Turn(tool_calls=(write,)), text("done")]))
    transport = httpx.ASGITransport(app=app)
    token = app.state.token
    async with AgentClient("http://localhost", token=token, transport=transport) as client:
        try:
            sid = (await client.create_session(prompt="go", profile="developer"))["id"]
            async for _ in client.events(sid, until_idle=True):
                pass
            (pending,) = (await client.get_session(sid))["pending_approvals"]
            assert pending["call_id"] == "a/../b"
            await client.answer(sid, "a/../b", "approve", digest=pending["digest"])
            async for _ in client.events(sid, until_idle=True):
                pass
            assert (await client.get_session(sid))["status"] == "completed"
        finally:
            await app.state.host.aclose()
    assert (where.work / "n.txt").read_text() == "x"


def test_a_trailing_newline_is_no_id_nor_template_name() -> None:
    """``re``'s ``$`` matches before a trailing newline: the id check and the template name
    check took ``c0ffee000001\\n`` and ``explain\\n`` (a name the store then looked up as a
    file, which only a writer of the directory could have made). Both are whole matches now."""
    from rho_entry.server.bodies import parse_create
    from rho_entry.server.errors import Invalid
    from rho_entry.server.views import valid_id

    assert valid_id(SID)
    assert not valid_id(f"{SID}\n")
    assert parse_create({"template": "explain"}).template == "explain"
    with pytest.raises(Invalid, match="not a path"):
        parse_create({"template": "explain\n"})
