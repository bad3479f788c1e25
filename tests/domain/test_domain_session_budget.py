"""The session's budget counts every run, a resumed one's earlier runs too (issue 29,
item 7): model calls, tool calls, active time and cost, from the events State folds."""

from __future__ import annotations

from domain_support import make_session

from rho_adapters.fakes import FakeClock, MemorySessionStore, Turn, call, text, tools
from rho_domain import events as ev
from rho_domain.config import Budget
from rho_domain.loop.budgets import BudgetWatch
from rho_domain.messages import Usage
from rho_domain.run import RunStatus
from rho_domain.state import State


def _echo(n: int) -> Turn:
    return tools(call("echo", {"text": str(n)}, id=f"c{n}"))


async def test_session_tool_calls_and_model_calls_are_counted_across_runs() -> None:
    session = make_session(
        [_echo(1), text("one"), _echo(2), text("never")],
        budget=Budget(session_max_tool_calls=2),
    )
    assert (await session.run("a")).status is RunStatus.COMPLETED
    second = await session.run("b")  # its tool call is the session's second: no more calls
    assert second.status is RunStatus.BUDGET_EXCEEDED
    assert (await session.run("c")).status is RunStatus.BUDGET_EXCEEDED
    assert (session.state.model_calls, session.state.tool_calls) == (3, 2)
    assert len(session.model.requests) == 3  # type: ignore[attr-defined]

    turns = make_session([text("1"), text("2"), text("3")], budget=Budget(session_max_turns=2))
    assert [(await turns.run(p)).status for p in "abc"] == [
        RunStatus.COMPLETED,
        RunStatus.COMPLETED,
        RunStatus.BUDGET_EXCEEDED,
    ]


async def test_a_resumed_session_counts_its_stored_runs() -> None:
    store, clock = MemorySessionStore(), FakeClock()
    first = make_session(
        [Turn(text="one", usage=Usage(input_tokens=1, output_tokens=1, cost_usd=0.03))],
        store=store,
        clock=clock,
        budget=Budget(session_max_cost_usd=0.05),
    )
    assert (await first.run("a")).ok
    await first.close()
    _, events = await store.open(first.id)
    state = State.from_events(events)
    assert state.usage.cost_usd == 0.03
    assert (state.model_calls, state.tool_calls, state.run_count) == (1, 0, 1)
    budget = Budget(session_max_cost_usd=0.05, session_max_wall_seconds=100)
    watch = BudgetWatch.start(budget, state, started=50.0)
    assert watch.deadline() == 50.0 + 100 - state.run_seconds
    spent = Usage(cost_usd=0.03)
    assert watch.reached(own=Usage(), children=spent, state=state, now=51.0) == (
        "budget reached: 0.06 USD of 0.05 allowed for this session"
    )


def test_run_seconds_add_up_the_ended_runs() -> None:
    state = State()
    for start, end in ((10.0, 12.5), (20.0, 21.0)):
        state.apply(ev.RunStarted(at=start, run_id="r", prompt="p"))
        state.apply(ev.RunEnded(at=end, run_id="r", status=RunStatus.COMPLETED, text=""))
    state.apply(ev.RunStarted(at=30.0, run_id="r", prompt="p"))  # still running: not counted
    assert state.run_seconds == 3.5
