"""A durable run executed again after its worker died, in one process: the steps the dead
worker finished are answered from the record (the model is not asked again), the events its
trace holds are retraced, not written twice, and the call it died in is run again when it
reads and answered interrupted when it writes (``RecordingSteps`` stands for the engine)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

import pytest
from domain_support import EchoTool, WriteNoteTool

from rho_adapters.fakes import (
    FakeClock,
    MemoryExecutor,
    MemorySessionStore,
    RecordingSteps,
    ScriptedModel,
    call,
    text,
    tools,
)
from rho_domain import events as ev
from rho_domain.agent import Agent
from rho_domain.config import AgentConfig
from rho_domain.errors import RunSuperseded
from rho_domain.loop.session import Session
from rho_domain.not_run import DIED
from rho_domain.permissions import builtin_profile
from rho_domain.ports.store import SessionRecord
from rho_domain.run import RunStatus
from rho_domain.state import State
from rho_domain.tools.registry import ToolRegistry

T = TypeVar("T")

SCRIPT = [
    tools(call("echo", {"text": "read"}, id="c1")),
    tools(call("write", {"path": "note.txt", "content": "once"}, id="c2")),
    text("done"),
]


def agent(echo: EchoTool) -> Agent:
    profile = builtin_profile("eval")
    return Agent(
        config=AgentConfig(profile=profile, auto_approve=True),
        profile=profile,
        registry=ToolRegistry([echo, WriteNoteTool()]),
        system_prompt="You are a test agent.",
    )


async def first_execution() -> tuple[list[ev.Event], list[tuple[str, Any]]]:
    """The whole run, with its trace and its steps' records."""
    store, steps = MemorySessionStore(), RecordingSteps()
    session = Session(
        agent(EchoTool()),
        model=ScriptedModel(SCRIPT),
        executor=MemoryExecutor(),
        clock=FakeClock(),
        store=store,
        session_id="s1",
        steps=steps,
    )
    result = await session.run("go", run_id="r1")
    await session.close()
    assert result.status is RunStatus.COMPLETED
    assert steps.ran == ["model", "tool", "model", "tool", "model"]
    return list(store.events("s1")), steps.records


def cut_at(events: list[ev.Event], call_id: str) -> int:
    """Just after ``tool_start`` of ``call_id``: where the worker died."""
    for index, event in enumerate(events):
        if isinstance(event, ev.ToolStarted) and event.call.id == call_id:
            return index + 1
    raise AssertionError(call_id)


def executed_again(
    store: MemorySessionStore,
    model: ScriptedModel,
    steps: RecordingSteps,
    replay: Sequence[ev.Event],
    *,
    echo: EchoTool | None = None,
    executor: MemoryExecutor | None = None,
) -> Session:
    """The session of run ``r1`` executed again over ``replay`` (its trace) and ``steps``
    (the engine's records), in ``store``, which holds session ``s1``."""
    return Session(
        agent(echo or EchoTool()),
        model=model,
        executor=executor or MemoryExecutor(),
        clock=FakeClock(),
        store=store,
        session_id="s1",
        state=State(),
        created=True,
        steps=steps,
        replay=replay,
    )


async def again(
    events: list[ev.Event], records: list[tuple[str, Any]], *, echo: EchoTool
) -> tuple[Session, ScriptedModel, MemorySessionStore, MemoryExecutor, RecordingSteps]:
    """Execute the run again on what the dead worker left: a trace and the step records."""
    store, executor = MemorySessionStore(), MemoryExecutor()
    record = SessionRecord(id="s1", created_at=0.0, config=AgentConfig())
    await store.create(record)
    await store.append("s1", events)
    await store.release("s1")
    await store.open("s1")
    model = ScriptedModel([text("done")])  # only what was never recorded may be asked
    steps = RecordingSteps(records)
    session = executed_again(store, model, steps, events, echo=echo, executor=executor)
    result = await session.run("go", run_id="r1")
    await session.close()
    assert result.status is RunStatus.COMPLETED, result.error
    return session, model, store, executor, steps


async def test_a_write_the_worker_died_in_is_answered_interrupted_and_not_written() -> None:
    events, records = await first_execution()
    cut = cut_at(events, "c2")
    # died inside the write: model 1, echo and model 2 were recorded, the write was not
    _, model, store, executor, steps = await again(events[:cut], records[:3], echo=EchoTool())
    assert len(model.requests) == 1  # only the call after the crash
    assert steps.ran == ["tool", "model"]
    stored = store.events("s1")
    assert [e.run_id for e in stored if isinstance(e, ev.RunStarted)] == ["r1"]
    assert len([e for e in stored if isinstance(e, ev.ToolStarted)]) == 2  # not written twice
    (ended,) = [e for e in stored if isinstance(e, ev.ToolEnded) and e.call_id == "c2"]
    assert ended.content == DIED
    assert ended.metadata == {"interrupted": True}
    assert "note.txt" not in executor.files
    assert stored[: len(events[:cut])] == tuple(events[:cut])  # the trace's own, untouched


