"""A readonly session over HTTP with an MCP server its profile names: the MCP call that is not
in ``read_only_tools`` waits for an approval given over HTTP (a real MCP server over stdio)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from server_support import client_for, place, settings, wait_idle

from rho_adapters.fakes import ScriptedModel, call, text, tools
from rho_domain.config import AgentConfig
from rho_domain.mcp_config import McpServerConfig
from rho_entry.server import create_app

REFERENCE = Path(__file__).parents[1] / "mcp_tools" / "reference_server.py"
ADD = call("mcp__ref__add", {"a": 20, "b": 22}, id="c-add")
ECHO = call("mcp__ref__echo", {"text": "hi"}, id="c-echo")


async def test_an_mcp_call_under_readonly_is_approved_over_http(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    where = place(tmp_path)
    monkeypatch.setenv("RHO_AGENT_HOME", str(where.home))  # where the agent finds ops.yaml
    (where.home / "profiles").mkdir()
    (where.home / "profiles" / "ops.yaml").write_text("base: readonly\nmcp_servers:\n  ref: {}\n")
    server = McpServerConfig(
        command=(sys.executable, str(REFERENCE), "stdio"), read_only_tools=("echo",)
    )
    model = ScriptedModel([tools(ECHO), tools(ADD), text("42"), text("bye")])
    app = create_app(
        settings(where, profiles=("ops",)),
        base_config=AgentConfig(model="scripted", mcp_servers={"ref": server}),
        environ={"RHO_AGENT_HOME": str(where.home), "HOME": str(where.home)},
        session_ports={"model": model},
    )
    async with client_for(app) as client:
        created = await client.post("/api/sessions", json={"prompt": "add", "profile": "ops"})
        assert created.status_code == 201, created.text
        sid = created.json()["id"]
        detail = await wait_idle(client, sid)
        assert detail["status"] == "awaiting_approval"
        assert detail["pending_approvals"] == [
            {"call_id": "c-add", "tool": "mcp__ref__add", "arguments": ADD.arguments}
        ]
        answered = await client.post(
            f"/api/sessions/{sid}/approvals/c-add", json={"decision": "approve"}
        )
        assert answered.status_code == 202, answered.text
        detail = await wait_idle(client, sid)
        assert detail["status"] == "completed"
    results = [m for m in model.requests[2].messages if m.role == "tool"]
    assert [r.content for r in results] == ["echo: hi", json.dumps({"total": 42}, indent=2)]
