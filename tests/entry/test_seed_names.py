"""The seeds' names on our design: ApprovalInterrupt, approval_callback, State.from_jsonl,
SessionStore, RunResult.events, and no silently ignored settings."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from rho_adapters.fakes import MemoryExecutor, ScriptedModel, call, text, tools
from rho_adapters.store import read_trace
from rho_domain.state import State as DomainState
from rho_entry import (
    Agent,
    AgentConfig,
    ApprovalAnswer,
    ApprovalInterrupt,
    RunStatus,
    Session,
    SessionStore,
    State,
)


def developer(tmp_path: Path) -> Agent:
    return Agent(AgentConfig(profile="developer", working_dir=str(tmp_path)))


async def test_approval_interrupt_leaves_the_call_for_an_answer_out_of_band(
    tmp_path: Path,
) -> None:
    store = SessionStore(tmp_path / "sessions")
    write = call("write", {"path": "a.md", "content": "# A"})
    executor = MemoryExecutor()

    def later(tool_name: str, args: Any) -> bool:
        raise ApprovalInterrupt

    session = store.create_session(
        developer(tmp_path), model=ScriptedModel([tools(write)]), executor=executor
    )
    session.approval_callback = later
    first = await session.run("write a.md")
    await session.close()
    assert first.status is RunStatus.AWAITING_APPROVAL
    assert [p.call.id for p in first.pending] == [write.id]
    # Another process (here: another Session on the same store) answers and continues.
    resumed = await store.resume(  # the profile is the resumer's to give, not the store's
        session.id,
        agent_config=developer(tmp_path).config,
        model=ScriptedModel([text("written")]),
        executor=executor,
    )
    resumed.resolve_approval(write.id, approved=True)
    second = await resumed.run()
    await resumed.close()
    assert second.status is RunStatus.COMPLETED
    assert executor.files == {"a.md": b"# A"}


async def test_a_callback_may_answer_always(tmp_path: Path) -> None:
    calls = [call("write", {"path": f"{n}.md", "content": n}) for n in "ab"]
    asked: list[str] = []

    async def always(tool_name: str, args: Any) -> ApprovalAnswer:
        asked.append(args["path"])
        return ApprovalAnswer(approved=True, always=True)

    executor = MemoryExecutor()
    session = Session(
        developer(tmp_path),
        model=ScriptedModel([tools(calls[0]), tools(calls[1]), text("done")]),
        executor=executor,
        approval_callback=always,
    )
    result = await session.run("write both")
    assert result.status is RunStatus.COMPLETED
    assert asked == ["a.md"]  # the second write was allowed by "always"
    assert set(executor.files) == {"a.md", "b.md"}


def test_setting_an_attribute_that_does_nothing_is_an_error(tmp_path: Path) -> None:
    session = Session(developer(tmp_path), model=ScriptedModel([]))
    with pytest.raises(AttributeError, match="cancel_check"):
        session.cancel_check = lambda: False
    with pytest.raises(AttributeError, match=r"approver.*cannot be replaced"):
        session.approver = None  # a port: the tool batch already holds the old one
    session.approval_callback = None  # a real setting
    from rho_domain.errors import ConfigError

    with pytest.raises(ConfigError, match="callable"):
        session.approval_callback = "yes"  # type: ignore[assignment]


async def test_state_from_jsonl_restores_a_stored_session(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "sessions")
    session = store.create_session(
        Agent(AgentConfig(working_dir=str(tmp_path))),
        model=ScriptedModel([tools(call("list", {"path": "."})), text("one file")]),
        executor=MemoryExecutor(files={"x": b"1"}),
    )
    await session.run("what is here?")
    await session.close()
    trace = store.session_dir(session.id) / "trace.jsonl"
    restored = State.from_jsonl(trace)
    assert isinstance(restored, State)
    assert restored.messages == session.state.messages
    assert restored.usage == session.state.usage
    assert State.from_jsonl(trace.read_bytes()).messages == session.state.messages
    replayed = DomainState.from_events(read_trace(trace).events)
    assert restored.status == replayed.status == "completed"


async def test_session_store_lists_and_resumes(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "sessions")
    assert await store.get_latest_id() is None
    session = store.create_session(
        Agent(AgentConfig(working_dir=str(tmp_path))), model=ScriptedModel([text("hi")])
    )
    await session.run("hello")
    await session.close()
    assert await store.get_latest_id() == session.id
    assert [info.id for info in await store.list()] == [session.id]
    resumed = await store.resume(
        "latest",
        agent_config=AgentConfig(working_dir=str(tmp_path), model="other-model"),
        model=ScriptedModel([text("again")]),
    )
    assert resumed.agent.config.model == "other-model"
    assert (await resumed.run("more")).text == "again"
    await resumed.close()


def test_session_store_defaults_to_the_config_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RHO_AGENT_HOME", str(tmp_path / "home"))
    assert SessionStore().root == tmp_path / "home" / "sessions"


async def test_run_result_events_are_opt_in(tmp_path: Path) -> None:
    agent = Agent(AgentConfig(working_dir=str(tmp_path)))
    session = Session(agent, model=ScriptedModel([text("a"), text("b")]))
    plain = await session.run("one")
    seen: list[str] = []
    recorded = await session.run("two", record_events=True, on_event=lambda e: seen.append(e.kind))
    assert plain.events == ()
    assert [e.kind for e in recorded.events] == seen
    assert seen[0] == "run_start"
    assert seen[-1] == "run_end"
