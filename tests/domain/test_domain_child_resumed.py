"""A sub-agent resumed on its own (issue 29, item 6): it has no ``delegate`` tool whoever
continues it (delegation is one level deep), and when its waiting call is answered there, the
parent, continued later, gets the child's answer instead of "could not continue"."""

from __future__ import annotations

from typing import Any

from domain_support import WriteNoteTool, make_session

from rho_adapters.fakes import MemoryExecutor, MemorySessionStore, ScriptedModel, call, text, tools
from rho_domain import events as ev
from rho_domain.loop.session import Session
from rho_domain.messages import ToolResultMessage
from rho_domain.run import RunStatus
from rho_domain.state import State
from rho_domain.tools.delegate import DelegateTool

WRITE = {"path": "notes.txt", "content": "from the child"}


async def _waiting_family(turns: list[Any]) -> tuple[Session, MemorySessionStore, str]:
    """A parent whose child waits for approval of a write; both stored."""
    store = MemorySessionStore()
    parent = make_session(
        [tools(call("delegate", {"instruction": "write the note"}, id="d1")),
         tools(call("write", WRITE, id="w1")), *turns],
        tools=[WriteNoteTool(), DelegateTool()],
        profile="developer",
        store=store,
        executor=MemoryExecutor(),
    )  # fmt: skip
    assert (await parent.run("delegate a note")).status is RunStatus.AWAITING_APPROVAL
    await parent.close()
    (child,) = [i for i in await store.list() if i.parent_id == parent.id]
    return parent, store, child.id


async def _reopen(
    parent: Session, store: MemorySessionStore, sid: str, turns: list[Any]
) -> Session:
    """The session ``sid`` opened from the store as ``--resume`` would: with the full agent
    (its config's tools, ``delegate`` included), its stored parent id and labels."""
    record, events = await store.open(sid)
    return Session(
        parent.agent,
        model=ScriptedModel(turns),
        executor=parent.executor,
        clock=parent.clock,
        store=store,
        session_id=record.id,
        state=State.from_events(events),
        created=True,
        parent_id=record.parent_id,
        labels=record.labels,
    )


def _results(session: Session) -> dict[str, str]:
    return {
        m.call_id: m.content for m in session.state.messages if isinstance(m, ToolResultMessage)
    }


async def test_a_child_resumed_directly_has_no_delegate_and_the_parent_gets_its_answer() -> None:
    parent, store, child_id = await _waiting_family([])
    child = await _reopen(parent, store, child_id, [text("child: written")])
    assert "delegate" not in child.agent.registry
    assert child.tools.delegate is None
    child.resolve_approval("w1", True)
    done = await child.run()
    await child.close()
    assert (done.status, done.text) == (RunStatus.COMPLETED, "child: written")
    sent = [spec.name for spec in child.model.requests[0].tools]  # type: ignore[attr-defined]
    assert "delegate" not in sent
    assert "write" in sent

    again = await _reopen(parent, store, parent.id, [text("parent: done")])
    assert "delegate" in again.agent.registry  # the parent keeps its own
    again.resolve_approval("d1", True)
    result = await again.run()
    assert (result.status, result.text) == (RunStatus.COMPLETED, "parent: done")
    assert _results(again)["d1"] == "child: written"
    assert parent.executor.files["notes.txt"] == b"from the child"  # type: ignore[attr-defined]


async def test_a_rejection_given_in_the_child_reaches_the_parent_as_a_rejection() -> None:
    parent, store, child_id = await _waiting_family([])
    child = await _reopen(parent, store, child_id, [])
    child.resolve_approval("w1", False, reason="not that file")
    await child.run()
    await child.close()
    again = await _reopen(parent, store, parent.id, [text("parent: understood")])
    again.resolve_approval("d1", True)
    assert (await again.run()).status is RunStatus.COMPLETED
    assert _results(again)["d1"].startswith('The user rejected the sub-agent\'s call write {"path"')


async def test_a_child_that_asks_again_after_its_own_resume_surfaces_on_the_parent() -> None:
    parent, store, child_id = await _waiting_family([])
    second = {"path": "more.txt", "content": "more"}
    child = await _reopen(parent, store, child_id, [tools(call("write", second, id="w2"))])
    child.resolve_approval("w1", True)
    assert (await child.run()).status is RunStatus.AWAITING_APPROVAL
    await child.close()
    again = await _reopen(parent, store, parent.id, [text("child: both"), text("parent: ok")])
    again.resolve_approval("d1", True)
    result = await again.run()
    assert result.status is RunStatus.AWAITING_APPROVAL  # now for the child's second call
    (pending,) = result.pending
    assert pending.call.id == "d1"
    assert "asks to run write" in pending.reason
    assert "more.txt" in pending.reason


async def test_a_child_opened_from_the_store_takes_no_always_its_trace_records() -> None:
    # a resumed parent forgets the approvals its trace records (a session directory is
    # data), but the child it opened from the store replayed its own: an "always" for write
    # written into the child's trace let the child's next write run unasked
    parent, store, child_id = await _waiting_family([])
    forged = ev.ApprovalResolved(at=0.0, call_id="x", approved=True, always=True, tool_name="write")
    await store.append(child_id, [forged])
    await store.release(child_id)
    second = {"path": "more.txt", "content": "more"}
    turns = [tools(call("write", second, id="w2")), text("child: both"), text("parent: ok")]
    again = await _reopen(parent, store, parent.id, turns)
    again.resolve_approval("d1", True)
    result = await again.run()
    assert result.status is RunStatus.AWAITING_APPROVAL  # the child's second write asks
    assert "more.txt" in result.pending[0].reason
    assert "more.txt" not in parent.executor.files  # type: ignore[attr-defined]
