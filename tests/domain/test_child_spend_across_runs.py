"""A session's limits count its earlier runs' sub-agents too (varsurf15b).

a1b4522 counted a sub-agent's model calls, tool calls and cost against its parent's run and
session, but only in the run that delegated (its tally): the parent's trace did not record
them, so the session's next run, or the session resumed from its store, started as if the
sub-agents had spent nothing. A session allowed 5 model calls made 8 over two runs. The
delegate result now records what its sub-agent spent, and the parent's State counts it."""

from __future__ import annotations

from domain_support import EchoTool, make_session

from rho_adapters.fakes import (
    MemoryExecutor,
    MemorySessionStore,
    ScriptedModel,
    Turn,
    call,
    text,
    tools,
)
from rho_domain import events as ev
from rho_domain.config import Budget
from rho_domain.loop.session import Session
from rho_domain.messages import Usage
from rho_domain.run import RunStatus
from rho_domain.state import State
from rho_domain.tools.delegate import DelegateTool

# the parent delegates (1 model call), its child makes 3 (2 echo calls, then its answer),
# and the parent answers (1): 5 model calls, 3 of them the child's
FIRST_RUN = [
    tools(call("delegate", {"instruction": "t"}, id="d1")),
    tools(call("echo", {"text": "1"}, id="e1")),
    tools(call("echo", {"text": "2"}, id="e2")),
    text("child"),
    text("parent"),
]
MORE = [tools(call("echo", {"text": str(n)}, id=f"m{n}")) for n in range(6)] + [text("two")]


async def test_the_next_run_counts_the_earlier_runs_children() -> None:
    session = make_session(
        [*FIRST_RUN, *MORE],
        tools=[EchoTool(), DelegateTool()],
        budget=Budget(session_max_turns=5),
    )
    assert (await session.run("go")).status is RunStatus.COMPLETED
    result = await session.run("again")
    assert result.status is RunStatus.BUDGET_EXCEEDED
    assert len(session.model.requests) == 5  # type: ignore[attr-defined]  # 8 before


async def test_a_resumed_session_counts_its_childrens_calls_and_cost() -> None:
    store = MemorySessionStore()
    spent = Usage(input_tokens=1, output_tokens=1, cost_usd=0.25)
    first_run = [Turn(text=t.text, tool_calls=t.tool_calls, usage=spent) for t in FIRST_RUN]
    first = make_session(
        first_run,
        tools=[EchoTool(), DelegateTool()],
        store=store,
        budget=Budget(session_max_tool_calls=4, session_max_cost_usd=1.5),
    )
    await first.run("go")  # 1.25 USD and 3 tool calls, the child's 0.75 and 2 among them
    await first.close()
    record, events = await store.open(first.id)
    state = State.from_events(events)
    assert (state.child_calls, state.child_tools, state.child_cost) == (3, 2, 0.75)
    model = ScriptedModel([Turn(tool_calls=m.tool_calls, usage=spent) for m in MORE[:-1]])
    second = Session(
        first.agent,
        model=model,
        executor=MemoryExecutor(),
        clock=first.clock,
        store=store,
        session_id=record.id,
        state=state,
        created=True,
    )
    result = await second.run("again")
    assert result.status is RunStatus.BUDGET_EXCEEDED
    # 0.25 USD and one tool call were left: one model call, its echo, and the stop (a
    # stored session's parent had spent 0.5 and 1 call only: 4 more calls before)
    assert len(model.requests) == 1


def test_a_hand_written_count_that_is_no_number_counts_nothing() -> None:
    state = State()
    for value in ("3", -1, True, float("nan")):
        state.apply(
            ev.ToolEnded(
                at=0.0, call_id="d", tool_name="delegate", content="", is_error=False,
                duration=0.0, metadata={"child_model_calls": value, "child_cost_usd": value},
            )
        )  # fmt: skip
    assert (state.child_calls, state.child_cost) == (0, 0.0)
