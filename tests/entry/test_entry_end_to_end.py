"""The whole stack with default wiring: real HTTP client → loopback server, real tools on real
files, real file store — exactly what a library user gets from ``Session(agent)``."""

from __future__ import annotations

from pathlib import Path

from rho_adapters.fakes import LoopbackServer, http_error, text_reply, tool_reply, wire_call
from rho_adapters.store import FileSessionStore
from rho_domain.messages import ToolResultMessage
from rho_entry import Agent, AgentConfig, RunStatus, Session


async def test_default_wiring_runs_a_tool_loop_against_a_real_server(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "app.py").write_text("print('hi')\n")
    server = LoopbackServer(
        [
            http_error(429, "slow down", retry_after=0),
            tool_reply(wire_call("read", {"path": "app.py"})),
            text_reply("app.py prints hi.", deltas=5),
        ]
    ).start()
    try:
        config = AgentConfig(
            model="test-model", base_url=server.base_url, working_dir=str(work), profile="readonly"
        )
        store = FileSessionStore(tmp_path / "sessions")
        async with Session(Agent(config), store=store) as session:
            result = await session.run(prompt="What does app.py do?")
    finally:
        server.stop()
    assert result.status is RunStatus.COMPLETED, result.error
    assert result.text == "app.py prints hi."
    read = session.state.messages[2]
    assert isinstance(read, ToolResultMessage)
    assert "print('hi')" in read.content
    assert server.requests[-1]["messages"][-1]["role"] == "tool"
    trace = (tmp_path / "sessions" / session.id / "trace.jsonl").read_text()
    assert '"run_end"' in trace
    assert "app.py prints hi." in trace
    assert (work / "app.py").read_text() == "print('hi')\n"


async def test_an_endpoint_error_is_a_status_not_an_exception(tmp_path: Path) -> None:
    server = LoopbackServer([http_error(401, "invalid api key")]).start()
    try:
        config = AgentConfig(model="m", base_url=server.base_url, working_dir=str(tmp_path))
        async with Session(Agent(config)) as session:
            result = await session.run(prompt="hi")
    finally:
        server.stop()
    assert result.status is RunStatus.ERROR
    assert result.error_type == "AuthenticationError"
    assert "invalid api key" in (result.error or "")
