"""Tool call ids made distinct where the assistant message enters history
(``model_turn.distinct_call_ids``): an empty id (an Anthropic-shaped ``tool_use`` without one is
kept as "") and ids repeated within the message or from earlier turns get fresh ones, so each
result pairs with its own call in the state and in the next request."""

from __future__ import annotations

from rho_adapters.fakes import FakeClock, MemoryExecutor, ScriptedModel, text, tools
from rho_domain.messages import AssistantMessage, ToolCall, ToolResultMessage
from rho_entry import Agent, AgentConfig, Session


def _calls(*ids: str) -> tuple[ToolCall, ...]:
    return tuple(ToolCall(id=i, name="list", arguments='{"path": "."}') for i in ids)


async def _ran(model: ScriptedModel) -> tuple[list[str], list[str]]:
    """The call ids the history kept for ``model``'s calls, and the ids their results answer."""
    session = Session(Agent(AgentConfig()), model=model, executor=MemoryExecutor({"a": ""}),
                      clock=FakeClock())  # fmt: skip
    async with session:
        assert (await session.run("go")).text == "done"
    messages = session.state.messages
    ids = [c.id for m in messages if isinstance(m, AssistantMessage) for c in m.tool_calls]
    return ids, [m.call_id for m in messages if isinstance(m, ToolResultMessage)]


async def test_empty_and_repeated_ids_become_distinct_and_each_is_answered() -> None:
    model = ScriptedModel([
        tools(*_calls("", "")),
        tools(*_calls("call_1", "x", "x")),  # call_1: now taken by the first turn's first call
        text("done"),
    ])  # fmt: skip
    ids, answered = await _ran(model)
    assert ids == ["call_1", "call_2", "call_1_2", "x", "x_2"]
    assert answered == ids
    last = model.requests[-1].messages
    assert [m.call_id for m in last if isinstance(m, ToolResultMessage)] == ids


async def test_dot_segment_ids_become_addressable_ones() -> None:
    """A call id ``.`` or ``..`` (an id the model wrote, as some OpenAI-compatible servers
    pass it) was kept: the dashboard's approval URL ``.../approvals/..`` (``%2E%2E`` too) is
    resolved by the browser to another route, so that call could not be answered there."""
    ids, answered = await _ran(ScriptedModel([tools(*_calls(".", "..", ".x")), text("done")]))
    assert ids == ["call_1", "call_2", ".x"]
    assert answered == ids
