"""The digest an approval is bound to (``rho_domain.call_digest``), and ``resolve_approval``
refusing an answer whose digest is not that of the call the session holds."""

from __future__ import annotations

import json

import attrs
import pytest
from domain_support import EchoTool, WriteNoteTool, make_session

from rho_adapters.fakes import MemoryExecutor, MemorySessionStore, ScriptedModel, text, tools
from rho_adapters.fakes import call as fake_call
from rho_domain.call_digest import DIGEST_LENGTH, call_digest, check, tool_digest
from rho_domain.errors import CallChanged, SessionStateError
from rho_domain.run import RunStatus

ARGS = json.dumps({"path": "a.txt", "content": "x"})


def test_a_digest_is_of_the_tool_and_the_arguments_as_they_run() -> None:
    digest = call_digest("write", ARGS)
    assert len(digest) == DIGEST_LENGTH
    assert int(digest, 16) >= 0  # hex
    # two spellings of the same arguments agree: key order, spaces, escapes
    assert call_digest("write", '{"content":"x",  "path":"a.txt"}') == digest
    assert call_digest("write", '{"path": "\\u0061.txt", "content": "x"}') == digest
    # any change of the tool, a value, a key or a type does not
    assert call_digest("edit", ARGS) != digest
    assert call_digest("write", json.dumps({"path": "b.txt", "content": "x"})) != digest
    assert call_digest("write", json.dumps({"path": "a.txt", "text": "x"})) != digest
    assert call_digest("write", json.dumps({"path": "a.txt", "content": ["x"]})) != digest
    assert call_digest("write", json.dumps({"path": "a.txt", "content": 1})) != call_digest(
        "write", json.dumps({"path": "a.txt", "content": "1"})
    )
    # the same name and raw text split differently between tool and arguments
    assert call_digest("a", '"b"') != call_digest("a", "b")


def test_a_tools_schema_is_digested_by_the_values_json_schema_reads() -> None:
    def shape(schema: str) -> str:  # as a server's tools/list is read (json.loads)
        return tool_digest("mcp__s__t", "d", json.loads(schema))

    one = shape('{"minimum": 1, "default": 0, "maximum": 1e22, "d": "\\u00e9"}')
    # the same numbers written otherwise (1.0, 1e0, -0, -0.0, 1e22 in full), a string's
    # escapes written raw, a key given twice (json keeps the last, as the model is shown)
    for same in (
        '{"minimum": 1.0, "default": -0.0, "maximum": 10000000000000000000000, "d": "\u00e9"}',
        '{"minimum": 1e0, "default": -0, "maximum": 1E+22, "d": "\\u00E9"}',
        '{"minimum": 2, "minimum": 1, "default": 0.0, "maximum": 1e22, "d": "\\u00e9"}',
    ):
        assert shape(same) == one, same
    # another value, another digest: a fraction, the next integer past a float's reach,
    # true for 1, a string for a number, NaN (each NaN digests alike)
    for other in (
        '{"minimum": 1.5, "default": 0, "maximum": 1e22, "d": "\\u00e9"}',
        '{"minimum": 1, "default": 0, "maximum": 10000000000000000000001, "d": "\\u00e9"}',
        '{"minimum": true, "default": 0, "maximum": 1e22, "d": "\\u00e9"}',
        '{"minimum": "1", "default": 0, "maximum": 1e22, "d": "\\u00e9"}',
        '{"minimum": NaN, "default": 0, "maximum": 1e22, "d": "\\u00e9"}',
    ):
        assert shape(other) != one, other
    assert shape('{"m": NaN}') == shape('{"m": NaN}') != shape('{"m": Infinity}')
    assert shape('{"m": 9007199254740993}') != shape('{"m": 9007199254740992}')


def test_arguments_that_are_not_json_are_digested_as_their_text() -> None:
    assert call_digest("bash", "{not json") != call_digest("bash", "{not json ")
    deep = "[" * 100_000 + "]" * 100_000  # past the parser's nesting: the text, no error
    assert len(call_digest("bash", deep)) == DIGEST_LENGTH
    assert call_digest("bash", deep) != call_digest("bash", deep[1:-1])


def test_check_refuses_another_call_and_says_what_waits_now() -> None:
    check("c1", "write", ARGS, call_digest("write", ARGS).upper())  # hex in either case
    with pytest.raises(CallChanged) as refused:
        check("c1", "write", ARGS, call_digest("write", '{"path": "b.txt"}'))
    message = str(refused.value)
    assert "tool call 'c1' changed since it was shown" in message
    assert f"it is now write {ARGS} (digest {call_digest('write', ARGS)})" in message
    assert isinstance(refused.value, SessionStateError)
    # a call cut short in the message is not offered for an answer: its digest is not given
    long = json.dumps({"path": "a.txt", "content": "x" * 500})
    with pytest.raises(CallChanged) as cut:
        check("c1", "write", long, call_digest("write", ARGS))
    assert call_digest("write", long) not in str(cut.value)
    assert "read it in full" in str(cut.value)


