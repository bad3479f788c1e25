"""Seed 001, item 7 for the library: ``Agent(AgentConfig(...))`` "registers database tools if
environment variables are set", as the CLI does, through the same one function
(``databases_config.with_configured_databases``), unless the config names databases itself;
a resumed session's databases stay the resumer's."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from rho_adapters.fakes import MemorySessionStore, ScriptedModel, call, text, tools
from rho_adapters.store import FileSessionStore
from rho_domain.config import DatabaseConfig
from rho_domain.errors import ConfigError
from rho_domain.messages import ToolResultMessage
from rho_entry import Agent, AgentConfig, Session
from rho_entry.replay import replay_async


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty config directory, and no database variable of the machine's."""
    path = tmp_path / "home"
    path.mkdir()
    monkeypatch.setenv("RHO_AGENT_HOME", str(path))
    for name in ("RHO_AGENT_DB_CONFIG", "SQLITE_DB", "POSTGRES_HOST", "MYSQL_HOST"):
        monkeypatch.delenv(name, raising=False)
    for name in ("VERTICA_HOST", "ORACLE_DSN"):
        monkeypatch.delenv(name, raising=False)
    return path


def _fruit_db(path: Path, *fruits: str) -> Path:
    with sqlite3.connect(path) as con:
        con.execute("CREATE TABLE fruit (name TEXT)")
        con.executemany("INSERT INTO fruit VALUES (?)", [(f,) for f in fruits])
    return path


def _query_script() -> ScriptedModel:
    return ScriptedModel(
        [
            tools(call("sqlite", {"operation": "query", "sql": "SELECT name FROM fruit"}, id="q")),
            text("done"),
        ]
    )


def _result(session: Session, call_id: str) -> str:
    """The last result of the call ``call_id`` (each run's script reuses the id, which the
    session makes distinct: ``q``, ``q_2``, ...)."""
    return next(
        m.content
        for m in reversed(session.state.messages)
        if isinstance(m, ToolResultMessage) and m.call_id.partition("_")[0] == call_id
    )