async def test_a_read_the_worker_died_in_is_run_again() -> None:
    events, records = await first_execution()
    cut = cut_at(events, "c1")
    echo = EchoTool()
    _, model, store, _, steps = await again(events[:cut], records[:1], echo=echo)
    assert echo.calls == [{"text": "read"}]  # run again
    assert steps.ran == ["tool", "model"]  # the read, then the next model call (the script
    assert len(model.requests) == 1  # of ``again`` answers it with text: the run ends there)
    (ended,) = [e for e in store.events("s1") if isinstance(e, ev.ToolEnded) and e.call_id == "c1"]
    assert ended.content == "read"


async def test_a_run_that_does_not_retrace_its_trace_stops() -> None:
    events, records = await first_execution()
    cut = cut_at(events, "c2")
    other = [
        ev.MessageAdded(at=e.at, message=e.message)
        if not isinstance(e, ev.ToolStarted)
        else ev.ToolStarted(at=e.at, call=call("echo", {"text": "x"}, id="other"))
        for e in events[:cut]
        if isinstance(e, (ev.MessageAdded, ev.ToolStarted))
    ]
    with pytest.raises(AssertionError, match="ReplayDiverged"):
        await again([*events[:1], *other], records[:3], echo=EchoTool())


async def test_a_run_that_does_not_retrace_a_trace_that_ends_writes_nothing() -> None:
    # The whole run is in the trace, run_end included (its worker died before the engine
    # recorded the workflow's result), but the last model call is not in the steps' records
    # and is answered differently now: the execution stops, and the run, which ended once
    # already, is not ended again (its error and a second run_end were written after it).
    events, records = await first_execution()
    store = MemorySessionStore()
    await store.create(SessionRecord(id="s1", created_at=0.0, config=AgentConfig()))
    await store.append("s1", events)
    await store.release("s1")
    await store.open("s1")
    model = ScriptedModel([tools(call("echo", {"text": "x"}, id="c9"))])
    session = executed_again(store, model, RecordingSteps(records[:4]), events)
    result = await session.run("go", run_id="r1")
    await session.close()
    assert result.status is RunStatus.ERROR
    assert "ReplayDiverged" in (result.error or "")
    assert store.events("s1") == tuple(events)  # nothing written: it ended once, as recorded


async def test_a_run_that_does_not_retrace_a_trace_that_stops_short_ends_in_error_once() -> None:
    # The dead worker's trace stops inside the run, and holds a call this execution does not
    # make: it ends the run, once, with its error after what the trace holds (it wrote no end
    # at all when each event emitted after the divergence consumed one the trace held).
    events, records = await first_execution()
    cut = cut_at(events, "c2")
    trace = [
        ev.ToolStarted(at=e.at, call=call("echo", {"text": "x"}, id="other"))
        if isinstance(e, ev.ToolStarted) and e.call.id == "c1"
        else e
        for e in events[:cut]
    ]
    store = MemorySessionStore()
    await store.create(SessionRecord(id="s1", created_at=0.0, config=AgentConfig()))
    await store.append("s1", trace)
    session = executed_again(store, ScriptedModel([]), RecordingSteps(records[:3]), trace)
    result = await session.run("go", run_id="r1")
    await session.close()
    stored = store.events("s1")
    assert result.status is RunStatus.ERROR
    assert "ReplayDiverged" in (result.error or "")
    assert stored[:cut] == tuple(trace)
    # the call the recorded answer made is answered, then the error and the run's one end
    assert [e.kind for e in stored[cut:]] == ["message", "error", "run_end"]
    assert [e.status for e in stored if isinstance(e, ev.RunEnded)] == [RunStatus.ERROR]


class HandedOver(RecordingSteps):
    """The engine's steps of an execution whose run is handed to another (its worker taken
    for dead) before its step number ``at`` is recorded."""

    def __init__(self, at: int) -> None:
        super().__init__()
        self.at = at

    async def once(self, name: str, run: Callable[[], Awaitable[T]]) -> T:
        if len(self.records) + 1 == self.at:
            await run()  # done, but its record is refused: another execution owns the run
            raise RunSuperseded("another execution owns it now")
        return await super().once(name, run)


