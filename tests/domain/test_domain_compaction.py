"""Compaction: auto and manual, failure keeps history, pairs never split, replayable."""

from __future__ import annotations

import pytest
from domain_support import make_session

from rho_adapters.fakes import FunctionModel, MemorySessionStore, Turn, call, text, tools
from rho_domain import events as ev
from rho_domain.compaction import plan_compaction
from rho_domain.errors import ContextLengthExceeded, ServerError
from rho_domain.messages import (
    AssistantMessage,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    message_chars,
)
from rho_domain.model import ModelRequest
from rho_domain.run import RunStatus
from rho_domain.state import State


def pair(n: int) -> list:  # type: ignore[type-arg]
    c = ToolCall(id=f"c{n}", name="echo", arguments='{"text": "x"}')
    return [
        AssistantMessage(text=f"step {n}", tool_calls=(c,)),
        ToolResultMessage(call_id=c.id, tool_name="echo", content="r" * 50),
    ]


def assert_pairs_intact(messages) -> None:  # type: ignore[no-untyped-def]
    open_calls: set[str] = set()
    for m in messages:
        if isinstance(m, AssistantMessage):
            assert not open_calls, "a tool call lost its result"
            open_calls = {c.id for c in m.tool_calls}
        elif isinstance(m, ToolResultMessage):
            assert m.call_id in open_calls, "a result lost its call"
            open_calls.discard(m.call_id)
        else:
            assert not open_calls
    assert not open_calls


def test_plan_splits_at_the_last_user_message_and_keeps_its_turn_whole() -> None:
    history = [UserMessage("first"), *pair(1), UserMessage("second"), *pair(2), *pair(3)]
    plan = plan_compaction(history, tail_budget_chars=10_000)
    assert plan.tail[0] == UserMessage("second")
    assert len(plan.tail) == 5
    assert_pairs_intact(plan.to_summarize)
    assert_pairs_intact(plan.tail)
    assert [u.content for u in plan.recent_users] == ["first"]


def test_plan_summarises_an_oversized_latest_turn_but_keeps_its_question() -> None:
    history = [UserMessage("q"), *pair(1), *pair(2)]
    plan = plan_compaction(history, tail_budget_chars=10)
    assert plan.tail == (UserMessage("q"),)
    assert_pairs_intact(plan.to_summarize)


async def test_manual_compaction_replaces_history_and_is_replayable() -> None:
    store = MemorySessionStore()
    session = make_session(
        [
            tools(call("echo", {"text": "x" * 100, "times": 50})),
            text("one"),
            text("two"),
            text("SUMMARY: did things"),
            text("after"),
        ],
        store=store,
    )
    await session.run("first task")
    await session.run("second task")
    before = list(session.state.messages)
    result = await session.compact("keep the numbers")
    assert result.summary == "SUMMARY: did things"
    assert result.trigger == "manual"
    assert result.tokens_after < result.tokens_before
    messages = session.state.messages
    assert isinstance(messages[0], UserMessage)
    assert messages[0].origin == "summary"
    assert messages[-2] == UserMessage("second task")
    assert_pairs_intact(messages)
    request = session.model.requests[3]  # type: ignore[attr-defined]
    assert request.tool_choice == "none"
    assert "keep the numbers" in request.messages[-1].content
    assert len(request.messages) < len(before) + 1
    replayed = State.from_events(store.events(session.id))
    assert replayed.messages == messages
    assert replayed.compactions == 1
    assert (await session.run("third")).text == "after"


async def test_a_failed_summary_leaves_history_untouched() -> None:
    session = make_session([text("one"), text("two"), Turn(error=ServerError("boom", status=500))])
    await session.run("a")
    await session.run("b")
    before = list(session.state.messages)
    with pytest.raises(ServerError):
        await session.compact()
    assert session.state.messages == before

    empty = make_session([text("one"), text("two"), text("")])
    await empty.run("a")
    await empty.run("b")
    kept = list(empty.state.messages)
    with pytest.raises(Exception, match="empty summary"):
        await empty.compact()
    assert empty.state.messages == kept


async def test_auto_compaction_triggers_once_past_the_threshold() -> None:
    big = "x" * 4000
    session = make_session(
        [
            text("ok", input_tokens=900, output_tokens=5),
            text("the summary"),
            text("answer", input_tokens=100, output_tokens=5),
        ],
        context_window=1000,
        compact_threshold=0.8,
    )
    await session.run(big)
    compacts: list[ev.Compacted] = []
    result = await session.run(
        "next question",
        on_event=lambda e: compacts.append(e) if isinstance(e, ev.Compacted) else None,
    )
    assert result.status is RunStatus.COMPLETED
    assert result.text == "answer"
    assert len(compacts) == 1
    assert compacts[0].trigger == "auto"
    assert compacts[0].tokens_before > 800
    final_request = session.model.requests[-1]  # type: ignore[attr-defined]
    assert final_request.messages[-1] == UserMessage("next question")


