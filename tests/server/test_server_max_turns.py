"""A server's client asks for fewer turns, never more than the operator's config allows: the
create body's ``max_turns`` is held to the server's, the tighter winning (0: the server's),
as a stored session's is on resume. Before, ``{"max_turns": 0}`` ran without the limit the
server was started with (``max_turns: 1`` here), to the model's last answer."""

from __future__ import annotations

from pathlib import Path

from server_support import client_for, place, settings, wait_idle

from rho_adapters.fakes import ScriptedModel, call, text, tools
from rho_domain.config import AgentConfig
from rho_entry.server.app import create_app


def _app(tmp_path: Path) -> object:
    where = place(tmp_path)
    model = ScriptedModel(
        [tools(call("list", {"path": "."})), tools(call("list", {"path": "."})), text("done")]
    )
    return create_app(
        settings(where),
        base_config=AgentConfig(model="scripted", max_turns=1),
        environ={"RHO_AGENT_HOME": str(where.home), "HOME": str(where.home)},
        session_ports={"model": model},
    )


async def test_a_client_cannot_lift_the_servers_max_turns(tmp_path: Path) -> None:
    for asked in (0, 50):
        app = _app(tmp_path / str(asked))
        async with client_for(app) as client:
            created = await client.post("/api/sessions", json={"prompt": "go", "max_turns": asked})
            assert created.status_code == 201, created.text
            detail = await wait_idle(client, created.json()["id"])
        assert detail["status"] == "max_turns", detail  # completed before
        assert detail["turns"] == 1


async def test_a_client_may_ask_for_fewer(tmp_path: Path) -> None:
    app = _app(tmp_path)
    async with client_for(app) as client:
        created = await client.post("/api/sessions", json={"prompt": "go", "max_turns": 1})
        detail = await wait_idle(client, created.json()["id"])
    assert (detail["status"], detail["turns"]) == ("max_turns", 1)