async def test_an_execution_the_run_was_handed_from_writes_nothing_more() -> None:
    # Two executions at once: the first loses the run at its second model call and stops
    # without an error or a run_end of its own; the owner retraces what it wrote and ends the
    # run, once, completed (it ended in error, and twice, when the first wrote its end).
    store = MemorySessionStore()
    first = Session(
        agent(EchoTool()),
        model=ScriptedModel(SCRIPT),
        executor=MemoryExecutor(),
        clock=FakeClock(),
        store=store,
        session_id="s1",
        steps=(stale := HandedOver(at=3)),
    )
    result = await first.run("go", run_id="r1")
    await first.close()
    assert result.status is RunStatus.ERROR
    left = list(store.events("s1"))
    assert [e.kind for e in left][-1] == "llm_start"  # where it stopped: nothing after
    await store.open("s1")
    owner = executed_again(store, ScriptedModel(SCRIPT[1:]), RecordingSteps(stale.records), left)
    result = await owner.run("go", run_id="r1")
    await owner.close()
    assert result.status is RunStatus.COMPLETED, result.error
    stored = store.events("s1")
    assert stored[: len(left)] == tuple(left)
    assert [e.status for e in stored if isinstance(e, ev.RunEnded)] == [RunStatus.COMPLETED]
    assert [e.run_id for e in stored if isinstance(e, ev.RunStarted)] == ["r1"]


async def test_a_recorded_overflow_is_raised_again_as_an_overflow() -> None:
    from rho_domain.errors import ContextLengthExceeded
    from rho_domain.loop.durable_steps import RecordedStream, SteppedModel
    from rho_domain.model import ModelRequest

    recorded = RecordedStream((), ("ContextLengthExceeded", "too long: 9000 > 8192"))
    model = ScriptedModel([])  # never asked: the step is recorded
    stepped = SteppedModel(model, RecordingSteps([("model", recorded)]))
    with pytest.raises(ContextLengthExceeded, match="too long"):
        async for _ in stepped.stream(ModelRequest(model="m", system="", messages=())):
            pass
    assert model.requests == []


async def test_a_model_step_records_one_fragment_per_run_and_replays_the_same_message() -> None:
    from rho_adapters.fakes.scripted_model import Turn
    from rho_domain.loop.durable_steps import RecordedStream, SteppedModel
    from rho_domain.loop.streaming import Assembly, consume_stream
    from rho_domain.model import ModelRequest, ReasoningChunk, TextChunk

    answer = "fifty small deltas make one answer " * 3
    turn = Turn(
        text=answer, reasoning="think", tool_calls=(call("echo", {}, id="c9"),), chunk_size=2
    )
    request = ModelRequest(model="m", system="", messages=())

    async def assembled(steps: RecordingSteps, script: list[Turn]) -> Assembly:
        assembly = Assembly()

        async def emit(_: ev.Event) -> None:
            return None

        stepped = SteppedModel(ScriptedModel(script), steps)
        await consume_stream(stepped, request, assembly, emit, FakeClock())
        return assembly

    first = RecordingSteps()
    live = await assembled(first, [turn])
    ((name, kept),) = first.records
    assert name == "model"
    assert isinstance(kept, RecordedStream)
    texts = [e for e in kept.events if isinstance(e, TextChunk | ReasoningChunk)]
    assert texts == [ReasoningChunk("think"), TextChunk(answer)]  # not one per delta
    replayed = await assembled(RecordingSteps(first.records), [])  # the model is not asked
    assert replayed.message() == live.message()
    assert replayed.message().text == answer


class _DeadClock(FakeClock):
    """A clock whose ``now()`` fails from the first call on."""

    def now(self) -> float:
        raise OSError("no time source")


async def test_a_clock_failure_is_no_step_of_a_replayed_run() -> None:
    """Before: a ``ClockError`` event (the session's clock failed, said once in the trace) was
    matched against the trace like a step of the run. A trace holding one, retraced with a
    working clock, diverged at it ("emitted message where its trace holds error"); a clock
    failing during the replay emitted one where the trace held the next step, and diverged.
    Now the recorded one is passed over and a new one is said after the replay."""
    events, records = await first_execution()
    cut = cut_at(events, "c2")
    failed = ev.ErrorOccurred(at=events[1].at, error_type="ClockError", message="it failed")
    trace = [*events[:2], failed, *events[2:cut]]
    _, model, store, _, _ = await again(trace, records[:3], echo=EchoTool())
    assert len(model.requests) == 1
    assert store.events("s1")[: len(trace)] == tuple(trace)
    for replay in (events[:cut], trace):  # the clock fails in the replay, and in both
        store = MemorySessionStore()
        await store.create(SessionRecord(id="s1", created_at=0.0, config=AgentConfig()))
        await store.append("s1", replay)
        session = Session(
            agent(EchoTool()),
            model=ScriptedModel([text("done")]),
            executor=MemoryExecutor(),
            clock=_DeadClock(),
            store=store,
            session_id="s1",
            state=State(),
            created=True,
            steps=RecordingSteps(records[:3]),
            replay=replay,
        )
        result = await session.run("go", run_id="r1")
        await session.close()
        assert result.status is RunStatus.COMPLETED, result.error
        after = store.events("s1")[len(replay) :]
        said = [e for e in after if isinstance(e, ev.ErrorOccurred)]
        assert [e.error_type for e in said] == ["ClockError"], after
        assert "raised OSError: no time source in now()" in said[0].message