async def test_a_fresh_agent_gets_the_sqlite_db_of_the_environment(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = _fruit_db(tmp_path / "shop.db", "quince", "medlar")
    monkeypatch.setenv("SQLITE_DB", str(db))
    agent = Agent(AgentConfig(profile="readonly", working_dir=str(tmp_path)))
    assert "sqlite" in agent.registry.names
    assert dict(agent.config.databases) == {"sqlite": DatabaseConfig(engine="sqlite", path=str(db))}
    async with Session(agent, model=_query_script()) as session:
        result = await session.run("what fruit?")
        assert result.status == "completed", result.error
        answer = _result(session, "q")
    assert "quince" in answer
    assert "medlar" in answer


async def test_databases_yaml_named_by_the_environment_is_read_too(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = _fruit_db(tmp_path / "shop.db", "sloe")
    config = tmp_path / "dbs.yaml"
    config.write_text(f"databases:\n  shop:\n    engine: sqlite\n    path: {db}\n")
    monkeypatch.setenv("RHO_AGENT_DB_CONFIG", str(config))
    agent = Agent(AgentConfig(working_dir=str(tmp_path)))
    assert list(agent.config.databases) == ["shop"]
    model = ScriptedModel(
        [
            tools(call("sqlite", {"operation": "query", "sql": "SELECT name FROM fruit"}, id="q")),
            text("done"),
        ]
    )
    async with Session(agent, model=model) as session:
        await session.run("what fruit?")
        assert "sloe" in _result(session, "q")


def test_a_config_that_names_databases_keeps_only_its_own(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SQLITE_DB", str(_fruit_db(tmp_path / "env.db", "x")))
    own = {"main": DatabaseConfig(engine="sqlite", path=str(tmp_path / "own.db"))}
    agent = Agent(AgentConfig(working_dir=str(tmp_path), databases=own))
    assert dict(agent.config.databases) == own
    # environ= replaces the process environment; {} reads none
    bare = Agent(AgentConfig(working_dir=str(tmp_path)), environ={})
    assert "sqlite" not in bare.registry.names
    assert dict(bare.config.databases) == {}


def test_without_database_variables_there_is_no_database_tool(tmp_path: Path, home: Path) -> None:
    agent = Agent(AgentConfig(working_dir=str(tmp_path)))
    assert dict(agent.config.databases) == {}
    assert not {"sqlite", "postgres", "mysql", "oracle", "vertica"} & set(agent.registry.names)


def test_a_broken_database_variable_is_an_error_naming_it(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("POSTGRES_HOST", "db.internal")
    with pytest.raises(ConfigError, match="POSTGRES_DATABASE"):
        Agent(AgentConfig(working_dir=str(tmp_path)))


async def _stored(tmp_path: Path, store: MemorySessionStore) -> str:
    agent = Agent(AgentConfig(working_dir=str(tmp_path)))
    async with Session(agent, model=_query_script(), store=store) as session:
        await session.run("what fruit?")
        return session.id


async def test_a_resumed_session_keeps_the_resumers_databases(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = _fruit_db(tmp_path / "first.db", "fig")
    other = _fruit_db(tmp_path / "other.db", "date")
    monkeypatch.setenv("SQLITE_DB", str(first))
    store = MemorySessionStore()
    sid = await _stored(tmp_path, store)
    # the same environment: the stored list is the resumer's, it resumes
    session = await Session.resume(sid, store=store, model=_query_script())
    try:
        assert dict(session.agent.config.databases) == {
            "sqlite": DatabaseConfig(engine="sqlite", path=str(first))
        }
        await session.run("again")
        assert "fig" in _result(session, "q")
    finally:
        await session.close()
    # another database now: the stored list differs, it is refused
    monkeypatch.setenv("SQLITE_DB", str(other))
    with pytest.raises(ConfigError, match=r"names databases \(sqlite\) that differ"):
        await Session.resume(sid, store=store, model=_query_script())
    # none now: refused too (a session directory does not choose where queries go)
    monkeypatch.delenv("SQLITE_DB")
    with pytest.raises(ConfigError, match="differ from your database configuration"):
        await Session.resume(sid, store=store, model=_query_script())
    # given again explicitly: the resumer's choice
    given = {"sqlite": DatabaseConfig(engine="sqlite", path=str(other))}
    again = await Session.resume(
        sid, store=store, model=_query_script(), overrides={"databases": given}
    )
    try:
        await again.run("and now?")
        assert "date" in _result(again, "q")
    finally:
        await again.close()


async def test_a_session_stored_without_databases_resumes_with_the_resumers(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = MemorySessionStore()
    async with Session(
        Agent(AgentConfig(working_dir=str(tmp_path))), model=ScriptedModel([text("hi")]),
        store=store,
    ) as session:  # fmt: skip
        await session.run("hello")
        sid = session.id
    monkeypatch.setenv("SQLITE_DB", str(_fruit_db(tmp_path / "later.db", "kiwi")))
    # the resumer's environment names a database now: the resumer's databases, not the store's
    resumed = await Session.resume(sid, store=store, model=ScriptedModel([text("ok")]))
    try:
        assert list(resumed.agent.config.databases) == ["sqlite"]
    finally:
        await resumed.close()


async def test_a_replay_runs_the_recorded_databases_not_the_environments(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = FileSessionStore(tmp_path / "sessions")
    async with Session(
        Agent(AgentConfig(working_dir=str(tmp_path))), model=_query_script(), store=store
    ) as session:
        await session.run("what fruit?")
        assert "unknown tool" in _result(session, "q").lower()  # recorded without a database
        directory = tmp_path / "sessions" / session.id
    monkeypatch.setenv("SQLITE_DB", str(_fruit_db(tmp_path / "later.db", "kiwi")))
    # live tools: a sqlite tool from the environment would answer with kiwi and diverge
    here = {"working_dir": str(tmp_path)}  # live tools run where the caller says
    report = await replay_async(directory, tools="live", overrides=here)
    report.check()
