"""``Session.resume(id, store=..., agent=...)``, as a ``Session(agent, ...)`` is built, raised
"TypeError: open_session() got multiple values for argument 'agent'", a function the caller
never called. The stored agent is reopened; the refusal says how to change it."""

from __future__ import annotations

import pytest

from rho_adapters.fakes import FakeClock, MemorySessionStore, ScriptedModel, text
from rho_entry import Agent, AgentConfig, Session


async def test_resume_given_an_agent_says_to_use_overrides() -> None:
    store = MemorySessionStore()
    agent = Agent(AgentConfig(model="m"))
    async with Session(agent, model=ScriptedModel([text("one")]), store=store,
                       clock=FakeClock()) as session:  # fmt: skip
        await session.run("hi")
    with pytest.raises(TypeError) as refused:
        await Session.resume(session.id, store=store, agent=agent)
    assert "Session.resume reopens the stored agent" in str(refused.value)
    assert "overrides=" in str(refused.value)
    assert "open_session" not in str(refused.value)
