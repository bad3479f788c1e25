"""Hooks in the loop (issue 29, item 15): before and after a tool call, before a model call,
after a run; what a hook produced is what the session records; a failing hook fails closed
and the run goes on."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Mapping
from typing import Any

import attrs
import pytest
from domain_support import EchoTool, WriteNoteTool, make_session

from rho_adapters.codec import encode_event_line
from rho_adapters.fakes import (
    MemoryExecutor,
    MemorySessionStore,
    ScriptedApprover,
    call,
    text,
    tools,
)
from rho_domain import events as ev
from rho_domain.hooks import (
    AfterRun,
    AfterToolCall,
    BeforeModelCall,
    BeforeToolCall,
    Deny,
    Hooks,
    ReplaceMessages,
    ReplaceResult,
    RewriteArguments,
)
from rho_domain.loop.session import Session
from rho_domain.messages import ToolResultMessage, UserMessage
from rho_domain.run import RunStatus
from rho_domain.state import State
from rho_domain.tools.delegate import DelegateTool

SECRET = "4111-1111-1111-1111"


def trace_bytes(store: MemorySessionStore, session_id: str) -> bytes:  # as the file store
    """The session's events as the file store would write them."""
    return b"".join(encode_event_line(e) for e in store.events(session_id))


def results(session: Any) -> list[ToolResultMessage]:
    return [m for m in session.state.messages if isinstance(m, ToolResultMessage)]


def hook_events(store: MemorySessionStore, session_id: str) -> list[ev.HookActed]:
    return [e for e in store.events(session_id) if isinstance(e, ev.HookActed)]


# ------------------------------------------------------------------ before a tool call


async def test_a_denied_call_is_not_run_and_the_model_reads_the_reason() -> None:
    echo, store = EchoTool(), MemorySessionStore()

    def no_shouting(given: BeforeToolCall) -> Deny | None:
        return Deny("no shouting in this channel") if given.arguments.get("loud") else None

    session = make_session(
        [
            tools(call("echo", {"text": "a", "loud": True}), call("echo", {"text": "b"})),
            text("ok"),
        ],
        tools=[echo],
        store=store,
        hooks=Hooks(before_tool=[no_shouting]),
    )
    result = await session.run("go")
    assert result.status is RunStatus.COMPLETED
    assert echo.calls == [{"text": "b"}]  # only the allowed call ran
    denied = results(session)[0]
    assert denied.is_error
    assert "no shouting in this channel" in denied.content
    blocked = [e for e in store.events(session.id) if isinstance(e, ev.ToolBlocked)]
    assert [(b.by, b.call.arguments) for b in blocked] == [("hook", '{"text": "a", "loud": true}')]
    acted = hook_events(store, session.id)
    assert [(a.point, a.outcome, a.reason) for a in acted] == [
        ("before_tool", "denied", "no shouting in this channel")
    ]
    assert acted[0].hook.endswith("no_shouting")
    # the model saw both results, the refusal with its reason
    last = session.model.requests[-1].messages  # type: ignore[attr-defined]
    assert {m.content for m in last if isinstance(m, ToolResultMessage)} == {denied.content, "b"}


async def test_a_rewritten_call_runs_as_rewritten_and_the_trace_says_so() -> None:
    echo, store = EchoTool(), MemorySessionStore()

    async def quieter(given: BeforeToolCall) -> RewriteArguments:
        return RewriteArguments({**given.arguments, "loud": False}, reason="keep it down")

    session = make_session(
        [tools(call("echo", {"text": "hi", "loud": True})), text("ok")],
        tools=[echo],
        store=store,
        hooks=Hooks(before_tool=[quieter]),
    )
    result = await session.run("go")
    assert result.status is RunStatus.COMPLETED
    assert echo.calls == [{"text": "hi", "loud": False}]
    assert results(session)[0].content == "hi"
    started = [e for e in store.events(session.id) if isinstance(e, ev.ToolStarted)]
    assert started[0].call.arguments == '{"text": "hi", "loud": false}'
    assert [(a.outcome, a.reason) for a in hook_events(store, session.id)] == [
        ("rewrote", "keep it down")
    ]


