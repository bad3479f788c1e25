"""A message and an answer to one session take turns (``Runs.turn``).

A chat message and an approval that came at the same moment to a released session both
reopened it: the second dispatch was refused, 409 'session ... was taken by another request
to this server meanwhile ... retry'. Now the second waits for the first and finds what it
left: a chat that superseded the pending call leaves the answer a 404 naming no waiting call.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from server_support import app_for, client_for, place, wait_idle

from rho_adapters.fakes import ScriptedModel, call, text, tools

WRITE = call("write", {"path": "out.txt", "content": "hi\n"}, id="c1")


async def test_a_message_and_an_answer_at_once_take_turns(tmp_path: Path) -> None:
    where = place(tmp_path)
    model = ScriptedModel([tools(WRITE), text("Left it.")])
    app = app_for(where, model, approval_hold=0.0, answer_grace=30.0)
    async with client_for(app) as client:
        created = await client.post(
            "/api/sessions", json={"prompt": "write", "profile": "developer"}
        )
        sid = created.json()["id"]
        runs = app.state.host.runs
        first = runs.handles[sid]
        (shown,) = (await wait_idle(client, sid))["pending_approvals"]
        await asyncio.wait_for(first.wait_done(), 30)  # released: nothing holds it
        # The chat reaches its dispatch and waits there until the answer has come as far as
        # it can beside it: its own dispatch (before) or the session's turn (now).
        at_dispatch, answer_came = asyncio.Event(), asyncio.Event()
        dispatch, turn = runs.dispatch, runs.turn

        async def gated_dispatch(*args: Any, **kwargs: Any) -> Any:
            if not at_dispatch.is_set():
                at_dispatch.set()
                await answer_came.wait()
            else:
                answer_came.set()
            return await dispatch(*args, **kwargs)

        def waiting_turn(session_id: str) -> Any:
            if at_dispatch.is_set():
                answer_came.set()  # the chat holds the turn: the answer waits behind it
            return turn(session_id)

        runs.dispatch, runs.turn = gated_dispatch, waiting_turn
        chat = asyncio.ensure_future(
            client.post(f"/api/sessions/{sid}/chat", json={"prompt": "leave it"})
        )
        await asyncio.wait_for(at_dispatch.wait(), 30)
        approve = {"decision": "approve", "digest": shown["digest"]}
        answered = await client.post(f"/api/sessions/{sid}/approvals/c1", json=approve)
        sent = await chat
        assert sent.status_code == 202, sent.text
        assert answered.status_code == 404, answered.text
        assert "no tool call 'c1' awaits approval (pending: none)" in answered.text
        assert (await wait_idle(client, sid))["status"] == "completed"
    assert not (where.work / "out.txt").exists()  # superseded by the message, never run
