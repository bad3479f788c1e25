"""A listener that raises is the user's bug, not the agent's: the run goes on (issue 29, item 8).

Before the fix, an exception in an ``on_event`` listener ended the run with status ``error``.
"""

from __future__ import annotations

import asyncio
import logging

import pytest
from domain_support import EchoTool, make_session

from rho_adapters.fakes import FakeClock, MemorySessionStore, call, text, tools
from rho_domain import events as ev
from rho_domain.messages import ToolResultMessage
from rho_domain.run import RunStatus


class FlakyUI:
    """A renderer with a bug: it raises on every tool result it is shown."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def __call__(self, event: ev.Event) -> None:
        self.seen.append(event.kind)
        if isinstance(event, ev.ToolEnded):
            raise KeyError("column 'width'")


async def test_a_raising_listener_does_not_end_the_run(caplog: pytest.LogCaptureFixture) -> None:
    echo = EchoTool()
    store = MemorySessionStore()
    session = make_session(
        [
            tools(call("echo", {"text": "a"})),
            tools(call("echo", {"text": "b"})),
            text("done"),
        ],
        tools=[echo],
        store=store,
    )
    ui = FlakyUI()
    with caplog.at_level(logging.WARNING, logger="rho_domain.loop.journal"):
        result = await session.run("go", on_event=ui)
    assert result.status is RunStatus.COMPLETED, result.error
    assert result.text == "done"
    assert [c["text"] for c in echo.calls] == ["a", "b"]  # the second tool still ran
    # reported once, though it failed on both tool results
    events = store.events(session.id)
    reported = [e for e in events if isinstance(e, ev.ListenerFailed)]
    assert len(reported) == 1
    assert reported[0].event_kind == "tool_end"
    assert reported[0].error_type == "KeyError"
    assert reported[0].listener.endswith("FlakyUI")
    records = [r for r in caplog.records if r.name == "rho_domain.loop.journal"]
    assert len(records) == 1
    assert "FlakyUI" in records[0].getMessage()
    # the listener kept being called after its failure, to the end of the run
    assert ui.seen[-1] == "run_end"
    assert ui.seen.count("tool_end") == 2


async def test_an_async_listener_that_raises_and_the_others_still_see_every_event() -> None:
    calls: list[str] = []

    async def broken(event: ev.Event) -> None:
        raise RuntimeError("socket closed")

    session = make_session([tools(call("echo", {"text": "x"})), text("ok")])
    session.journal.listeners.append(broken)
    result = await session.run("go", on_event=lambda e: calls.append(e.kind))
    assert result.status is RunStatus.COMPLETED
    assert "listener_error" in calls
    # the good listener saw the whole run, in order, after the broken one failed first
    assert calls[0] == "run_start"
    assert calls[-1] == "run_end"
    assert calls.count("message") == 4


async def test_an_async_listener_that_never_returns_is_stopped_and_the_run_ends() -> None:
    """Before, a listener awaiting what never came (a queue whose reader died) held the run
    forever: neither ``cancel()`` nor the run's time budget reaches that wait."""
    stuck: list[str] = []
    calls: list[str] = []
    store = MemorySessionStore()

    async def waits_forever(event: ev.Event) -> None:
        stuck.append(event.kind)
        if isinstance(event, ev.LLMStarted):
            await asyncio.Event().wait()

    session = make_session([tools(call("echo", {"text": "x"})), text("ok")], store=store)
    session.journal.listeners.append(waits_forever)
    session.journal.listener_seconds = 0.01  # LISTENER_SECONDS (30 s) in use
    result = await session.run("go", on_event=lambda e: calls.append(e.kind))
    assert (result.status, result.text) == (RunStatus.COMPLETED, "ok")
    assert stuck == ["run_start", "message", "llm_start"]  # not called again once stopped
    assert calls[-1] == "run_end"
    (reported,) = [e for e in store.events(session.id) if isinstance(e, ev.ListenerFailed)]
    assert (reported.event_kind, reported.error_type) == ("llm_start", "TimeoutError")
    assert reported.message == (
        "it took a llm_start event for more than 0.01 s and was stopped; it is no longer "
        "called in this session"
    )


async def test_cancellation_from_a_listener_still_propagates() -> None:
    """A cancel of the run's task reaching an async listener still ends the caller's await.
    A ``CancelledError`` a listener raises with nothing cancelled is its failure, reported
    (``test_a_cancelled_error_nobody_asked_for_is_the_plugged_codes_failure``)."""

    async def stop(event: ev.Event) -> None:
        if isinstance(event, ev.LLMStarted):
            task = asyncio.current_task()
            assert task is not None
            task.cancel()
            await asyncio.sleep(0)

    session = make_session([text("never shown")])
    with pytest.raises(asyncio.CancelledError):
        await session.run("go", on_event=stop)