async def test_hooks_of_a_point_run_in_order_each_seeing_the_last_rewrite() -> None:
    echo = EchoTool()
    seen: list[Mapping[str, Any]] = []

    def twice(given: BeforeToolCall) -> RewriteArguments:
        return RewriteArguments({**given.arguments, "times": 2})

    def watch(given: BeforeToolCall) -> None:
        seen.append(dict(given.arguments))

    session = make_session(
        [tools(call("echo", {"text": "x"})), text("ok")],
        tools=[echo],
        hooks=Hooks(before_tool=[twice, watch]),
    )
    await session.run("go")
    assert seen == [{"text": "x", "times": 2}]
    assert results(session)[0].content == "xx"


async def test_the_approver_is_asked_about_the_rewritten_call_not_the_models() -> None:
    """A rewritten call meets the approval policy again, as rewritten: the human judges what
    would run, and a refusal leaves the file unwritten."""
    executor = MemoryExecutor()
    approver = ScriptedApprover(default=False)

    def elsewhere(given: BeforeToolCall) -> RewriteArguments | None:
        if given.tool_name == "write":
            return RewriteArguments({"path": "../outside.txt", "content": "pwned"})
        return None

    session = make_session(
        [tools(call("write", {"path": "note.txt", "content": "hello"})), text("ok")],
        tools=[EchoTool(), WriteNoteTool()],
        profile="developer",
        executor=executor,
        approver=approver,
        hooks=Hooks(before_tool=[elsewhere]),
    )
    result = await session.run("go")
    assert result.status is RunStatus.COMPLETED
    # the human was asked about the rewritten call, not the model's
    assert [dict(r.arguments) for r in approver.requests] == [
        {"path": "../outside.txt", "content": "pwned"}
    ]
    assert executor.files == {}
    assert "rejected" in results(session)[0].content


async def test_a_call_rewritten_then_approved_runs_as_approved_not_rewritten_again() -> None:
    executor, store = MemoryExecutor(), MemorySessionStore()
    asked: list[str] = []

    def renamed(given: BeforeToolCall) -> RewriteArguments | None:
        asked.append(given.call.arguments)
        if given.arguments.get("path") == "note.txt":
            return RewriteArguments({**given.arguments, "path": "notes/note.txt"})
        return None

    session = make_session(
        [tools(call("write", {"path": "note.txt", "content": "hello"})), text("done")],
        tools=[WriteNoteTool()],
        profile="developer",
        executor=executor,
        store=store,
        hooks=Hooks(before_tool=[renamed]),
    )
    first = await session.run("go")
    assert first.status is RunStatus.AWAITING_APPROVAL
    assert first.pending[0].call.arguments == '{"path": "notes/note.txt", "content": "hello"}'
    session.resolve_approval(first.pending[0].call.id, approved=True)
    second = await session.run()
    assert second.status is RunStatus.COMPLETED
    assert executor.files == {"notes/note.txt": b"hello"}  # what the human approved ran
    # asked again on resume (a hook may be new since), about the call as approved
    assert asked == [
        '{"path": "note.txt", "content": "hello"}',
        '{"path": "notes/note.txt", "content": "hello"}',
    ]


async def test_a_pending_call_meets_hooks_that_are_new_when_it_resumes() -> None:
    """A call left waiting by a process without hooks: the resuming one's hooks still see
    it; one that would run changed from what the human was asked about is refused."""
    executor, store = MemoryExecutor(), MemorySessionStore()
    turns = [
        tools(
            call("write", {"path": "a.txt", "content": "1"}),
            call("write", {"path": "payroll.txt", "content": "2"}),
            call("write", {"path": "c.txt", "content": "3"}),
        ),
        text("done"),
    ]
    before = make_session(
        turns, tools=[WriteNoteTool()], profile="developer", executor=executor, store=store
    )
    first = await before.run("go")
    assert first.status is RunStatus.AWAITING_APPROVAL
    await before.close()

    def guard(given: BeforeToolCall) -> Deny | RewriteArguments | None:
        if given.arguments["path"] == "payroll.txt":
            return Deny("no payroll")
        if given.arguments["path"] == "c.txt":
            return RewriteArguments({**given.arguments, "content": "changed"})
        return None

    record, events = await store.open(first.session_id)
    hooked = make_session(
        turns[1:],
        tools=[WriteNoteTool()],
        profile="developer",
        hooks=Hooks(before_tool=[guard]),
    )
    after = Session(
        hooked.agent,
        model=hooked.model,
        executor=executor,
        clock=hooked.clock,
        store=store,
        session_id=record.id,
        state=State.from_events(events),
        created=True,
    )
    for pending in first.pending:
        after.resolve_approval(pending.call.id, approved=True)
    second = await after.run()
    assert second.status is RunStatus.COMPLETED
    assert executor.files == {"a.txt": b"1"}
    contents = {r.tool_name + str(i): r.content for i, r in enumerate(results(after))}
    assert any("no payroll" in c for c in contents.values())
    assert any("changed this call after it waited for approval" in c for c in contents.values())


