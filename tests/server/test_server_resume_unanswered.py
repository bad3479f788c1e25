"""A resume without a prompt continues what the model has not answered: a run that ended
after its tool ran and before the model's next call (the model's endpoint failed) left the
tool's result as the last message, with no call pending. Before, the server took "no call
pending" for "nothing to continue" and answered 404; the caller could only add a message
the model did not need. A conversation the model has answered is still a 404 with no run.
And the 404 of an answer to a call that does not wait no longer repeats a body's call id
whole."""

from __future__ import annotations

from pathlib import Path

from server_support import app_for, client_for, place, wait_idle

from rho_adapters.fakes import FunctionModel, call, text, tools
from rho_adapters.fakes.scripted_model import Turn
from rho_adapters.store.directive_lines import add_directive
from rho_domain.model import ModelRequest

READ = call("read", {"path": "README.md"})


async def test_a_resume_without_a_prompt_continues_a_tool_result_the_model_never_saw(
    tmp_path: Path,
) -> None:
    asked: list[int] = []
    said: list[str] = []

    def model(request: ModelRequest) -> Turn:
        asked.append(len(request.messages))
        said.append(str(getattr(request.messages[-1], "content", "")))
        if len(asked) == 1:
            return tools(READ)
        if len(asked) == 2:
            raise RuntimeError("the model's endpoint fell over")
        return text("README.md says: sample")

    where = place(tmp_path)
    app = app_for(where, FunctionModel(model))
    async with client_for(app) as client:
        created = await client.post("/api/sessions", json={"prompt": "read it"})
        sid = created.json()["id"]
        failed = await wait_idle(client, sid)
        assert (failed["status"], failed["pending_approvals"]) == ("error", [])
        resumed = await client.post(f"/api/sessions/{sid}/resume", json={})
        assert resumed.status_code == 202, resumed.text
        done = await wait_idle(client, sid)
        assert (done["status"], len(asked)) == ("completed", 3)
        assert asked[2] == asked[1]  # the same conversation, with no message added to it
        again = await client.post(f"/api/sessions/{sid}/resume", json={})
        assert again.status_code == 404, again.text
        assert "no tool's result or message awaits" in again.json()["error"]["message"]
        empty = (await client.post("/api/sessions", json={})).json()["id"]  # no message yet
        nothing = await client.post(f"/api/sessions/{empty}/resume", json={})
        assert nothing.status_code == 404, nothing.text
        # a directive queued on the answered session (monitor directive): a handle reopened
        # on it applies it; the server's resume {} answered 404 and left it unread
        add_directive(where.sessions / sid, "say which file you read")
        directed = await client.post(f"/api/sessions/{sid}/resume", json={})
        assert directed.status_code == 202, directed.text
        assert (await wait_idle(client, sid))["status"] == "completed"
    assert len(asked) == 4
    assert said[3].endswith("say which file you read")


async def test_an_answer_to_a_huge_call_id_is_not_repeated_whole(tmp_path: Path) -> None:
    """A body's ``call_id`` is as long as the body allows (256 KiB); the 404 for a call that
    does not wait repeated it whole, by either route."""
    app = app_for(place(tmp_path), FunctionModel(lambda request: text("done")))
    async with client_for(app) as client:
        sid = (await client.post("/api/sessions", json={"prompt": "hi"})).json()["id"]
        await wait_idle(client, sid)
        huge = "c" * 200_000
        answered = await client.post(
            f"/api/sessions/{sid}/approvals", json={"call_id": huge, "decision": "deny"}
        )
    assert answered.status_code == 404, answered.text[:300]
    message = answered.json()["error"]["message"]
    assert message.startswith("no tool call 'cccc")
    assert len(message) < 400, len(message)
