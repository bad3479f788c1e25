"""State: replaying events rebuilds exactly what the live session had; crash repair."""

from __future__ import annotations

from domain_support import EchoTool, WriteNoteTool, make_session

from rho_adapters.fakes import (
    ManualSignals,
    MemorySessionStore,
    ScriptedModel,
    call,
    text,
    tools,
)
from rho_domain import events as ev
from rho_domain.loop.session import Session
from rho_domain.messages import AssistantMessage, ToolCall, ToolResultMessage, Usage, UserMessage
from rho_domain.not_run import INTERRUPTED_RESULT
from rho_domain.run import RunStatus
from rho_domain.state import State

C1 = ToolCall(id="c1", name="echo", arguments='{"text": "1"}')
C2 = ToolCall(id="c2", name="echo", arguments='{"text": "2"}')


def crashed_trace() -> list[ev.Event]:
    """A process that died while running the second tool of a batch."""
    return [
        ev.RunStarted(at=1, run_id="r", prompt="go"),
        ev.MessageAdded(at=1, message=UserMessage("go")),
        ev.UsageRecorded(at=2, usage=Usage(input_tokens=50, output_tokens=7), prompt_tokens=50),
        ev.MessageAdded(at=2, message=AssistantMessage(text="two calls", tool_calls=(C1, C2))),
        ev.ToolStarted(at=3, call=C1),
        ev.MessageAdded(
            at=3, message=ToolResultMessage(call_id="c1", tool_name="echo", content="1")
        ),
        ev.ToolStarted(at=4, call=C2),
    ]


def test_replay_of_a_crash_gives_every_call_a_result_in_place() -> None:
    state = State.from_events(crashed_trace())
    assert [type(m).__name__ for m in state.messages] == [
        "UserMessage",
        "AssistantMessage",
        "ToolResultMessage",
        "ToolResultMessage",
    ]
    synthetic = state.messages[-1]
    assert isinstance(synthetic, ToolResultMessage)
    assert synthetic.call_id == "c2"
    assert synthetic.content == INTERRUPTED_RESULT
    assert synthetic.is_error
    assert state.usage.input_tokens == 50
    assert state.status == "running"
    assert state.unanswered_calls() == ()


def test_replay_without_repair_shows_the_dangling_call() -> None:
    state = State.from_events(crashed_trace(), repair=False)
    assert [c.id for c in state.unanswered_calls()] == ["c2"]


async def test_a_resumed_crash_continues_with_a_valid_request_and_intact_usage() -> None:
    store = MemorySessionStore()
    first = make_session([text("x")], store=store)
    await first.run("seed")  # creates the session in the store
    await first.close()
    for event in crashed_trace()[2:]:
        await store.append(first.id, [event])
    record, events = await store.open(first.id)
    state = State.from_events(events)
    model = ScriptedModel([text("recovered", input_tokens=10, output_tokens=1)])
    resumed = Session(
        first.agent,
        model=model,
        executor=first.executor,
        clock=first.clock,
        store=store,
        session_id=record.id,
        state=state,
        created=True,
    )
    result = await resumed.run("carry on")
    assert result.status is RunStatus.COMPLETED
    request = model.requests[0].messages
    answered = {m.call_id for m in request if isinstance(m, ToolResultMessage)}
    assert answered == {"c1", "c2"}
    assert result.session_usage.input_tokens == 50 + 10 + first.state.usage.input_tokens
    again = State.from_events(store.events(first.id))
    assert again.messages == resumed.state.messages


async def test_replay_equals_the_live_state_after_a_busy_session() -> None:
    store, signals = MemorySessionStore(), ManualSignals()
    session = make_session(
        [
            tools(call("echo", {"text": "a" * 3000}), text="working"),
            tools(call("write", {"path": "f", "content": "c"})),
            text("one", input_tokens=30, output_tokens=3),
            text("two", input_tokens=5, output_tokens=1),
            text("SUMMARY"),
        ],
        tools=[EchoTool(), WriteNoteTool()],
        profile="developer",
        store=store,
        signals=signals,
    )
    signals.add_directive("be brief", session.id)
    first = await session.run("start")
    assert first.status is RunStatus.AWAITING_APPROVAL
    session.resolve_approval(first.pending[0].call.id, True, always=True)
    await session.run()
    await session.run("finish")
    await session.compact()  # summarises the first two runs (the echo made them long)
    await session.close()
    live = session.state
    replayed = State.from_events(store.events(session.id))
    assert replayed.messages == live.messages
    assert replayed.usage == live.usage
    assert replayed.status == live.status == "completed"
    assert replayed.run_count == live.run_count == 3
    assert replayed.directive_offset == live.directive_offset == 1
    assert replayed.always_allowed == {"write"}
    assert replayed.compactions == 1
    assert replayed.pending_calls == ()


def test_an_approved_call_that_was_running_at_the_crash_is_not_run_again() -> None:
    write = ToolCall(id="w", name="write", arguments="{}")
    events: list[ev.Event] = [
        ev.MessageAdded(at=1, message=UserMessage("go")),
        ev.MessageAdded(at=2, message=AssistantMessage(tool_calls=(write,))),
        ev.ApprovalRequested(at=3, call=write, reason="r", pending=(write,)),
        ev.ApprovalResolved(at=4, call_id="w", tool_name="write", approved=True),
        ev.ToolStarted(at=5, call=write),
    ]
    state = State.from_events(events)
    assert state.pending_calls == ()
    assert isinstance(state.messages[-1], ToolResultMessage)
    waiting = State.from_events(events[:-1])
    assert [c.id for c in waiting.pending_calls] == ["w"]
    assert waiting.approvals == {"w": True}
