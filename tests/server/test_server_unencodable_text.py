"""Text UTF-8 cannot hold (a lone surrogate: JSON's ``\\ud800`` escape without its pair) never
makes the server answer 500. A request body holding one is refused 422; a model's answer
holding one is served, in the session's detail, the listing and its stream, with the lone
surrogates written as visible escapes (as the domain writes every text it takes in:
``\\udce9``, never the code point). Before, the body was taken, and every later GET of the
session answered 500."""

from __future__ import annotations

import json
from pathlib import Path

from server_support import app_for, client_for, parse_sse, place, wait_idle

from rho_adapters.fakes import ScriptedModel, text

LONE = "caf\udce9 \ud800"


async def test_a_body_holding_a_lone_surrogate_is_refused_422(tmp_path: Path) -> None:
    async with client_for(app_for(place(tmp_path), ScriptedModel([]))) as client:
        refused = await client.post(
            "/api/sessions",
            content=b'{"prompt": "x \\ud800"}',
            headers={"Content-Type": "application/json"},
        )
        paired = await client.post(
            "/api/sessions",
            content=b'{"prompt": "an emoji \\ud83d\\ude00"}',  # a pair is one character
            headers={"Content-Type": "application/json"},
        )
    assert refused.status_code == 422, refused.text
    error = refused.json()["error"]
    assert error["field"] == "body"
    assert "lone surrogate" in error["message"]
    assert paired.status_code == 201, paired.text


async def test_an_answer_holding_one_is_served_as_escapes(tmp_path: Path) -> None:
    async with client_for(app_for(place(tmp_path), ScriptedModel([text(LONE)]))) as client:
        sid = (await client.post("/api/sessions", json={"prompt": "hi"})).json()["id"]
        await wait_idle(client, sid)
        detail = await client.get(f"/api/sessions/{sid}")
        listed = await client.get("/api/sessions")
        stream = await client.get(f"/api/sessions/{sid}/stream?until=idle")
    assert (detail.status_code, listed.status_code, stream.status_code) == (200, 200, 200)
    events = [json.loads(e["data"]) for e in parse_sse(stream.text) if "data" in e]
    ends = [e for e in events if e.get("kind") == "run_end"]
    # ASCII escapes, so the assertion's own report can cross xdist's UTF-8 channel
    assert ends[-1]["text"] == "caf\\udce9 \\ud800"
