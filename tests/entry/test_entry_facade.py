"""The library facade as users embed it: real wiring by default, every port overridable."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest

from rho_adapters.fakes import (
    FakeClock,
    MemoryExecutor,
    MemorySessionStore,
    ScriptedApprover,
    ScriptedModel,
    call,
    text,
    tools,
)
from rho_domain.errors import ConfigError
from rho_domain.messages import ToolResultMessage
from rho_domain.tools.registry import ToolRegistry
from rho_entry import Agent, AgentConfig, RunStatus, Session


def test_public_names_import_from_rho_entry() -> None:
    import rho_entry

    for name in rho_entry.__all__:
        assert getattr(rho_entry, name) is not None


def test_the_public_errors_are_exported_beside_the_facade() -> None:
    """An embedder catches what ``resolve_approval(digest=)`` raises without reaching into
    ``rho_domain``: ``CallChanged`` is exported as ``RhoError`` and the runtime's are."""
    import rho_agent
    import rho_entry
    from rho_domain import errors

    for name in ("CallChanged", "RhoError", "RuntimeClosed", "RuntimeFull"):
        assert name in rho_entry.__all__
        assert getattr(rho_entry, name) is getattr(errors, name)
        assert getattr(rho_agent, name) is getattr(errors, name)


def test_agent_resolves_profile_tools_and_prompt(tmp_path: Path) -> None:
    agent = Agent(AgentConfig(profile="readonly", working_dir=str(tmp_path)))
    names = set(agent.registry.names)
    assert {"bash", "read", "grep", "glob", "list"} <= names
    assert not {"write", "edit", "delegate"} & names  # the documents: developer adds delegate
    assert str(tmp_path) in agent.system_prompt
    developer = Agent(AgentConfig(profile="developer", working_dir=str(tmp_path)))
    assert {"write", "edit", "delegate"} <= set(developer.registry.names)
    evaluation = Agent(AgentConfig(profile="eval", working_dir=str(tmp_path)))
    assert "delegate" in evaluation.registry.names


def test_an_empty_registry_given_is_kept(tmp_path: Path) -> None:
    """ "Not given" is ``is None``: an empty registry (falsy, it has ``__len__``) is a choice."""
    agent = Agent(AgentConfig(working_dir=str(tmp_path)), registry=ToolRegistry())
    assert agent.registry.names == ()
    assert agent.without_tools("delegate").registry.names == ()


def test_the_stream_setting_reaches_the_model() -> None:
    from rho_entry.wiring import build_model

    config = AgentConfig(model="m", base_url="http://127.0.0.1:8080/v1", stream=False)
    model = build_model(config, {}, FakeClock())
    assert model.stream_mode is False  # type: ignore[attr-defined]
    hosted = build_model(AgentConfig(model="m"), {"OPENAI_API_KEY": "k"}, FakeClock())
    assert hosted.stream_mode is None  # type: ignore[attr-defined]


def test_unknown_profile_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="no-such-profile"):
        Agent(AgentConfig(profile="no-such-profile"))


async def test_default_executor_runs_real_tools_in_the_working_dir(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello\n")
    agent = Agent(AgentConfig(profile="readonly", working_dir=str(tmp_path)))
    model = ScriptedModel([tools(call("list", {"path": "."})), text("one file")])
    async with Session(agent, model=model) as session:
        result = await session.run(prompt="what is here?")
    assert result.status is RunStatus.COMPLETED
    listing = session.state.messages[2]
    assert isinstance(listing, ToolResultMessage)
    assert "notes.txt" in listing.content


async def test_every_port_can_be_overridden_by_keyword(tmp_path: Path) -> None:
    agent = Agent(AgentConfig(profile="developer", working_dir=str(tmp_path)))
    executor, store, clock = MemoryExecutor(), MemorySessionStore(), FakeClock()
    approver = ScriptedApprover([True])
    model = ScriptedModel([tools(call("write", {"path": "a.md", "content": "# A"})), text("ok")])
    session = Session(
        agent, model=model, executor=executor, store=store, clock=clock, approver=approver
    )
    result = await session.run(prompt="write it")
    await session.close()
    assert result.status is RunStatus.COMPLETED
    assert executor.files == {"a.md": b"# A"}
    assert len(approver.requests) == 1
    assert store.events(session.id)[0].at == clock.now()
    assert not (tmp_path / "a.md").exists()


async def test_resume_keeps_saved_settings_and_applies_overrides(tmp_path: Path) -> None:
    store = MemorySessionStore()
    config = AgentConfig(
        profile="readonly",
        working_dir=str(tmp_path),
        model="model-a",
        system_prompt="Be terse.",
        max_turns=7,
    )
    first = Session(Agent(config), model=ScriptedModel([text("first answer")]), store=store)
    await first.run(prompt="hello")
    await first.close()
    resumed = await Session.resume(
        first.id[:6],
        store=store,
        overrides={"model": "model-b"},
        model=ScriptedModel([text("second answer")]),
    )
    assert resumed.agent.config.model == "model-b"
    assert resumed.agent.config.system_prompt == "Be terse."
    assert resumed.agent.config.max_turns == 7
    assert resumed.agent.system_prompt == "Be terse."
    result = await resumed.run(prompt="again")
    await resumed.close()
    assert result.session_usage.input_tokens > first.state.usage.input_tokens
    assert [m.content for m in resumed.state.user_messages()] == ["hello", "again"]


def test_run_sync_for_scripts(tmp_path: Path) -> None:
    agent = Agent(AgentConfig(working_dir=str(tmp_path)))
    result = Session(agent, model=ScriptedModel([text("sync")])).run_sync("hi")
    assert result.text == "sync"


def test_config_files_round_trip_and_name_bad_keys(tmp_path: Path) -> None:
    config = AgentConfig(model="m", profile="developer", max_turns=3, vars={"a": "b"})
    path = tmp_path / "agent.yaml"
    config.to_file(path)
    loaded = AgentConfig.from_file(path)
    assert attrs.asdict(loaded) == attrs.asdict(config)
    path.write_text("model: m\nmax_turnz: 3\n")
    with pytest.raises(ConfigError, match="max_turnz"):
        AgentConfig.from_file(path)


def test_a_session_cannot_be_pickled_or_copied_and_says_how_to_reopen_it(tmp_path: Path) -> None:
    # pickle failed deep inside ("Can't pickle local object '_createenviron.<locals>.encode'"),
    # deepcopy on a 'mappingproxy', and copy.copy gave a second facade on the same session.
    import copy
    import pickle

    agent = Agent(AgentConfig(working_dir=str(tmp_path)))
    session = Session(agent, model=ScriptedModel([]), executor=MemoryExecutor())
    for duplicate in (pickle.dumps, copy.copy, copy.deepcopy):
        with pytest.raises(TypeError) as refused:
            duplicate(session)
        assert str(refused.value).startswith("a Session cannot be pickled or copied")
        assert f"keep its id ({session.id!r}) and reopen it with Session.resume(" in str(
            refused.value
        )
    assert pickle.loads(pickle.dumps(agent)).config == agent.config  # noqa: S301 - our own bytes
