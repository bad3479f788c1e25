"""Approvals across the family: a sub-agent's waiting call is its parent's pending approval,
a rejection reaches the parent as a rejection, and a sub-agent spends its parent's budget."""

from __future__ import annotations

from typing import Any

import pytest
from domain_support import WriteNoteTool, make_session

from rho_adapters.fakes import (
    MemoryExecutor,
    MemorySessionStore,
    ScriptedApprover,
    ScriptedModel,
    call,
    text,
    tools,
)
from rho_domain import events as ev
from rho_domain.config import Budget
from rho_domain.loop.session import Session
from rho_domain.messages import ToolResultMessage
from rho_domain.run import RunStatus
from rho_domain.state import State
from rho_domain.tools.delegate import DelegateTool

WRITE = {"path": "notes.txt", "content": "from the child"}


def _script(*after: Any) -> list[Any]:
    """Parent delegates; the child asks to write (needs approval under developer)."""
    return [
        tools(call("delegate", {"instruction": "write the note"}, id="d1")),
        tools(call("write", WRITE, id="w1")),
        *after,
    ]


def _parent(turns: list[Any], **kwargs: Any) -> Session:
    return make_session(
        turns, tools=[WriteNoteTool(), DelegateTool()], profile="developer", **kwargs
    )


def _results(session: Session) -> dict[str, str]:
    return {
        m.call_id: m.content for m in session.state.messages if isinstance(m, ToolResultMessage)
    }


@pytest.mark.parametrize("stored", [True, False])
async def test_a_childs_waiting_call_is_the_parents_and_approving_it_completes_both(
    stored: bool,
) -> None:
    store = MemorySessionStore() if stored else None
    executor = MemoryExecutor()
    parent = _parent(
        _script(text("child: written"), text("parent: done")), store=store, executor=executor
    )
    first = await parent.run("delegate a note")
    assert first.status is RunStatus.AWAITING_APPROVAL
    (pending,) = first.pending
    assert pending.call.id == "d1"
    assert pending.reason.startswith("the sub-agent ")
    assert 'asks to run write {"path": "notes.txt"' in pending.reason
    assert "notes.txt" not in executor.files
    assert _results(parent) == {}  # the delegate call is not answered: it waits
    parent.resolve_approval("d1", True)
    second = await parent.run()
    assert second.status is RunStatus.COMPLETED
    assert second.text == "parent: done"
    assert executor.files["notes.txt"] == b"from the child"
    assert _results(parent) == {"d1": "child: written"}
    if store is not None:
        (child,) = [i for i in await store.list() if i.parent_id == parent.id]
        assert child.status == "completed"


async def test_a_rejection_reaches_the_parent_as_a_rejection_with_its_reason() -> None:
    store = MemorySessionStore()
    parent = _parent(_script(text("parent: understood")), store=store)
    await parent.run("delegate a note")
    parent.resolve_approval("d1", False, reason="not that file")
    result = await parent.run()
    assert result.status is RunStatus.COMPLETED
    content = _results(parent)["d1"]
    assert content.startswith('The user rejected the sub-agent\'s call write {"path"')
    assert "(not that file)" in content
    assert "gave no answer" not in content


async def test_a_live_rejection_in_the_child_reaches_the_parent_too() -> None:
    parent = _parent(_script(text("parent: understood")), approver=ScriptedApprover([False]))
    result = await parent.run("delegate a note")
    assert result.status is RunStatus.COMPLETED
    assert "The user rejected the sub-agent's call write" in _results(parent)["d1"]


async def test_another_session_object_answers_from_the_store_as_another_process_would() -> None:
    store = MemorySessionStore()
    executor = MemoryExecutor()
    first = _parent(_script(), store=store, executor=executor)
    assert (await first.run("delegate a note")).status is RunStatus.AWAITING_APPROVAL
    await first.close()
    record, events = await store.open(first.id)
    second = Session(
        first.agent,
        model=ScriptedModel([text("child: written"), text("parent: done")]),
        executor=executor,
        clock=first.clock,
        store=store,
        session_id=record.id,
        state=State.from_events(events),
        created=True,
    )
    assert [c.id for c in second.state.awaiting_decision()] == ["d1"]
    second.resolve_approval("d1", True)
    result = await second.run()
    assert (result.status, result.text) == (RunStatus.COMPLETED, "parent: done")
    assert executor.files["notes.txt"] == b"from the child"
    kinds = [type(e).__name__ for e in store.events(first.id)]
    assert kinds.count("ApprovalRequested") == 1
    assert kinds.count("ToolEnded") == 1


async def test_a_child_that_asks_twice_surfaces_twice() -> None:
    store = MemorySessionStore()
    parent = _parent(
        _script(
            tools(call("write", {"path": "b.txt", "content": "b"}, id="w2")),
            text("child: both"),
            text("parent: done"),
        ),
        store=store,
    )
    await parent.run("go")
    parent.resolve_approval("d1", True)
    again = await parent.run()
    assert again.status is RunStatus.AWAITING_APPROVAL
    assert '"path": "b.txt"' in again.pending[0].reason
    parent.resolve_approval("d1", True)
    assert (await parent.run()).text == "parent: done"


async def test_a_childs_usage_counts_against_the_parents_budget() -> None:
    parent = make_session(
        [
            tools(call("delegate", {"instruction": "think hard"}), input_tokens=10),
            text("child: a long answer", input_tokens=150, output_tokens=20),
            text("parent: never asked"),
        ],
        tools=[DelegateTool()],
        budget=Budget(max_total_tokens=100),
    )
    result = await parent.run("go")
    assert result.status is RunStatus.BUDGET_EXCEEDED
    assert len(parent.model.requests) == 2  # type: ignore[attr-defined]
    errors = [e for e in parent.journal.state.messages if isinstance(e, ToolResultMessage)]
    assert errors[0].content == "child: a long answer"


async def test_a_child_gets_only_what_is_left_of_the_budget() -> None:
    seen: list[ev.Event] = []
    parent = make_session(
        [
            tools(call("delegate", {"instruction": "loop"}), input_tokens=60),
            tools(call("delegate", {"instruction": "x"}), input_tokens=50),  # the child's
            text("never"),
        ],
        tools=[DelegateTool()],
        budget=Budget(max_total_tokens=100),
    )
    parent.journal.listeners.append(seen.append)
    result = await parent.run("go")
    child_end = _results(parent)
    assert "budget_exceeded" in next(iter(child_end.values()))
    assert result.status is RunStatus.BUDGET_EXCEEDED
