"""Telemetry numbers from a scripted run with known timings (fake clock), and the price table
feeding the cost budget when the server reports no cost."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

import attrs
import pytest
from domain_support import WriteNoteTool

from rho_adapters.fakes import FakeClock, MemoryExecutor, MemorySessionStore, ScriptedApprover
from rho_adapters.fakes.scripted_model import ScriptedModel, Turn, call
from rho_domain.agent import Agent
from rho_domain.config import AgentConfig, Budget
from rho_domain.loop.session import Session
from rho_domain.messages import ToolCall, Usage
from rho_domain.model import (
    ModelRequest,
    RetryNotice,
    StreamEvent,
    StreamFinished,
    TextChunk,
    ToolCallReady,
    UsageReport,
)
from rho_domain.permissions import builtin_profile
from rho_domain.ports.model import ChatModel
from rho_domain.pricing import ModelPrice, PriceTable
from rho_domain.run import RunStatus
from rho_domain.telemetry import session_telemetry
from rho_domain.tools.base import READ_ONLY, ToolContext, ToolHandler, ToolOutput, ToolPolicy
from rho_domain.tools.registry import ToolRegistry


@attrs.frozen(kw_only=True)
class TimedTurn:
    wait_first: float  # seconds before the first piece of the answer
    wait_rest: float  # seconds after it, until the stream finishes
    text: str = ""
    calls: tuple[ToolCall, ...] = ()
    usage: Usage | None = None
    retries: int = 0


class TimedModel(ChatModel):
    """The model side of the port with known timings: it moves the fake clock as it streams."""

    def __init__(self, clock: FakeClock, turns: Sequence[TimedTurn]) -> None:
        self.clock = clock
        self.turns = list(turns)

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        return self._play(self.turns.pop(0))

    async def _play(self, turn: TimedTurn) -> AsyncIterator[StreamEvent]:
        for attempt in range(turn.retries):
            yield RetryNotice(delay=1.0, reason="429", attempt=attempt + 2, attempts=3)
        self.clock.advance(turn.wait_first)
        yield TextChunk(turn.text or " ")
        self.clock.advance(turn.wait_rest)
        for tool_call in turn.calls:
            yield ToolCallReady(tool_call)
        if turn.usage is not None:
            yield UsageReport(turn.usage)
        yield StreamFinished("tool_calls" if turn.calls else "stop")

    async def aclose(self) -> None:
        return None


class WaitTool(ToolHandler):
    """Takes ``seconds`` of fake time and answers ``out``."""

    name = "wait"
    description = "Wait."
    parameters: Mapping[str, Any] = {"type": "object", "properties": {"seconds": {}, "out": {}}}

    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock

    def policy_for(self, arguments: Mapping[str, Any]) -> ToolPolicy:
        return READ_ONLY

    async def handle(self, arguments: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
        self.clock.advance(float(arguments["seconds"]))
        return ToolOutput(content=str(arguments["out"]))


PRICES = PriceTable({"m-1": ModelPrice(input=2.0, output=10.0, cached_input=0.5, taken="x")})


def _session(
    model: ChatModel, clock: FakeClock, tools: Sequence[ToolHandler], **kw: Any
) -> Session:
    profile = builtin_profile(kw.pop("profile", "eval"))
    agent = Agent(
        config=AgentConfig(model="m-1", profile=profile, budget=kw.pop("budget", Budget())),
        profile=profile,
        registry=ToolRegistry(tools),
        system_prompt="test",
        prices=kw.pop("prices", PRICES),
    )
    return Session(
        agent, model=model, executor=MemoryExecutor(), clock=clock, store=MemorySessionStore(), **kw
    )


async def test_turn_and_tool_numbers_come_from_the_trace() -> None:
    clock = FakeClock()
    usage1 = Usage(input_tokens=1000, output_tokens=50, cached_tokens=400, reasoning_tokens=20)
    usage2 = Usage(input_tokens=1200, output_tokens=30, cost_usd=0.5)  # the server's cost wins
    calls = (
        call("wait", {"seconds": 1.5, "out": "héllo"}, id="c1"),
        call("wait", {"seconds": 0.25, "out": ""}, id="c2"),
    )
    model = TimedModel(
        clock,
        [
            TimedTurn(wait_first=0.4, wait_rest=0.6, calls=calls, usage=usage1, retries=2),
            TimedTurn(wait_first=0.1, wait_rest=0.2, text="done", usage=usage2),
        ],
    )
    session = _session(model, clock, [WaitTool(clock)])
    result = await session.run("go")
    assert result.status is RunStatus.COMPLETED
    events = _trace(session)

    stats = session_telemetry(events, session_id=session.id)
    (run,) = stats.runs
    first, second = run.turns
    assert (first.call_index, first.model, first.finish_reason) == (1, "m-1", "tool_calls")
    assert first.first_output_after == pytest.approx(0.4)
    assert first.duration == pytest.approx(1.0)
    assert first.retries == 2
    # 600 uncached at 2.0, 400 cached at 0.5, 50 out at 10.0 per million
    assert first.usage.cost_usd == pytest.approx((600 * 2.0 + 400 * 0.5 + 50 * 10.0) / 1e6)
    assert first.usage.reasoning_tokens == 20
    assert second.first_output_after == pytest.approx(0.1)
    assert second.duration == pytest.approx(0.3)
    assert second.usage.cost_usd == 0.5
    assert (second.retries, second.finish_reason) == (0, "stop")

    c1, c2 = run.tools
    assert (c1.call_id, c1.name, c1.outcome) == ("c1", "wait", "ok")
    assert c1.duration == pytest.approx(1.5)
    assert c1.output_bytes == len("héllo".encode())
    assert c2.duration == pytest.approx(0.25)
    assert stats.tool_time == pytest.approx(1.75)
    assert stats.model_time == pytest.approx(1.3)
    assert run.status == "completed"
    assert run.duration == pytest.approx(1.0 + 1.75 + 0.3)
    assert stats.usage.input_tokens == 2200
    assert first.usage.cost_usd is not None
    assert stats.usage.cost_usd == pytest.approx(first.usage.cost_usd + 0.5)


async def test_blocked_rejected_and_approved_calls() -> None:
    clock = FakeClock()
    turns = [
        Turn(tool_calls=(call("write", {"path": "a", "content": "x"}, id="w1"),)),
        Turn(tool_calls=(call("write", {"path": "b", "content": "y"}, id="w2"),)),
        Turn(text="ok"),
    ]
    approver = ScriptedApprover([True, False])
    session = _session(
        ScriptedModel(turns), clock, [WriteNoteTool()], profile="developer", approver=approver
    )
    await session.run("write twice")
    events = _trace(session)
    tools = session_telemetry(events).tools
    assert [(t.call_id, t.outcome, t.approval) for t in tools] == [
        ("w1", "ok", "approved"),
        ("w2", "rejected", "rejected"),
    ]


async def test_an_approval_answered_between_runs_is_joined_to_its_call() -> None:
    clock = FakeClock()
    turns = [
        Turn(tool_calls=(call("write", {"path": "a", "content": "x"}, id="w1"),)),
        Turn(text="ok"),
    ]
    session = _session(ScriptedModel(turns), clock, [WriteNoteTool()], profile="developer")
    first = await session.run("write")
    assert first.status is RunStatus.AWAITING_APPROVAL
    session.resolve_approval("w1", True)
    await session.run()
    events = _trace(session)
    stats = session_telemetry(events)
    assert [r.status for r in stats.runs] == ["awaiting_approval", "completed"]
    (tool,) = stats.tools
    assert (tool.run_id, tool.outcome, tool.approval) == (stats.runs[1].run_id, "ok", "approved")


def test_an_old_trace_without_the_new_fields_still_gives_numbers() -> None:
    from rho_adapters.codec import event_from_dict

    line = {
        "v": 1,
        "kind": "llm_end",
        "at": 5.0,
        "model": "m",
        "call_index": 1,
        "usage": {"input_tokens": 3},
        "finish_reason": "stop",
        "duration": 2.0,
    }
    start = {"v": 1, "kind": "llm_start", "at": 3.0, "model": "m", "call_index": 1}
    start["context_tokens"] = 0
    events = [event_from_dict(start), event_from_dict(line)]
    (turn,) = session_telemetry(events).turns
    assert (turn.duration, turn.first_output_after, turn.retries) == (2.0, None, 0)
    assert turn.queue_wait is None


def test_a_calls_queue_wait_for_a_request_slot_is_in_its_turn() -> None:
    from rho_adapters.codec import event_from_dict

    start = {"v": 1, "kind": "llm_start", "at": 3.0, "model": "m", "call_index": 1}
    start["context_tokens"] = 0
    end = {"v": 1, "kind": "llm_end", "at": 5.0, "model": "m", "call_index": 1}
    end.update(usage={"input_tokens": 3}, finish_reason="stop", duration=2.0, queue_wait=0.75)
    (turn,) = session_telemetry([event_from_dict(start), event_from_dict(end)]).turns
    assert turn.queue_wait == 0.75


@pytest.mark.parametrize("reports_usage", [True, False], ids=["usage-no-cost", "no-usage"])
async def test_the_cost_budget_fires_from_the_price_table(reports_usage: bool) -> None:
    """A server that reports tokens but no cost, and one that reports nothing (the estimate is
    priced): both reach ``max_cost_usd``."""
    clock = FakeClock()
    usage = {"input_tokens": 100_000, "output_tokens": 1_000} if reports_usage else {}
    looping = [
        Turn(tool_calls=(call("wait", {"seconds": 0, "out": "x" * 40_000}),), **_u(usage))
        for _ in range(5)
    ]
    session = _session(
        ScriptedModel(looping), clock, [WaitTool(clock)], budget=Budget(max_cost_usd=0.0001)
    )
    result = await session.run("y" * 40_000)
    assert result.status is RunStatus.BUDGET_EXCEEDED
    assert result.usage.cost_usd is not None
    assert result.usage.cost_usd >= 0.0001


async def test_without_a_price_the_budget_cannot_fire_and_cost_stays_unknown() -> None:
    clock = FakeClock()
    turns = [Turn(text="hi", usage=Usage(input_tokens=10**6, output_tokens=10**6))]
    session = _session(
        ScriptedModel(turns), clock, [], budget=Budget(max_cost_usd=0.0001), prices=None
    )
    result = await session.run("x")
    assert result.status is RunStatus.COMPLETED
    assert result.usage.cost_usd is None


def _trace(session: Session) -> tuple[Any, ...]:
    assert isinstance(session.store, MemorySessionStore)
    return session.store.events(session.id)


def _u(usage: Mapping[str, Any]) -> dict[str, Any]:
    return {"usage": Usage(**usage)} if usage else {}


def test_price_lookup_rules() -> None:
    table = PriceTable(
        {"gpt-4o": ModelPrice(input=1, output=2), "gpt-4o-mini": ModelPrice(input=3, output=4)}
    )
    assert table.lookup("gpt-4o") == ModelPrice(input=1, output=2)
    assert table.lookup("openai/gpt-4o-mini") == ModelPrice(input=3, output=4)
    assert table.lookup("gpt-4o-mini-2024-07-18") == ModelPrice(input=3, output=4)
    assert table.lookup("gpt-4o-2024-08-06") == ModelPrice(input=1, output=2)
    assert table.lookup("gpt-4") is None
    assert table.lookup("gpt-4omega") is None
