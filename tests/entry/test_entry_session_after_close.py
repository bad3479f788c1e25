"""A session used again after ``close``, as ``run_sync``'s second call uses it (each call runs
in a loop of its own and closes the session): with a real endpoint the second run failed with
"this model client was closed ... the server answered, then closed the connection
mid-response", blaming the server; with a store it raised a StoreError traceback ("not open in
this store") out of the close. The README's second ``run_sync`` (an approval answered, then
the run goes on) worked only with a scripted model."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from rho_adapters.fakes.loopback import LoopbackServer
from rho_adapters.fakes.wire import call, text_reply, tool_reply
from rho_domain.errors import SessionStateError
from rho_entry import Agent, AgentConfig, ApprovalInterrupt, RunStatus, Session


def test_a_second_run_sync_reaches_a_real_endpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    replies = [tool_reply(call("write", {"path": "n.txt", "content": "x"}, "w1")), text_reply("ok")]
    with LoopbackServer(replies) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("RHO_AGENT_HOME", str(tmp_path / "home"))
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        agent = Agent(AgentConfig(model="m", profile="developer", working_dir=str(tmp_path)))
        session = Session(agent)
        with pytest.raises(ApprovalInterrupt):
            session.run_sync("write it")
        session.resolve_approval("w1", True)
        result = session.run_sync()
    assert (result.status, result.text, result.error) == (RunStatus.COMPLETED, "ok", None)
    assert (tmp_path / "n.txt").read_text() == "x"
    assert len(server.requests) == 2


def test_a_stored_session_closed_is_resumed_not_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = tmp_path / "sessions"
    with LoopbackServer([text_reply("one"), text_reply("two")]) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("RHO_AGENT_HOME", str(tmp_path / "home"))
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        session = Session(
            Agent(AgentConfig(model="m", working_dir=str(tmp_path))), store=str(store)
        )
        assert session.run_sync("first").text == "one"
        with pytest.raises(SessionStateError) as refused:
            session.run_sync("second")
        assert f"Session.resume('{session.id}', store=...)" in str(refused.value)
        assert len(server.requests) == 1  # nothing ran, nothing was sent

        async def resumed() -> str:
            again = await Session.resume(session.id, store=str(store))
            async with again:
                return (await again.run("second")).text

        assert asyncio.run(resumed()) == "two"
    trace = next(store.glob("*/trace.jsonl")).read_text().splitlines()
    kinds = [json.loads(line)["kind"] for line in trace]
    assert kinds.count("run_start") == kinds.count("run_end") == 2


async def test_a_closed_stored_session_is_not_compacted(tmp_path: Path) -> None:
    """Before: ``compact()`` on a stored session after ``close`` asked the model for a summary,
    then failed on writing it: ``StoreError: session ... is not open in this store; create or
    open it``, naming neither ``close`` nor ``Session.resume``. Now it is refused before the
    model is asked, as ``run`` is."""
    from rho_adapters.fakes import FakeClock, MemoryExecutor, ScriptedModel, text

    model = ScriptedModel([text("a"), text("b"), text("c"), text("the summary")])
    store = str(tmp_path / "sessions")
    agent = Agent(AgentConfig(model="m", working_dir=str(tmp_path)))
    session = Session(agent, model=model, store=store, clock=FakeClock(), executor=MemoryExecutor())
    for prompt in ("one", "two", "three"):
        await session.run(prompt)
    await session.close()
    with pytest.raises(SessionStateError) as refused:
        await session.compact()
    assert f"open it again to go on: Session.resume('{session.id}', store=...)" in str(
        refused.value
    )
    assert len(model.requests) == 3  # no summary was asked for
