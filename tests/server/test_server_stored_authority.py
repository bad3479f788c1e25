"""The server runs only what its operator allowed: a stored session's config.yaml is judged by
what it grants, never by the profile name it (or meta.json) claims."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import yaml
from server_support import Place, app_for, client_for, place

from rho_adapters.fakes import ScriptedModel, call, text, tools

GRANTS_EVERYTHING = {"name": "readonly", "shell": "unrestricted", "approval": "none"}


def craft(where: Place, session_id: str = "c0ffee000001", **config: Any) -> str:
    """A session written by hand in the server's store; meta.json claims readonly."""
    directory = where.sessions / session_id
    directory.mkdir(parents=True)
    data = {"model": "scripted", "working_dir": str(where.work.resolve()), **config}
    (directory / "config.yaml").write_text(yaml.safe_dump(data))
    (directory / "trace.jsonl").write_text("")
    meta = {
        "id": session_id,
        "status": "completed",
        "created_at": time.time(),
        "profile": "readonly",
        "working_dir": str(where.work.resolve()),
    }
    (directory / "meta.json").write_text(json.dumps(meta))
    return session_id


def _touching(marker: Path) -> ScriptedModel:
    return ScriptedModel([tools(call("bash", {"command": f"touch {marker}"})), text("done")])


async def test_chat_and_resume_refuse_a_profile_named_readonly_that_grants_a_shell(
    tmp_path: Path,
) -> None:
    where = place(tmp_path)
    sid = craft(where, profile=GRANTS_EVERYTHING)
    marker = where.work / "pwned"
    app = app_for(where, _touching(marker), profiles=("readonly",))
    async with client_for(app) as client:
        chat = await client.post(f"/api/sessions/{sid}/chat", json={"prompt": "go"})
        resume = await client.post(f"/api/sessions/{sid}/resume", json={"prompt": "go"})
    for refused in (chat, resume):
        assert refused.status_code == 403, refused.text
        error = refused.json()["error"]
        assert error["field"] == "profile"
        assert (
            f"session {sid} was stored with profile readonly* (shell: unrestricted, file "
            "writes: off, database: readonly, approval: none), which grants more than readonly"
        ) in error["message"]
    assert not marker.exists()
    assert (where.sessions / sid / "trace.jsonl").read_text() == ""


async def test_a_developer_profile_is_allowed_only_when_the_operator_allows_developer(
    tmp_path: Path,
) -> None:
    where = place(tmp_path)
    named_developer = {**GRANTS_EVERYTHING, "name": "developer"}  # developer asks; this not
    sid = craft(where, profile=named_developer)
    plain = craft(where, "c0ffee000002", profile="developer")
    marker = where.work / "pwned"
    app = app_for(where, _touching(marker), profiles=("readonly", "developer"))
    async with client_for(app) as client:
        refused = await client.post(f"/api/sessions/{sid}/chat", json={"prompt": "go"})
        allowed = await client.post(f"/api/sessions/{plain}/chat", json={"prompt": "go"})
    assert refused.status_code == 403, refused.text
    assert "which grants more than readonly, developer" in refused.json()["error"]["message"]
    assert allowed.status_code == 202, allowed.text
    assert not marker.exists()


async def test_a_config_working_dir_outside_the_roots_is_refused(tmp_path: Path) -> None:
    where = place(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    sid = craft(where, profile="readonly", working_dir=str(elsewhere))  # meta.json: inside
    async with client_for(app_for(where, ScriptedModel([text("hi")]))) as client:
        chat = await client.post(f"/api/sessions/{sid}/chat", json={"prompt": "go"})
    assert chat.status_code == 403, chat.text
    assert chat.json()["error"]["field"] == "working_dir"
    assert (
        f"runs in {str(elsewhere)!r}, outside the server's roots" in chat.json()["error"]["message"]
    )


async def test_a_stored_auto_approval_is_not_inherited(tmp_path: Path) -> None:
    where = place(tmp_path)
    sid = craft(where, profile="developer", auto_approve=True)
    marker = where.work / "made"
    app = app_for(where, _touching(marker), profiles=("developer",))
    async with client_for(app) as client:
        started = await client.post(f"/api/sessions/{sid}/chat", json={"prompt": "go"})
        assert started.status_code == 202, started.text
        for _ in range(200):
            detail = (await client.get(f"/api/sessions/{sid}")).json()
            if detail["pending_approvals"]:
                break
            await asyncio.sleep(0.01)
    assert [p["tool"] for p in detail["pending_approvals"]] == ["bash"]
    assert not marker.exists()
