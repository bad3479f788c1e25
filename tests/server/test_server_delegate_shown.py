"""A delegate call's approval shows the sub-agent's call it approves, wherever it is shown
from the server. The answer's digest covers the sub-agent's waiting call (037e49c), but
``pending_approvals`` gave only the delegate call's own tool and arguments: the terminal
client (``rho-agent --server``) asked "approve delegate {instruction}?" and sent the digest
of a write nobody was shown, and the dashboard showed the sub-agent's call only from the
event's reason, a second read of the trace that can say otherwise than the digest. Now
``pending_approvals[].sub_agent`` (session, tool, arguments) is the call the digest covers,
and both show it."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from server_support import app_for, client_for, place, wait_idle

from rho_adapters.fakes import ScriptedModel, call, text, tools
from rho_domain.call_digest import call_digest
from rho_entry.cli import remote

WRITE = {"path": "note.txt", "content": "hi\n"}


def delegating() -> ScriptedModel:
    """The parent delegates; its sub-agent (sharing the model) asks to write a note."""
    return ScriptedModel(
        [
            tools(call("delegate", {"instruction": "write the note"}, id="d1")),
            tools(call("write", WRITE, id="w1")),
            text("child: done"),
            text("parent: done"),
        ]
    )


async def _pending(tmp_path: Path) -> dict[str, Any]:
    app = app_for(place(tmp_path), delegating())
    async with client_for(app) as client:
        created = await client.post(
            "/api/sessions", json={"prompt": "delegate a note", "profile": "developer"}
        )
        detail = await wait_idle(client, created.json()["id"])
    (pending,) = detail["pending_approvals"]
    assert isinstance(pending, dict)
    return pending


async def test_the_api_shows_the_sub_agents_call_its_digest_covers(tmp_path: Path) -> None:
    pending = await _pending(tmp_path)
    child = pending["sub_agent"]  # absent before
    assert (child["tool"], json.loads(child["arguments"])) == ("write", WRITE)
    covered = call_digest(
        "delegate",
        pending["arguments"],
        child=(child["tool"], child["arguments"]),
        place=pending["working_dir"],  # where the sub-agent runs: the parent's directory
    )
    assert pending["working_dir"]  # recorded for a delegate call too (it was empty)
    assert pending["digest"] == covered


async def test_the_terminal_client_asks_with_the_sub_agents_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pending = await _pending(tmp_path)
    asked = io.StringIO()
    monkeypatch.setattr(sys, "stderr", asked)
    monkeypatch.setattr(sys, "stdin", io.StringIO("n\n"))
    assert remote._ask(pending) == "deny"
    prompt = asked.getvalue()
    assert "approve delegate" in prompt
    assert 'its sub-agent asks to run write {"path": "note.txt"' in prompt  # absent before