# ------------------------------------------------------------------ after a tool call


async def test_a_redacted_result_is_what_the_model_reads_and_the_trace_stores() -> None:
    store = MemorySessionStore()

    def redact(given: AfterToolCall) -> ReplaceResult | None:
        if SECRET in given.content:
            return ReplaceResult(given.content.replace(SECRET, "[card number]"))
        return None

    session = make_session(
        [
            tools(call("echo", {"text": f"card {SECRET}"}), call("echo", {"text": f"{SECRET}!"})),
            text("ok"),
        ],
        store=store,
        hooks=Hooks(after_tool=[redact]),
    )
    result = await session.run("go")
    assert result.status is RunStatus.COMPLETED
    assert [r.content for r in results(session)] == ["card [card number]", "[card number]!"]
    for request in session.model.requests:  # type: ignore[attr-defined]
        sent = [m for m in request.messages if isinstance(m, ToolResultMessage)]
        assert all(SECRET not in m.content for m in sent)
    # the model's own call arguments hold it (the model wrote them); no result does
    stored = [e for e in store.events(session.id) if isinstance(e, ev.ToolEnded)]
    assert all(SECRET not in e.content for e in stored)
    holding = [e.kind for e in store.events(session.id) if SECRET.encode() in encode_event_line(e)]
    assert holding == ["message", "tool_start", "tool_start"]  # the model's own call


async def test_a_failing_after_tool_hook_withholds_the_result() -> None:
    store = MemorySessionStore()

    def broken(given: AfterToolCall) -> ReplaceResult:
        raise ValueError("regex compile error")

    session = make_session(
        [tools(call("echo", {"text": "secret-ish"})), text("ok")],
        store=store,
        hooks=Hooks(after_tool=[broken]),
    )
    result = await session.run("go")
    assert result.status is RunStatus.COMPLETED
    withheld = results(session)[0]
    assert withheld.is_error
    assert "result withheld" in withheld.content
    assert "ValueError: regex compile error" in withheld.content
    assert b'secret-ish"' not in trace_bytes(store, session.id).replace(b'secret-ish\\"', b"")
    ended = [e for e in store.events(session.id) if isinstance(e, ev.ToolEnded)]
    assert "secret-ish" not in ended[0].content


async def test_parallel_reads_pass_the_after_tool_hooks_in_the_models_order() -> None:
    order: list[str] = []

    def upper(given: AfterToolCall) -> ReplaceResult:
        order.append(given.content)
        return ReplaceResult(given.content.upper())

    session = make_session(
        [tools(*(call("echo", {"text": t}) for t in "abc")), text("ok")],
        hooks=Hooks(after_tool=[upper]),
    )
    await session.run("go")
    assert order == ["a", "b", "c"]
    assert [r.content for r in results(session)] == ["A", "B", "C"]


# ------------------------------------------------------------------ fail closed


