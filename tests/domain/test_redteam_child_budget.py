"""A sub-agent's budget is what its parent has left, in every limit the parent has.

Red-team pass (redwrite15): a child got the remainder of the run's tokens and cost only. Its
session limits (model calls, tool calls, cost) were the parent's whole caps again, for a
session of its own that starts at zero, and the run's tool-call limit was the whole limit
again; what it spent counted against none of them. A parent allowed 2 model calls made 4,
and a run allowed 3 tool calls made 7."""

from __future__ import annotations

from domain_support import EchoTool, make_session

from rho_adapters.fakes import Turn, call, text, tools
from rho_domain.config import Budget
from rho_domain.messages import ToolResultMessage, Usage
from rho_domain.run import RunStatus
from rho_domain.tools.delegate import DelegateTool


def _echo(n: int) -> Turn:
    return tools(call("echo", {"text": str(n)}, id=f"e{n}"))


def _delegate(n: int) -> Turn:
    return tools(call("delegate", {"instruction": f"task {n}"}, id=f"d{n}"))


async def test_the_sessions_model_calls_hold_the_child_too() -> None:
    script = [_delegate(1), _echo(1), _echo(2), _echo(3), text("child"), text("parent")]
    session = make_session(
        script, tools=[EchoTool(), DelegateTool()], budget=Budget(session_max_turns=2)
    )
    result = await session.run("go")
    assert result.status is RunStatus.BUDGET_EXCEEDED
    assert len(session.model.requests) == 2  # type: ignore[attr-defined]


async def test_the_runs_tool_calls_hold_every_child() -> None:
    # Two delegations in a row, each child echoing until it is stopped: the run may make 3
    # tool calls, its children's included (the two delegate calls are two of them).
    script = [_delegate(1), *(_echo(n) for n in range(1, 6)), text("child 1")]
    script += [_delegate(2), *(_echo(n) for n in range(6, 11)), text("child 2"), text("done")]
    echo = EchoTool()
    session = make_session(script, tools=[echo, DelegateTool()], budget=Budget(max_tool_calls=3))
    result = await session.run("go")
    assert result.status is RunStatus.BUDGET_EXCEEDED
    assert session.state.tool_calls + len(echo.calls) <= 3


async def test_the_sessions_cost_holds_the_child_too() -> None:
    spent = Usage(input_tokens=1, output_tokens=1, cost_usd=0.4)
    script = [
        Turn(tool_calls=_delegate(1).tool_calls, usage=spent),
        *(Turn(tool_calls=_echo(n).tool_calls, usage=spent) for n in range(1, 6)),
        Turn(text="child", usage=spent),
        Turn(text="parent", usage=spent),
    ]
    session = make_session(
        script, tools=[EchoTool(), DelegateTool()], budget=Budget(session_max_cost_usd=1.0)
    )
    await session.run("go")
    # 0.4 spent by the parent's first call; 1.0 allowed: at most two more calls of 0.4
    assert len(session.model.requests) <= 3  # type: ignore[attr-defined]


async def test_no_child_starts_when_a_limit_is_spent() -> None:
    # The parent's first call spends its 10 tokens and asks for a sub-agent: nothing is left
    # for one (before: a budget of 0 tokens, which Budget refuses, 'ConfigError').
    script = [
        Turn(tool_calls=_delegate(1).tool_calls, usage=Usage(input_tokens=8, output_tokens=4)),
        text("child"),
        text("parent"),
    ]
    session = make_session(
        script, tools=[EchoTool(), DelegateTool()], budget=Budget(max_total_tokens=10)
    )
    result = await session.run("go")
    assert result.status is RunStatus.BUDGET_EXCEEDED
    assert len(session.model.requests) == 1  # type: ignore[attr-defined]
    (answer,) = [
        m.content
        for m in session.state.messages
        if isinstance(m, ToolResultMessage) and m.call_id == "d1"
    ]
    assert "no budget is left for a sub-agent (max_total_tokens spent)" in answer


async def test_the_runs_max_turns_hold_the_child_too() -> None:
    # max_turns: 3 model calls in the run. The child got the whole 3 again, for its own run,
    # and its calls counted against none of the parent's: 1 + 3 + 1 = 5 model calls.
    script = [_delegate(1), *(_echo(n) for n in range(1, 6)), text("child"), text("parent")]
    session = make_session(script, tools=[EchoTool(), DelegateTool()], max_turns=3)
    result = await session.run("go")
    assert result.status is RunStatus.MAX_TURNS
    assert len(session.model.requests) == 3  # type: ignore[attr-defined]
