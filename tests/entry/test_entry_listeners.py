"""The library facade's listeners (issue 29, item 8): a caller's listener that raises is
reported under its own name, and ``record_events`` still holds every event of the run."""

from __future__ import annotations

from rho_adapters.fakes import MemoryExecutor, ScriptedModel, text
from rho_domain import events as ev
from rho_domain.run import RunStatus
from rho_entry import Agent, AgentConfig, Session


async def test_the_facade_names_the_callers_listener_and_keeps_every_event() -> None:
    def my_panel(event: ev.Event) -> None:
        raise AttributeError("'NoneType' object has no attribute 'write'")

    agent = Agent(AgentConfig(profile="readonly"), environ={})
    session = Session(agent, model=ScriptedModel([text("fine")]), executor=MemoryExecutor())
    result = await session.run("go", on_event=my_panel, record_events=True)
    assert result.status is RunStatus.COMPLETED
    (failed,) = [e for e in result.events if isinstance(e, ev.ListenerFailed)]
    assert failed.listener.endswith("my_panel")
    assert result.events[0].kind == "run_start"
    assert result.events[-1].kind == "run_end"