@pytest.mark.parametrize("kind", ["raises", "wrong answer", "async late", "sync late"])
async def test_a_failing_before_tool_hook_denies_its_call_and_the_run_goes_on(kind: str) -> None:
    echo, store = EchoTool(), MemorySessionStore()

    def raises(given: BeforeToolCall) -> None:
        raise RuntimeError("policy service down")

    def wrong(given: BeforeToolCall) -> object:
        return "allow"  # a string is not an answer

    async def async_late(given: BeforeToolCall) -> None:
        await asyncio.sleep(60)  # past the test's bound: a missed deadline fails, not hangs

    released = threading.Event()

    def sync_late(given: BeforeToolCall) -> None:
        released.wait(60)  # blocks its thread, not the loop, until the test has its verdict

    hook: Any = {"raises": raises, "wrong answer": wrong, "async late": async_late}.get(
        kind, sync_late
    )
    # A hook that fails does so at once, so its deadline is far: at a load of 12 a thread
    # can wait longer than 0.1 s to start, and the failure read as a timeout. A late hook
    # never ends by itself, so only its deadline can decide.
    session = make_session(
        [tools(call("echo", {"text": "x"})), text("I could not echo.")],
        tools=[echo],
        store=store,
        hooks=Hooks(before_tool=[hook], timeout=0.1 if "late" in kind else 30),
    )
    started = time.monotonic()
    try:
        result = await session.run("go")
    finally:
        released.set()
    assert time.monotonic() - started < 20  # a hang, not a speed: the outcome below says who
    assert result.status is RunStatus.COMPLETED
    assert result.text == "I could not echo."
    assert echo.calls == []
    refusal = results(session)[0]
    assert refusal.is_error
    assert "hooks fail closed" in refusal.content
    acted = hook_events(store, session.id)
    expected = "timed_out" if "late" in kind else "failed"
    assert [(a.point, a.outcome) for a in acted] == [("before_tool", expected)]


async def test_a_failing_before_model_hook_makes_no_model_call_and_the_run_ends_error() -> None:
    def broken(given: BeforeModelCall) -> ReplaceMessages:
        raise KeyError("pattern")

    session = make_session([text("never")], hooks=Hooks(before_model=[broken]))
    result = await session.run(f"my card is {SECRET}")
    assert result.status is RunStatus.ERROR
    assert result.error_type == "HookFailed"
    assert "the model call was not made" in (result.error or "")
    assert session.model.requests == []  # type: ignore[attr-defined]


async def test_a_failing_after_run_hook_changes_nothing() -> None:
    store = MemorySessionStore()
    seen: list[RunStatus] = []

    def broken(given: AfterRun) -> None:
        seen.append(given.result.status)
        raise RuntimeError("webhook down")

    session = make_session([text("answer")], store=store, hooks=Hooks(after_run=[broken]))
    result = await session.run("go")
    assert result.status is RunStatus.COMPLETED
    assert result.text == "answer"
    assert seen == [RunStatus.COMPLETED]
    assert [(a.point, a.outcome) for a in hook_events(store, session.id)] == [
        ("after_run", "failed")
    ]


# ------------------------------------------------------------------ before a model call


async def test_replaced_messages_are_sent_and_become_the_stored_history() -> None:
    store = MemorySessionStore()

    def redact(given: BeforeModelCall) -> ReplaceMessages | None:
        if not any(SECRET in m.content for m in given.messages if isinstance(m, UserMessage)):
            return None
        return ReplaceMessages(
            UserMessage(m.content.replace(SECRET, "[card]")) if isinstance(m, UserMessage) else m
            for m in given.messages
        )

    def remind(given: BeforeModelCall) -> ReplaceMessages | None:
        note = UserMessage("Reminder: never repeat card numbers.")
        return None if note in given.messages else ReplaceMessages((*given.messages, note))

    session = make_session(
        [tools(call("echo", {"text": "x"})), text("ok")],
        store=store,
        hooks=Hooks(before_model=[redact, remind]),
    )
    result = await session.run(f"my card is {SECRET}")
    assert result.status is RunStatus.COMPLETED
    first, second = session.model.requests  # type: ignore[attr-defined]
    assert first.messages == (
        UserMessage("my card is [card]"),
        UserMessage("Reminder: never repeat card numbers."),
    )
    assert SECRET not in repr(second.messages)
    assert second.messages[:2] == first.messages  # added once, not once per call
    # the stored history is what the model saw: a resume sends no secret
    replayed = State.from_events(store.events(session.id))
    assert replayed.messages == session.state.messages
    assert SECRET not in repr(replayed.messages)


# ------------------------------------------------------------------ delegated children


