"""An approval over HTTP on a PostgreSQL store answers the call its answerer was shown. The
session's rows are rewritten as whoever can write the shared store could (``UPDATE rho_events``):
before the showing, while the server holds the model's call (the page shows another), and
after it, once the server released the session (the answer reopens it from the rows). Both
answers are 409 and nothing runs; before the digest, both ran the call nobody was shown."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "store"))
from pg_rig import pg_server_url, schema_url
from server_support import Place, UvicornThread, app_for, place, wait_idle

from rho_adapters.fakes import ScriptedModel, call, text, tools
from rho_entry.config.stores import choose_store

__all__ = ["pg_server_url"]

REAL = call("write", {"path": "pwned.txt", "content": "owned\n"}, id="c1")
SHOWN = call("write", {"path": "notes.txt", "content": "hi\n"}, id="c1")


def _rewrite(url: str, session_id: str, old: str, new: str) -> None:
    import psycopg  # the pg extra: the fixture skips without a server

    with psycopg.connect(url, autocommit=True) as conn:
        done = conn.execute(
            "UPDATE rho_events SET line = replace(line, %s, %s) WHERE session_id = %s"
            " AND strpos(line, %s) > 0",
            (old, new, session_id, old),
        )
        assert done.rowcount > 0


def _app(where: Place, url: str, model: ScriptedModel, **changes: Any) -> Any:
    return app_for(where, model, store=choose_store(url, {}, origin="the test"), **changes)


@pytest.mark.parametrize(
    ("called", "hold", "old", "new"),
    [
        (REAL, 300.0, "pwned.txt", "notes.txt"),  # held: the page shows what the rows say
        (SHOWN, 0.0, "notes.txt", "pwned.txt"),  # released: the answer reopens the rows
    ],
)
async def test_rows_rewritten_around_the_showing_are_refused(
    tmp_path: Path, pg_server_url: str, called: Any, hold: float, old: str, new: str
) -> None:
    where = place(tmp_path)
    url = schema_url(pg_server_url)
    app = _app(where, url, ScriptedModel([tools(called), text("Wrote it.")]), approval_hold=hold)
    with UvicornThread(app) as server:
        async with httpx.AsyncClient(base_url=server.url, headers=server.auth, timeout=30) as http:
            created = await http.post(
                "/api/sessions", json={"prompt": "write", "profile": "developer"}
            )
            sid = created.json()["id"]
            handle = app.state.host.runs.handles[sid]
            await wait_idle(http, sid)
            if hold == 0.0:
                await asyncio.wait_for(handle.wait_done(), 30)  # released (bounded)
                shown = (await http.get(f"/api/sessions/{sid}")).json()["pending_approvals"]
                _rewrite(url, sid, old, new)  # after the showing
            else:
                _rewrite(url, sid, old, new)  # before it: the server holds the model's call
                shown = (await http.get(f"/api/sessions/{sid}")).json()["pending_approvals"]
            assert '"notes.txt"' in shown[0]["arguments"]  # what the approver reads

            answered = await http.post(
                f"/api/sessions/{sid}/approvals/c1",
                json={"decision": "approve", "digest": shown[0]["digest"]},
            )
            assert answered.status_code == 409, answered.text
            assert "changed since it was shown" in answered.json()["error"]["message"]
            await asyncio.sleep(0.3)  # a run the answer started would have written by now
            detail = (await http.get(f"/api/sessions/{sid}")).json()
    assert [p["call_id"] for p in detail["pending_approvals"]] == ["c1"]  # it still waits
    assert not (where.work / "pwned.txt").exists()
    assert not (where.work / "notes.txt").exists()
