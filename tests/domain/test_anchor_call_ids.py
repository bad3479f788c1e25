"""Anchor items 10 and 15, re-tried with a server that repeats a tool call's id.

Results, approvals and the trace's readers (``rho-agent stats``) pair a tool call with its
result by id. Some servers take the ids from the model's own output (a Kimi-style
``functions.NAME:N``) or number them per answer, so an id may repeat, in one answer or in a
later one. A repeated id made approvals of a batch run the wrong call ("a hook changed this
call") and ``stats`` count two calls as one. The loop now gives a call whose id this session
already used ``ID_2`` (``_3``...), before the call is recorded, so every pairing holds.
"""

from __future__ import annotations

from domain_support import WriteNoteTool, make_session

from rho_adapters.fakes import MemoryExecutor, MemorySessionStore, ScriptedModel, call, text, tools
from rho_domain.loop.session import Session
from rho_domain.messages import AssistantMessage, ToolResultMessage
from rho_domain.run import RunStatus
from rho_domain.state import State


def _pairs(session: Session) -> list[tuple[str, str]]:
    """(call id, result) in history order; every call's id once."""
    assistants = [m for m in session.state.messages if isinstance(m, AssistantMessage)]
    calls = [c for m in assistants for c in m.tool_calls]
    ids = [c.id for c in calls]
    assert len(ids) == len(set(ids)), ids
    results = {
        m.call_id: m.content for m in session.state.messages if isinstance(m, ToolResultMessage)
    }
    return [(c.id, results[c.id]) for c in calls]


async def test_a_repeated_id_in_one_answer_and_in_a_later_one_is_made_distinct() -> None:
    session = make_session(
        [
            tools(call("echo", {"text": "a"}, id="c1"), call("echo", {"text": "b"}, id="c1")),
            tools(call("echo", {"text": "c"}, id="c1")),
            text("done"),
        ]
    )
    result = await session.run("go")
    assert result.status is RunStatus.COMPLETED
    assert _pairs(session) == [("c1", "a"), ("c1_2", "b"), ("c1_3", "c")]


async def test_approvals_of_a_batch_with_a_repeated_id_run_each_call_once() -> None:
    executor = MemoryExecutor()
    session = make_session(
        [
            tools(
                call("write", {"path": "a.txt", "content": "A"}, id="w"),
                call("write", {"path": "b.txt", "content": "B"}, id="w"),
            ),
            text("written"),
        ],
        tools=[WriteNoteTool()],
        profile="developer",
        executor=executor,
    )
    result, asked = await session.run("go"), []
    while result.status is RunStatus.AWAITING_APPROVAL:  # one call at a time
        for pending in result.pending:
            asked.append(pending.call.id)
            session.resolve_approval(pending.call.id, True)
        result = await session.run()
    assert result.status is RunStatus.COMPLETED, result.error
    assert asked == ["w", "w_2"]
    assert executor.files == {"a.txt": b"A", "b.txt": b"B"}
    assert [p[0] for p in _pairs(session)] == ["w", "w_2"]


async def test_ids_used_before_a_restart_stay_taken() -> None:
    store = MemorySessionStore()
    first = make_session([tools(call("echo", {"text": "a"}, id="c1")), text("one")], store=store)
    await first.run("go")
    await first.close()
    record, events = await store.open(first.id)
    second = Session(
        first.agent,
        model=ScriptedModel([tools(call("echo", {"text": "b"}, id="c1")), text("two")]),
        executor=MemoryExecutor(),
        clock=first.clock,
        store=store,
        session_id=record.id,
        state=State.from_events(events),
        created=True,
    )
    assert (await second.run("again")).status is RunStatus.COMPLETED
    assert _pairs(second) == [("c1", "a"), ("c1_2", "b")]


async def test_distinct_ids_are_kept_as_the_server_sent_them() -> None:
    calls = (call("echo", {"text": "a"}, id="x"), call("echo", {"text": "b"}, id="y"))
    session = make_session([tools(*calls), text("done")])
    await session.run("go")
    assert _pairs(session) == [("x", "a"), ("y", "b")]
