"""A stored ``system_prompt`` naming a template file is a file the server would read and send
to the model. Before, a session directory with ``system_prompt: <any>.md`` (a link named
``.md`` to any file the server can read, outside its roots) had that file's text sent as the
system prompt on ``chat``; whoever wrote the directory chose which file was read."""

from __future__ import annotations

from pathlib import Path

from server_support import app_for, client_for, place
from test_server_stored_authority import craft

from rho_adapters.fakes import FunctionModel, text


async def test_a_stored_template_path_is_not_read_on_chat_or_resume(tmp_path: Path) -> None:
    where = place(tmp_path)
    secret = tmp_path / "private" / "id_rsa"
    secret.parent.mkdir()
    secret.write_text("TOP SECRET hunter2\n")
    link = tmp_path / "private" / "notes.md"
    link.symlink_to(secret)
    sid = craft(where, system_prompt=str(link))
    model = FunctionModel(lambda request: text("ok"))
    app = app_for(where, model, profiles=("readonly",))
    async with client_for(app) as client:
        chat = await client.post(f"/api/sessions/{sid}/chat", json={"prompt": "go"})
        resume = await client.post(f"/api/sessions/{sid}/resume", json={"prompt": "go"})
    for refused in (chat, resume):
        assert refused.status_code == 403, refused.text
        message = refused.json()["error"]["message"]
        assert f"session {sid} was stored with the system prompt template {str(link)!r}" in message
        assert "a session directory does not choose which files are read" in message
    assert model.requests == []
    assert (where.sessions / sid / "trace.jsonl").read_text() == ""


async def test_a_literal_stored_system_prompt_still_runs(tmp_path: Path) -> None:
    where = place(tmp_path)
    sid = craft(where, system_prompt="Answer in one word.")
    model = FunctionModel(lambda request: text("ok"))
    app = app_for(where, model, profiles=("readonly",))
    async with client_for(app) as client:
        chat = await client.post(f"/api/sessions/{sid}/chat", json={"prompt": "go"})
        assert chat.status_code == 202, chat.text
        for _ in range(200):
            if model.requests:
                break
            await __import__("asyncio").sleep(0.01)
    assert [r.system for r in model.requests][:1] == ["Answer in one word."]