async def test_failed_auto_compaction_is_reported_and_the_run_goes_on() -> None:
    session = make_session(
        [
            text("ok", input_tokens=900, output_tokens=5),
            Turn(error=ServerError("summary failed", status=503)),
            text("still fine"),
        ],
        context_window=1000,
    )
    await session.run("a" * 100)
    errors: list[str] = []
    result = await session.run(
        "b",
        on_event=lambda e: errors.append(e.message) if isinstance(e, ev.ErrorOccurred) else None,
    )
    assert result.status is RunStatus.COMPLETED
    assert any("auto-compaction failed" in m for m in errors)


async def test_nothing_to_compact_is_a_no_op() -> None:
    session = make_session([text("only")])
    await session.run("q")
    result = await session.compact()
    assert result.summary == ""
    assert len(session.state.messages) == 2


async def test_failed_auto_compaction_ends_the_run_when_the_next_call_cannot_fit() -> None:
    """Issue 16: the summary failed, the history is over the window, and the run used to go
    on (and end ``completed``); the call could never fit, so it ends as an error."""
    session = make_session(
        [
            text("ok", input_tokens=1_500, output_tokens=5),
            text(""),  # an empty summary
            text("never asked"),
        ],
        context_window=1000,
    )
    await session.run("a" * 100)
    result = await session.run("b")
    assert result.status is RunStatus.ERROR
    assert result.error_type == "ContextFull"
    assert "1000 tokens" in (result.error or "")
    assert "empty summary" in (result.error or "")
    assert len(session.model.requests) == 2  # type: ignore[attr-defined]


async def test_a_request_too_large_in_bytes_is_compacted_then_said_as_itself() -> None:
    """A 413 (a proxy's request size limit: the adapter reads it as ContextLengthExceeded)
    is compacted once and the call made again; refused again, the run's ContextFull quotes
    the 413 instead of "the model's context window is 100000 tokens", a window the request
    was nowhere near (what it said before)."""
    too_large = ContextLengthExceeded("HTTP 413: Request Entity Too Large", status=413)
    session = make_session(
        [
            text("ok " * 200),
            Turn(error=too_large),
            text("the summary"),
            Turn(error=too_large),
        ]
    )
    await session.run("first " * 200)
    result = await session.run("second")
    assert result.error_type == "ContextFull"
    assert (result.error or "").startswith(
        "ContextFull: context full: HTTP 413: Request Entity Too Large; and it still does not "
        "fit after compaction. To continue:"
    ), result.error
    assert "raise the size limit of the server or the proxy before it" in (result.error or "")
    assert len(session.model.requests) == 4  # type: ignore[attr-defined]


@pytest.mark.parametrize("summary_limit", [9_000, 5_000])
async def test_a_413_on_one_long_turn_is_compacted_within_the_size_limit(
    summary_limit: int,
) -> None:
    """A proxy's size limit passed inside one turn (a task's tool results: the common
    one-shot run) is compacted: the latest turn is kept whole within a quarter of the
    refused size, not of the token window, and the summary request is cut to half of it (a
    quarter when that too is refused). Before, the whole turn was the tail ('there is no
    earlier history to compact') and a summary request sent whole held nearly all of the
    refused request."""
    sent: list[tuple[int, bool]] = []

    def proxy(request: ModelRequest) -> Turn:
        size = sum(message_chars(m) for m in request.messages)
        summary = not request.tools
        sent.append((size, summary))
        if size > (summary_limit if summary else 9_000):
            return Turn(error=ContextLengthExceeded("HTTP 413: Too Large", status=413))
        if summary:
            return text("the summary")
        if any(m.role == "user" and m.origin == "summary" for m in request.messages):
            return text("done")
        return tools(call("echo", {"text": "x" * 2_000}))

    session = make_session([])
    session.model = FunctionModel(proxy)
    result = await session.run("go")
    assert (result.status, result.error, result.text) == (RunStatus.COMPLETED, None, "done")
    summaries = [size for size, summary in sent if summary]
    assert len(summaries) == (1 if summary_limit == 9_000 else 2)
    assert summaries[-1] <= summary_limit
