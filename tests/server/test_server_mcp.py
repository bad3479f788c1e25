"""A readonly session over HTTP with an MCP server its profile names: the MCP call that is not
in ``read_only_tools`` waits for an approval given over HTTP, and ``rho-agent serve
--mcp-config`` runs the file's servers (a real MCP server over stdio)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from server_support import (
    Serve,
    client_for,
    forked_command,
    http,
    place,
    serve_env,
    settings,
    wait_idle,
)

from rho_adapters.fakes import ScriptedModel, call, text, tools
from rho_adapters.fakes.loopback import LoopbackServer
from rho_adapters.fakes.wire import call as wire_call
from rho_adapters.fakes.wire import text_reply, tool_reply
from rho_domain.call_digest import call_digest
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
        command=tuple(forked_command("mcp", [sys.executable, str(REFERENCE), "stdio"])),
        read_only_tools=("echo",),
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
        (pending,) = detail["pending_approvals"]
        digest = pending.pop("digest")
        assert pending == {
            "call_id": "c-add",
            "tool": "mcp__ref__add",
            "arguments": ADD.arguments,
            "working_dir": os.path.realpath(where.work),
        }
        # the digest covers the tool as it was shown too (its description and schema)
        assert digest != call_digest(ADD.name, ADD.arguments)
        answered = await client.post(
            f"/api/sessions/{sid}/approvals/c-add", json={"decision": "approve", "digest": digest}
        )
        assert answered.status_code == 202, answered.text
        detail = await wait_idle(client, sid)
        assert detail["status"] == "completed"
    results = [m for m in model.requests[2].messages if m.role == "tool"]
    assert [r.content for r in results] == ["echo: hi", json.dumps({"total": 42}, indent=2)]


def test_serve_runs_its_mcp_config_for_a_clients_session(tmp_path: Path) -> None:
    """``rho-agent serve --mcp-config FILE`` as a real process, the loopback model: a client's
    readonly session under a profile naming the server calls its read-only tool."""
    where = place(tmp_path)
    (where.home / "profiles").mkdir()
    (where.home / "profiles" / "ops.yaml").write_text("base: readonly\nmcp_servers:\n  ref: {}\n")
    mcp = where.home / "mcp.json"
    mcp.write_text(
        json.dumps(
            {
                "mcp_servers": {
                    "ref": {
                        "command": forked_command("mcp", [sys.executable, str(REFERENCE), "stdio"]),
                        "read_only_tools": ["echo"],
                    }
                }
            }
        )
    )
    replies = [tool_reply(wire_call("mcp__ref__echo", {"text": "served"})), text_reply("done")]
    with LoopbackServer(replies) as model:
        env = serve_env(where.home, model.base_url, RHO_AGENT_SERVER_PROFILES="ops")
        serve = Serve(where.work, env, "--mcp-config", str(mcp))
        try:
            created = http().post(
                f"{serve.url}/api/sessions", json={"prompt": "echo"}, headers=serve.auth
            )
            assert created.status_code == 201, created.text
            sid = created.json()["id"]
            http().get(
                f"{serve.url}/api/sessions/{sid}/stream",
                params={"until": "idle"},
                headers=serve.auth,
                timeout=60,
            )
            detail = http().get(f"{serve.url}/api/sessions/{sid}", headers=serve.auth).json()
        finally:
            assert serve.stop() == 0
    assert detail["status"] == "completed", detail
    assert model.requests[1]["messages"][-1]["content"] == "echo: served"