async def test_resolve_approval_with_another_calls_digest_answers_nothing() -> None:
    write = fake_call("write", {"path": "a.txt", "content": "x"})
    executor = MemoryExecutor()
    session = make_session(
        [tools(write), text("done")],
        tools=[EchoTool(), WriteNoteTool()],
        profile="developer",
        executor=executor,
    )
    result = await session.run("go")
    assert result.status is RunStatus.AWAITING_APPROVAL
    shown = call_digest("write", json.dumps({"path": "b.txt", "content": "x"}))
    with pytest.raises(CallChanged):
        session.resolve_approval(write.id, True, digest=shown)
    assert [c.id for c in session.state.awaiting_decision()] == [write.id]  # still waits
    assert (await session.run()).status is RunStatus.AWAITING_APPROVAL
    assert executor.files == {}

    held = call_digest(write.name, write.arguments, place=executor.working_dir)
    session.resolve_approval(write.id, True, digest=held)
    assert (await session.run()).status is RunStatus.COMPLETED
    assert executor.files != {}


async def test_the_answer_records_the_digest_it_carried() -> None:
    """``approval_resolved`` says which call the answerer was shown (its ``digest``, None for
    an in-process answer that carried none); a line without the field (an older trace)
    reads as None, and a reader that knows no such field (an older rho-agent) skips it."""
    from rho_adapters.codec import decode_event_line, encode_event_line, event_from_dict
    from rho_domain import events as ev

    write = fake_call("write", {"path": "a.txt", "content": "x"})
    store = MemorySessionStore()
    session = make_session(
        [tools(write), text("done")],
        tools=[EchoTool(), WriteNoteTool()],
        profile="developer",
        store=store,
    )
    assert (await session.run("go")).status is RunStatus.AWAITING_APPROVAL
    shown = call_digest(write.name, write.arguments, place=session.executor.working_dir)
    session.resolve_approval(write.id, True, digest=shown)
    assert (await session.run()).status is RunStatus.COMPLETED
    stored = store.events(session.id)
    answers = [e for e in stored if isinstance(e, ev.ApprovalResolved)]
    assert [a.digest for a in answers] == [shown]
    line = encode_event_line(answers[0])
    assert json.loads(line)["digest"] == shown
    assert decode_event_line(line) == answers[0]
    older = {k: v for k, v in json.loads(line).items() if k != "digest"}
    assert event_from_dict(older) == attrs.evolve(answers[0], digest=None)
    newer = {**json.loads(line), "answered_by": "someone"}  # a field this reader lacks
    assert event_from_dict(newer) == answers[0]


async def test_an_answer_for_the_call_in_another_directory_does_not_hold() -> None:
    """The session runs calls where its executor is now: reopened in another working
    directory (its stored config changed), an answer for the call asked about in the first
    is refused with a digest (naming both), and one recorded without (in-process) does not
    hold there: the call is asked again, nothing runs."""
    from rho_domain.loop.session import Session
    from rho_domain.state import State

    write = fake_call("write", {"path": "a.txt", "content": "x"})
    store = MemorySessionStore()
    first = make_session(
        [tools(write)], tools=[EchoTool(), WriteNoteTool()], profile="developer", store=store
    )
    assert (await first.run("go")).status is RunStatus.AWAITING_APPROVAL
    shown = first.state.approval_digest(write)
    assert shown == call_digest(write.name, write.arguments, place="/workspace")
    await first.close()
    record, events = await store.open(first.id)
    moved = MemoryExecutor(root="/workspace/sub")
    session = Session(
        first.agent,
        model=ScriptedModel([text("done")]),
        executor=moved,
        clock=first.clock,
        store=store,
        session_id=record.id,
        state=State.from_events(events),
        created=True,
    )
    elsewhere = "asked about to run in /workspace, but the session now runs it in /workspace/sub"
    with pytest.raises(CallChanged, match=elsewhere):
        session.resolve_approval(write.id, True, digest=shown)
    session.resolve_approval(write.id, True)  # in-process: recorded, for /workspace
    assert (await session.run()).status is RunStatus.AWAITING_APPROVAL  # asked again
    assert moved.files == {}
    assert session.state.asked_places[write.id] == "/workspace/sub"
    held = call_digest(write.name, write.arguments, place="/workspace/sub")
    assert session.state.approval_digest(write) == held
