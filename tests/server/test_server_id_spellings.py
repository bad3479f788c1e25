"""Session ids in paths, spelled every way a client might: only the exact id names a session.

No hole found; these cover spellings the suite did not try: a prefix of a real id, the id
with a trailing newline (``re``'s ``$`` matches before one), another case, ``latest``, dot
segments encoded, an encoded slash or absolute path, and full-width digits. Each must be a 404
on every session route, read or write, and leave the real session untouched.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from server_support import app_for, client_for, place
from test_server_stored_authority import craft

from rho_adapters.fakes import FunctionModel, text

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
            assert answer.status_code == 404, (method, route, spelling, answer.text)
        real = await client.get(f"/api/sessions/{SID}")
    assert real.status_code == 200
    assert model.requests == []
    assert sorted(p.name for p in (where.sessions / SID).iterdir()) == before
    assert (where.sessions / SID / "trace.jsonl").read_text() == ""
