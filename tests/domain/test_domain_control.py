"""Cancellation at every checkpoint, pause and directives."""

from __future__ import annotations

import asyncio
import contextlib

from domain_support import EchoTool, SlowTool, WriteNoteTool, make_session

from rho_adapters.fakes import (
    ManualSignals,
    MemorySessionStore,
    ScriptedApprover,
    Turn,
    call,
    text,
    tools,
)
from rho_domain import events as ev
from rho_domain.messages import AssistantMessage, ToolResultMessage, UserMessage
from rho_domain.ports.approver import ApprovalAnswer, ApprovalRequest
from rho_domain.run import RunStatus
from rho_domain.state import State


async def test_cancel_before_the_model_call() -> None:
    signals = ManualSignals()
    session = make_session([text("never")], signals=signals)

    def cancel_on_start(event: ev.Event) -> None:
        if isinstance(event, ev.MessageAdded):
            session.cancel()

    result = await session.run("go", on_event=cancel_on_start)
    assert result.status is RunStatus.CANCELLED
    assert session.model.requests == []  # type: ignore[attr-defined]


async def test_cancel_during_streaming_keeps_partial_text_and_valid_history() -> None:
    session = make_session(
        [Turn(text="thinking hard about it", chunk_size=4, hang=True), text("next")]
    )

    def cancel_after_text(event: ev.Event) -> None:
        if isinstance(event, ev.TextDelta):
            session.cancel()

    result = await session.run("go", on_event=cancel_after_text)
    assert result.status is RunStatus.CANCELLED
    last = session.state.messages[-1]
    assert isinstance(last, AssistantMessage)
    assert "interrupted" in last.text
    assert (await session.run("continue")).status is RunStatus.COMPLETED


async def test_cancel_before_a_tool_answers_every_call_of_the_batch() -> None:
    echo = EchoTool()
    session = make_session(
        [tools(call("echo", {"text": "1"}), call("echo", {"text": "2"})), text("x")],
        tools=[echo],
    )

    def cancel_on_tool_call(event: ev.Event) -> None:
        if isinstance(event, ev.LLMEnded):
            session.cancel()

    result = await session.run("go", on_event=cancel_on_tool_call)
    assert result.status is RunStatus.CANCELLED
    assert echo.calls == []
    results = [m for m in session.state.messages if isinstance(m, ToolResultMessage)]
    assert len(results) == 2
    assert all(r.is_error for r in results)
    assert session.state.unanswered_calls() == ()


async def test_cancel_during_a_tool_cancels_the_tool_task() -> None:
    slow, signals = SlowTool(), ManualSignals()
    session = make_session(
        [tools(call("slow"), call("slow")), text("x")], tools=[slow], signals=signals
    )
    task = asyncio.create_task(session.run("go"))
    await slow.started.wait()
    signals.cancel(session.id)  # from "another process", through the signal port
    result = await task
    assert result.status is RunStatus.CANCELLED
    assert slow.cancelled
    results = [m for m in session.state.messages if isinstance(m, ToolResultMessage)]
    assert [("cancelled" in r.content) for r in results] == [True, True]
    assert session.id in signals.cleared  # consumed: the next run is not cancelled
    assert (await session.run("again")).status is RunStatus.COMPLETED


async def test_cancel_while_waiting_for_a_human() -> None:
    asked = asyncio.Event()

    async def slow_human(request: ApprovalRequest) -> ApprovalAnswer:
        asked.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    class Human(ScriptedApprover):
        async def decide(self, request: ApprovalRequest) -> ApprovalAnswer:
            return await slow_human(request)

    session = make_session(
        [tools(call("write", {"path": "a", "content": "b"}))],
        tools=[WriteNoteTool()],
        profile="developer",
        approver=Human(),
    )
    task = asyncio.create_task(session.run("go"))
    await asked.wait()
    session.cancel()
    assert (await task).status is RunStatus.CANCELLED


async def test_a_stale_cancel_request_does_not_cancel_the_next_run() -> None:
    signals = ManualSignals()
    session = make_session([text("fine")], signals=signals)
    signals.cancel(session.id)  # requested while idle
    assert (await session.run("go")).status is RunStatus.COMPLETED


async def test_pause_waits_before_the_model_call_until_resumed() -> None:
    signals = ManualSignals()
    session = make_session([text("after pause")], signals=signals)
    signals.pause(session.id)
    seen: list[str] = []

    def watch(event: ev.Event) -> None:
        if isinstance(event, ev.Interrupted):
            seen.append(event.reason)

    task = asyncio.create_task(session.run("go", on_event=watch))
    for _ in range(20):
        await asyncio.sleep(0)
    assert not task.done()
    assert seen == ["paused"]
    assert session.model.requests == []  # type: ignore[attr-defined]
    signals.resume(session.id)
    result = await task
    assert result.status is RunStatus.COMPLETED
    assert seen == ["paused", "resumed"]


async def test_pause_is_honoured_before_each_tool() -> None:
    signals = ManualSignals()
    echo = EchoTool()
    session = make_session(
        [tools(call("echo", {"text": "1"})), text("x")], tools=[echo], signals=signals
    )

    def pause_after_model(event: ev.Event) -> None:
        if isinstance(event, ev.LLMEnded) and event.call_index == 1:
            signals.pause(session.id)

    task = asyncio.create_task(session.run("go", on_event=pause_after_model))
    for _ in range(30):
        await asyncio.sleep(0)
    assert echo.calls == []
    assert not task.done()
    signals.resume(session.id)
    assert (await task).status is RunStatus.COMPLETED
    assert len(echo.calls) == 1