@pytest.mark.parametrize("kind", ["run_start", "llm_start", "text_delta", "message", "run_end"])
async def test_a_listener_raising_at_any_moment_leaves_the_result_whole(kind: str) -> None:
    store = MemorySessionStore()

    def breaks_on(event: ev.Event) -> None:
        if event.kind == kind:
            raise ValueError(f"cannot render {kind}")

    session = make_session([text("the answer", input_tokens=7)], store=store)
    result = await session.run("go", on_event=breaks_on)
    assert result.status is RunStatus.COMPLETED
    assert result.text == "the answer"
    assert result.usage.input_tokens == 7
    (reported,) = [e for e in store.events(session.id) if isinstance(e, ev.ListenerFailed)]
    assert reported.event_kind == kind
    assert reported.message == f"cannot render {kind}"


async def test_a_child_sessions_failing_listener_does_not_stop_the_delegation() -> None:
    from rho_domain.loop.journal import Listener
    from rho_domain.tools.delegate import DelegateTool

    class Tracing:
        """Follows children (as telemetry does); its children's listener is broken."""

        def __call__(self, event: ev.Event) -> None:
            return None

        def for_child(self, child_session_id: str) -> Listener:
            def broken(event: ev.Event) -> None:
                raise RuntimeError("span exporter down")

            return broken

    store = MemorySessionStore()
    session = make_session(
        [
            tools(call("delegate", {"instruction": "count"})),
            text("3"),
            text("the sub-agent says 3"),
        ],
        tools=[EchoTool(), DelegateTool()],
        store=store,
    )
    session.journal.listeners.append(Tracing())
    result = await session.run("how many?")
    assert result.status is RunStatus.COMPLETED
    assert result.text == "the sub-agent says 3"
    (child,) = [i for i in await store.list() if i.parent_id == session.id]
    assert child.status == "completed"
    assert [e.error_type for e in store.events(child.id) if isinstance(e, ev.ListenerFailed)] == [
        "RuntimeError"
    ]


async def test_a_listener_that_cannot_follow_a_child_does_not_stop_the_delegation(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Before: a tracer whose ``for_child`` raised failed the ``delegate`` call itself ("Tool
    'delegate' failed unexpectedly: RuntimeError: tracer closed"), naming no listener, and
    the sub-agent never ran."""
    from rho_domain.loop.journal import Listener
    from rho_domain.tools.delegate import DelegateTool

    class Closed:
        def __call__(self, event: ev.Event) -> None:
            return None

        def for_child(self, child_session_id: str) -> Listener:
            raise RuntimeError("tracer closed")

    session = make_session(
        [tools(call("delegate", {"instruction": "count"})), text("3"), text("it says 3")],
        tools=[EchoTool(), DelegateTool()],
    )
    session.journal.listeners.append(Closed())
    result = await session.run("how many?")
    assert (result.status, result.text) == (RunStatus.COMPLETED, "it says 3")
    assert [m.content for m in session.state.messages if isinstance(m, ToolResultMessage)] == ["3"]
    (warned,) = [r.getMessage() for r in caplog.records if "follow the child" in r.getMessage()]
    assert warned.startswith(
        "event listener test_domain_listener_errors.test_a_listener_that_cannot_follow_a_child_"
        "does_not_stop_the_delegation.<locals>.Closed failed to follow the child session "
    )
    assert warned.endswith("(ignored; the child runs without it): RuntimeError: tracer closed")


async def test_a_sync_listener_that_held_the_loop_is_stopped_after_it_returns() -> None:
    """Before, a sync listener that blocked (``time.sleep``, a lock, ``input()``) froze the
    run at every event, ``cancel()`` and the time budget included: a stream of N deltas waited
    N times as long. Once it held the loop past the bound it is no longer called."""
    clock = FakeClock()
    blocked: list[str] = []
    calls: list[str] = []
    store = MemorySessionStore()

    def blocks(event: ev.Event) -> None:
        blocked.append(event.kind)
        if isinstance(event, ev.LLMStarted):
            clock.advance(31.0)  # the loop held for 31 s, as time.sleep(31) would

    session = make_session(
        [tools(call("echo", {"text": "x"})), text("ok")], store=store, clock=clock
    )
    session.journal.listeners.append(blocks)
    result = await session.run("go", on_event=lambda e: calls.append(e.kind))
    assert (result.status, result.text) == (RunStatus.COMPLETED, "ok")
    assert blocked == ["run_start", "message", "llm_start"]  # not called again once stopped
    assert calls[-1] == "run_end"
    (reported,) = [e for e in store.events(session.id) if isinstance(e, ev.ListenerFailed)]
    assert (reported.event_kind, reported.error_type) == ("llm_start", "TimeoutError")
    assert reported.message.startswith(
        "it held the event loop for 31 s on a llm_start event (more than 30 s;"
    )
    assert "must be async, or hand its work to a thread" in reported.message