async def test_a_delegated_child_runs_under_its_parents_hooks() -> None:
    echo, store = EchoTool(), MemorySessionStore()
    denied_in: list[str] = []

    def no_echo(given: BeforeToolCall) -> Deny | None:
        if given.tool_name != "echo":
            return None
        denied_in.append(given.session_id)
        return Deny("echo is off")

    session = make_session(
        [
            tools(call("delegate", {"instruction": "echo x"})),
            tools(call("echo", {"text": "x"})),  # the child's turn
            text("child: echo is off"),
            text("parent done"),
        ],
        tools=[echo, DelegateTool()],
        store=store,
        hooks=Hooks(before_tool=[no_echo]),
    )
    result = await session.run("go")
    assert result.status is RunStatus.COMPLETED
    assert echo.calls == []
    (child,) = [i for i in await store.list() if i.parent_id == session.id]
    assert denied_in == [child.id]
    assert [a.outcome for a in hook_events(store, child.id)] == ["denied"]


async def test_hung_sync_hooks_starve_nothing() -> None:
    """More hung hooks than the shared thread pool has workers: each is abandoned at the
    deadline in its own thread, and the pool the registry and the adapters use
    (``asyncio.to_thread``) still answers at once."""
    release = threading.Event()

    def hangs(given: BeforeToolCall) -> None:
        release.wait()

    turns = [tools(call("echo", {"text": str(i)})) for i in range(40)]
    session = make_session(
        [*turns, text("gave up")],
        hooks=Hooks(before_tool=[hangs], timeout=0.01),
        max_turns=0,
        repeat_limit=0,  # forty denials in a row on purpose: not a stuck loop here
    )
    try:
        # bounds about hanging, not speed: a starved pool never answers at all
        result = await asyncio.wait_for(session.run("go"), timeout=60)
        assert await asyncio.wait_for(asyncio.to_thread(lambda: "free"), timeout=30) == "free"
    finally:
        release.set()
    assert result.status is RunStatus.COMPLETED
    assert len(results(session)) == 40
    assert all("timed out" in r.content for r in results(session))


@pytest.mark.parametrize(
    ("raised", "says"),
    [
        (TimeoutError("the policy service timed out"), "failed"),  # its own, not the deadline
        (StopIteration(), "failed"),
        (SystemExit(3), "failed"),
    ],
)
async def test_what_a_sync_hook_raises_is_its_failure(raised: BaseException, says: str) -> None:
    store = MemorySessionStore()

    def raises(given: BeforeToolCall) -> None:
        raise raised

    session = make_session(
        [tools(call("echo", {"text": "x"})), text("ok")],
        store=store,
        hooks=Hooks(before_tool=[raises], timeout=2),
    )
    result = await session.run("go")
    assert result.status is RunStatus.COMPLETED
    (acted,) = hook_events(store, session.id)
    assert acted.outcome == says
    assert type(raised).__name__ in acted.reason


class LookupTool(EchoTool):
    """A tool of a user's that also reports what it found in its metadata."""

    name = "lookup"

    async def handle(self, arguments: Mapping[str, Any], ctx: Any) -> Any:
        output = await super().handle(arguments, ctx)
        return attrs.evolve(output, metadata={"found": output.content})


async def test_a_replaced_result_can_replace_the_metadata_the_trace_stores_beside_it() -> None:
    store = MemorySessionStore()

    def redact(given: AfterToolCall) -> ReplaceResult:
        assert given.metadata == {"found": given.content}
        return ReplaceResult(
            given.content.replace(SECRET, "[card]"),
            metadata={"found": given.metadata["found"].replace(SECRET, "[card]")},
        )

    session = make_session(
        [tools(call("lookup", {"text": f"card {SECRET}"})), text("ok")],
        tools=[LookupTool()],
        store=store,
        hooks=Hooks(after_tool=[redact]),
    )
    await session.run("go")
    (ended,) = [e for e in store.events(session.id) if isinstance(e, ev.ToolEnded)]
    assert ended.content == "card [card]"
    assert ended.metadata == {"found": "card [card]"}


async def test_a_rewrite_into_arguments_that_are_not_json_fails_closed() -> None:
    echo = EchoTool()

    def nan(given: BeforeToolCall) -> RewriteArguments:
        return RewriteArguments({**given.arguments, "times": float("nan")})

    session = make_session(
        [tools(call("echo", {"text": "x"})), text("ok")],
        tools=[echo],
        hooks=Hooks(before_tool=[nan]),
    )
    await session.run("go")
    assert echo.calls == []
    assert "hooks fail closed" in results(session)[0].content
