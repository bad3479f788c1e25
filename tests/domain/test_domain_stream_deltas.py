"""Streamed deltas are built only for someone: ``consume_stream`` emits ``TextDelta``,
``ReasoningDelta`` and ``ToolCallDelta`` while the journal has a listener (they go to
listeners and nowhere else), asking at each delta; the assembled message and the trace are
the same either way."""

from __future__ import annotations

from collections.abc import AsyncIterator

from domain_support import make_session

from rho_adapters.clock import SystemClock
from rho_adapters.fakes import MemorySessionStore, Turn
from rho_domain import events as ev
from rho_domain.loop.journal import Journal
from rho_domain.loop.streaming import Assembly, consume_stream
from rho_domain.model import (
    ModelRequest,
    ReasoningChunk,
    StreamEvent,
    StreamFinished,
    TextChunk,
    ToolCallChunk,
)
from rho_domain.state import State


class _Model:
    """Streams a fixed answer; ``between`` runs after its first chunk."""

    def __init__(self, between: object = None) -> None:
        self.between = between

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        yield TextChunk("a")
        if callable(self.between):
            self.between()
        yield ReasoningChunk("r")
        yield ToolCallChunk(index=0, call_id="t1", name="ls", arguments_delta="{}")
        yield TextChunk("b")
        yield StreamFinished("stop")

    async def aclose(self) -> None:
        return None


def _journal() -> Journal:
    return Journal("s1", State(), SystemClock(), None, created=True)


async def _consume(journal: Journal, model: _Model) -> tuple[Assembly, list[ev.Event]]:
    emitted: list[ev.Event] = []

    async def emit(event: ev.Event) -> None:
        emitted.append(event)
        await journal.emit(event)

    assembly = Assembly()
    request = ModelRequest(model="m", system="", messages=())
    await consume_stream(model, request, assembly, emit, journal.clock, journal.heard)
    return assembly, emitted


async def test_no_listener_no_delta_events_and_the_same_assembly() -> None:
    assembly, emitted = await _consume(_journal(), _Model())
    assert emitted == []
    assert (assembly.partial_text, assembly.partial_reasoning) == ("ab", "r")
    assert assembly.finished


async def test_a_listener_gets_every_delta() -> None:
    journal, heard = _journal(), list[ev.Event]()
    journal.listeners.append(heard.append)
    assembly, emitted = await _consume(journal, _Model())
    assert [e.kind for e in heard] == [
        "text_delta",
        "reasoning_delta",
        "tool_call_delta",
        "text_delta",
    ]
    assert heard == emitted
    assert assembly.partial_text == "ab"


async def test_a_listener_attached_mid_stream_gets_the_deltas_from_then_on() -> None:
    journal, heard = _journal(), list[ev.Event]()
    _, emitted = await _consume(
        journal, _Model(between=lambda: journal.listeners.append(heard.append))
    )
    assert [e.kind for e in heard] == ["reasoning_delta", "tool_call_delta", "text_delta"]
    assert heard == emitted


async def test_a_run_stores_the_same_trace_with_and_without_a_listener() -> None:
    traces = []
    for listener in (None, list[ev.Event]().append):
        store = MemorySessionStore()
        session = make_session([Turn(text="streamed in pieces", chunk_size=3)], store=store)
        result = await session.run("go", on_event=listener)
        assert result.text == "streamed in pieces"
        traces.append(
            [
                (e.kind, getattr(getattr(e, "message", None), "text", None))
                for e in store.events(session.id)
                if e.kind != "run_start" and e.kind != "run_end"
            ]
        )
    assert traces[0] == traces[1]
    assert ("message", "streamed in pieces") in traces[0]