async def test_cancel_while_paused() -> None:
    signals = ManualSignals()
    session = make_session([text("never")], signals=signals)
    signals.pause(session.id)
    task = asyncio.create_task(session.run("go"))
    for _ in range(5):
        await asyncio.sleep(0)
    session.cancel()
    assert (await task).status is RunStatus.CANCELLED


async def test_directives_are_injected_once_and_survive_a_restart() -> None:
    signals, store = ManualSignals(), MemorySessionStore()
    session = make_session(
        [tools(call("echo", {"text": "x"})), text("a"), text("b")], signals=signals, store=store
    )
    signals.add_directive("focus on the logs", session.id)
    await session.run("go")
    directives = [
        m for m in session.state.messages if isinstance(m, UserMessage) and m.origin == "directive"
    ]
    assert len(directives) == 1
    assert "focus on the logs" in directives[0].content
    assert session.model.requests[0].messages[-1] == directives[0]  # type: ignore[attr-defined]
    await session.run("again")
    assert (
        sum(
            1
            for m in session.state.messages
            if isinstance(m, UserMessage) and m.origin == "directive"
        )
        == 1
    )
    replayed = State.from_events(store.events(session.id))
    assert replayed.directive_offset == 1


async def test_cancelling_the_task_that_runs_the_session_stops_the_tool() -> None:
    slow = SlowTool()
    session = make_session([tools(call("slow"))], tools=[slow])
    task = asyncio.create_task(session.run("go"))
    await slow.started.wait()
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    assert slow.cancelled
    assert session.state.status == "cancelled"
    assert session.state.unanswered_calls() == ()


async def test_every_end_of_a_run_clears_its_pause_and_answers_its_exports() -> None:
    """Issue 29, item 5: a pause or an export asked during the run's last step (after its
    last checkpoint) belongs to that run: the run that ends clears the pause (the next run
    does not start paused) and answers the export (its asker does not wait in vain)."""
    signals = ManualSignals()
    session = make_session([text("first"), text("second")], signals=signals)
    asked: list[str] = []

    def late_signals(event: ev.Event) -> None:
        if isinstance(event, ev.LLMEnded):
            signals.pause(session.id)
            signals.cancel(session.id)
            asked.append(signals.request_export(session.id))

    assert (await session.run("go", on_event=late_signals)).status is RunStatus.COMPLETED
    assert not await signals.is_paused(session.id)
    assert not await signals.cancel_requested(session.id)
    assert await signals.export_requests(session.id) == ()
    assert "first" in signals.exports[asked[0]]
    interruptions: list[ev.Event] = []
    second = await asyncio.wait_for(
        session.run("again", on_event=lambda e: interruptions.append(e)), 5
    )
    assert second.status is RunStatus.COMPLETED
    assert [e for e in interruptions if isinstance(e, ev.Interrupted)] == []


async def test_a_paused_run_that_is_cancelled_leaves_no_pause_behind() -> None:
    signals = ManualSignals()
    session = make_session([text("after")], signals=signals)
    signals.pause(session.id)
    task = asyncio.create_task(session.run("go"))
    for _ in range(5):
        await asyncio.sleep(0)
    signals.cancel(session.id)
    assert (await task).status is RunStatus.CANCELLED
    assert not await signals.is_paused(session.id)
    assert (await asyncio.wait_for(session.run("again"), 5)).status is RunStatus.COMPLETED


async def test_one_export_that_cannot_be_written_leaves_the_others_answered() -> None:
    """Before: the first request whose answer failed (a StoreError) stopped the loop over the
    requests, so every one sorted after it waited for ever."""
    from rho_domain.errors import StoreError

    class OneFails(ManualSignals):
        async def answer_export(self, session_id: str, request_id: str, text: str) -> None:
            if request_id == "a":
                raise StoreError("exports/a.request: is a directory")
            await super().answer_export(session_id, request_id, text)

    signals = OneFails()
    session = make_session([text("done")], signals=signals)
    signals.request_export(session.id, "a")
    signals.request_export(session.id, "b")
    assert (await session.run("go")).status is RunStatus.COMPLETED
    assert list(signals.exports) == ["b"]


async def test_a_checkpoint_answers_a_few_export_requests_not_every_one() -> None:
    """A peer of a shared store can ask a million exports of a session (rows of
    rho_exports): each was made and written at the first checkpoint, and the run stalled
    there. Now a checkpoint answers at most eight (the export made once for them); the others
    are answered at the next checkpoints."""

    class Batches(ManualSignals):
        def __init__(self) -> None:
            super().__init__()
            self.batches: list[int] = []

        async def export_requests(self, session_id: str) -> tuple[str, ...]:
            self.batches.append(0)
            return await super().export_requests(session_id)

        async def answer_export(self, session_id: str, request_id: str, text: str) -> None:
            self.batches[-1] += 1
            await super().answer_export(session_id, request_id, text)

    signals = Batches()
    session = make_session([text("done")], signals=signals)
    for n in range(12):
        signals.request_export(session.id, f"r{n:02}")
    assert (await session.run("go")).status is RunStatus.COMPLETED
    assert max(signals.batches) == 8, signals.batches  # before: 12 at the first checkpoint
    assert sorted(signals.exports) == [f"r{n:02}" for n in range(12)]
