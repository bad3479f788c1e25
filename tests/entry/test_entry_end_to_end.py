"""The whole stack with default wiring: real HTTP client → loopback server, real tools on real
files, real file store — exactly what a library user gets from ``Session(agent)``."""

from __future__ import annotations

import os
from pathlib import Path

import attrs

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


async def test_configured_database_gets_a_read_only_tool(tmp_path: Path) -> None:
    import sqlite3

    from rho_adapters.fakes import ScriptedModel, call, text, tools
    from rho_domain.config import DatabaseConfig

    db = tmp_path / "shop.db"
    with sqlite3.connect(db) as conn:
        conn.execute("create table orders (id integer primary key, total real)")
        conn.executemany("insert into orders (total) values (?)", [(9.5,), (20.0,)])
    config = AgentConfig(
        working_dir=str(tmp_path),
        profile="eval",
        databases={"shop": DatabaseConfig(engine="sqlite", path=str(db))},
    )
    agent = Agent(config)
    assert "sqlite" in agent.registry.names
    model = ScriptedModel(
        [
            tools(
                call(
                    "sqlite",
                    {
                        "database": "shop",
                        "operation": "query",
                        "sql": "select count(*) as n, sum(total) as s from orders",
                    },
                )
            ),
            tools(
                call(
                    "sqlite",
                    {"database": "shop", "operation": "query", "sql": "delete from orders"},
                )
            ),
            text("2 orders"),
        ]
    )
    readonly = Agent(attrs.evolve(config, profile="readonly", auto_approve=True))
    async with Session(readonly, model=model) as session:
        result = await session.run(prompt="how many orders?")
    assert result.status is RunStatus.COMPLETED
    answer, refused = session.state.messages[2], session.state.messages[4]
    assert isinstance(answer, ToolResultMessage)
    assert "29.5" in answer.content
    assert isinstance(refused, ToolResultMessage)
    assert refused.is_error
    with sqlite3.connect(db) as conn:
        assert conn.execute("select count(*) from orders").fetchone() == (2,)


def test_the_library_reads_the_base_url_variables_as_the_cli_does(tmp_path: Path) -> None:
    import subprocess
    import sys

    script = (
        "from rho_entry import Agent, AgentConfig, Session\n"
        f"agent = Agent(AgentConfig(model='m', working_dir={str(tmp_path)!r}))\n"
        "result = Session(agent).run_sync('hi')\n"
        "print(result.status.value, result.text, result.error)\n"
    )
    for variable in ("OPENAI_BASE_URL", "RHO_AGENT_BASE_URL"):
        with LoopbackServer([text_reply("hello from the server")]) as server:
            env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), variable: server.base_url}
            # the sources under test, not the venv's editable install (another checkout)
            env.update({k: v for k, v in os.environ.items() if k == "PYTHONPATH"})
            done = subprocess.run(
                [sys.executable, "-c", script],
                env=env,
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
            )
        assert done.stdout == "completed hello from the server None\n", done.stderr
        assert len(server.requests) == 1
