"""Fork: history up to a turn, parent recorded, original untouched, tool batches refused."""

from __future__ import annotations

import attrs
import pytest
from domain_support import EchoTool, make_session

from rho_adapters.fakes import MemorySessionStore, ScriptedModel, call, text, tools
from rho_domain import events as ev
from rho_domain.errors import SessionStateError
from rho_domain.fork import history_until, turns
from rho_domain.loop.session import Session
from rho_domain.messages import AssistantMessage, Message, ToolResultMessage, UserMessage


async def _recorded(store: MemorySessionStore) -> Session:
    """Turns: 1 user, 2 assistant (2 calls), 3-4 results, 5 answer, 6 user, 7 answer."""
    session = make_session(
        [
            tools(call("echo", {"text": "a"}, id="e1"), call("echo", {"text": "b"}, id="e2")),
            text("first answer"),
            text("second answer"),
        ],
        tools=[EchoTool()],
        store=store,
    )
    await session.run("one")
    await session.run("two")
    return session


async def test_fork_at_several_turns_keeps_exactly_that_history() -> None:
    store = MemorySessionStore()
    original = await _recorded(store)
    kinds = [type(m).__name__ for m in original.state.messages]
    for at in (1, 4, 5, 6, 7):
        fork = await original.fork(at=at)
        assert [type(m).__name__ for m in fork.state.messages] == kinds[:at]
        assert fork.state.messages == original.state.messages[:at]
        stored = [e.message for e in store.events(fork.id) if isinstance(e, ev.MessageAdded)]
        assert stored == original.state.messages[:at]  # saved at once, before any run
        await fork.close()


async def test_the_fork_records_its_parent_and_the_original_is_untouched() -> None:
    store = MemorySessionStore()
    original = await _recorded(store)
    before = (list(original.state.messages), store.events(original.id))
    fork = await original.fork(at=5)
    assert fork.parent_id == original.id
    assert fork.labels == {"forked_from": original.id, "fork_at": "5"}
    (info,) = [i for i in await store.list() if i.id == fork.id]
    assert info.parent_id == original.id
    assert (list(original.state.messages), store.events(original.id)) == before
    assert fork.id != original.id


async def test_a_fork_continues_with_another_instruction_and_model() -> None:
    store = MemorySessionStore()
    original = await _recorded(store)
    other = ScriptedModel([text("a different second answer")])
    fork = await original.fork(at=5)
    fork.model = other
    result = await fork.run("two, differently")
    assert result.text == "a different second answer"
    sent = other.requests[0].messages
    assert [type(m).__name__ for m in sent[:5]] == [
        type(m).__name__ for m in original.state.messages[:5]
    ]
    assert isinstance(sent[-1], UserMessage)
    assert sent[-1].content == "two, differently"
    assert original.state.messages[-1] == AssistantMessage(text="second answer")


async def test_a_fork_with_another_agent() -> None:
    store = MemorySessionStore()
    original = await _recorded(store)
    agent = attrs.evolve(original.agent, system_prompt="You are a careful reviewer.")
    fork = await original.fork(at=1, agent=agent)
    assert fork.agent.system_prompt == "You are a careful reviewer."


@pytest.mark.parametrize(
    ("at", "message"),
    [
        (2, "fork at 2: turn 2 is inside a tool batch (the results of turn 2's tool calls end "
            "at turn 4); fork at 1 (before the batch) or at 4 (after its last result)"),
        (3, "fork at 3: turn 3 is inside a tool batch"),
        (0, "fork at 0: the history has turns 1 to 7"),
        (8, "fork at 8: the history has turns 1 to 7"),
    ],
)  # fmt: skip
async def test_a_turn_inside_a_tool_batch_or_outside_the_history_is_refused(
    at: int, message: str
) -> None:
    store = MemorySessionStore()
    original = await _recorded(store)
    count = len(await store.list())
    with pytest.raises(SessionStateError) as caught:
        await original.fork(at=at)
    assert message in str(caught.value)
    assert len(await store.list()) == count  # nothing was created


def test_a_batch_whose_calls_lack_results_is_refused_at_its_end() -> None:
    batch = AssistantMessage(tool_calls=(call("echo", id="x1"), call("echo", id="x2")))
    first = ToolResultMessage(call_id="x1", tool_name="echo", content="ok")
    history: list[Message] = [UserMessage("go"), batch, first]
    refused = r"do not all have results\); fork at 1 \(before the batch\)$"
    with pytest.raises(SessionStateError, match=refused):
        history_until(history, 3)
    with pytest.raises(SessionStateError, match="fork at 1"):
        history_until(history, 2)
    assert history_until(history, 1) == (UserMessage("go"),)
    with pytest.raises(SessionStateError, match="no history"):
        history_until([], 1)


def test_turns_are_listed_as_fork_counts_them() -> None:
    batch = AssistantMessage(text="Let me look.", tool_calls=(call("echo", id="x1"),))
    history: list[Message] = [
        UserMessage("go"),
        batch,
        ToolResultMessage(call_id="x1", tool_name="echo", content="out"),
        AssistantMessage(text="done"),
    ]
    assert turns(history) == [
        "   1  user: go",
        "   2  assistant: Let me look. → echo",
        "   3    echo: out",
        "   4  assistant: done",
    ]
