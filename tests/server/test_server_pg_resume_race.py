"""A server's answer and another host's hold of the same session, on one PostgreSQL store.

Never run before against PostgreSQL: another host claiming the session between the answer's
checks and its reopening (409 'ended before it took the answer', the call still waiting), a
claim held when the answer comes (409 'driven by another process'), and `rho-agent --resume
ID --approve CALL@DIGEST` from another process while the server runs the answer it took
(refused: 'held by HOST pid N (xid X)'). The answer lands once: one approval_resolved,
one tool_end, the file written once."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import httpx
from server_support import (
    UvicornThread,
    app_for,
    opened_meanwhile,
    place,
    rho_cli,
    serve_env,
    wait_idle,
)

from rho_adapters.fakes import ScriptedModel, Turn, call, tools
from rho_entry.config.stores import choose_store

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "store"))
from pg_rig import pg_server_url, schema_url

__all__ = ["pg_server_url"]

WRITE = call("write", {"path": "out.txt", "content": "hi\n"}, id="c1")


async def test_a_resume_from_another_process_while_the_server_runs_the_answer(
    tmp_path: Path, pg_server_url: str
) -> None:
    where = place(tmp_path)
    url = schema_url(pg_server_url)
    model = ScriptedModel([tools(WRITE), Turn(hang=True)])
    app = app_for(where, model, store=choose_store(url, {}, origin="the test"), approval_hold=0.0)
    with UvicornThread(app) as server:
        async with httpx.AsyncClient(base_url=server.url, headers=server.auth, timeout=30) as http:
            created = await http.post(
                "/api/sessions", json={"prompt": "write", "profile": "developer"}
            )
            sid = created.json()["id"]
            handle = app.state.host.runs.handles[sid]
            (shown,) = (await wait_idle(http, sid))["pending_approvals"]
            await asyncio.wait_for(handle.wait_done(), 30)
            approve = {"decision": "approve", "digest": shown["digest"]}
            answer_url = f"/api/sessions/{sid}/approvals/c1"
            # another host claims it between the answer's checks and its reopening
            another = choose_store(url, {}, origin="another host")
            other = another.store
            with opened_meanwhile(app.state.host.sessions, other):
                refused = await http.post(answer_url, json=approve)
            assert refused.status_code == 409, refused.text
            assert "ended before it took the answer" in refused.text
            held = (await http.get(f"/api/sessions/{sid}")).json()
            assert held["liveness"] == "idle"  # open in the other host, between runs
            refused = await http.post(answer_url, json=approve)
            assert refused.status_code == 409, refused.text
            assert "is driven by another process" in refused.text
            await other.release(sid)
            await another.aclose()
            # the server takes the answer; its run goes on (the model call hangs) while a
            # terminal on another host resumes the session with the same answer
            answered = await http.post(answer_url, json=approve)
            assert answered.status_code == 202, answered.text
            env = serve_env(tmp_path / "other", "http://127.0.0.1:9", RHO_AGENT_STORE=url)
            resumed = await asyncio.to_thread(
                rho_cli,
                "--resume", sid, "--profile", "developer", "-m", "demo",
                "--approve", f"c1@{shown['digest']}",
                env=env, cwd=where.work, timeout=120,
            )  # fmt: skip
            assert resumed.returncode == 1, resumed.stderr
            assert f"session {sid} is held by " in resumed.stderr
            assert f"wait for it to finish, or cancel it (rho-agent monitor cancel {sid} " in (
                resumed.stderr
            )
            closed = await http.delete(f"/api/sessions/{sid}")
            assert closed.status_code == 200, closed.text
    lines = _lines(url, sid)
    resolved = [e for e in lines if e["kind"] == "approval_resolved"]
    assert [(e["call_id"], e["approved"]) for e in resolved] == [("c1", True)]  # once
    assert [e["call_id"] for e in lines if e["kind"] == "tool_end"] == ["c1"]
    assert (where.work / "out.txt").read_text() == "hi\n"


def _lines(url: str, session_id: str) -> list[dict[str, Any]]:
    import psycopg

    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT line FROM rho_events WHERE session_id = %s ORDER BY seq", (session_id,)
        ).fetchall()
    return [json.loads(line) for (line,) in rows]
