"""One run's running tally and the budget checks made against it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from rho_domain.config import Budget
from rho_domain.messages import Usage
from rho_domain.value_methods import value_eq, value_repr

if TYPE_CHECKING:
    from rho_domain.state import State


@attrs.define
class RunTally:
    """What one run has counted so far; ``RunResult`` is built from it when the run ends.

    ``started`` is the clock's monotonic time; ``calls`` counts model calls; ``text`` is the
    final answer once a turn ends without tool calls; ``reason`` says why the loop stopped
    when no exception does (a stuck loop), and becomes the result's ``error``.
    """

    __repr__ = value_repr
    __eq__ = value_eq

    id: str
    started: float
    usage: Usage = Usage()
    child_usage: Usage = Usage()  # sub-agents' usage: counted against this run's budget
    # sub-agents' model and tool calls in this run, counted against the run's and the
    # session's limits as the run's own are (a sub-agent's session is not the parent's)
    child_calls: int = 0
    child_tools: int = 0
    tools_before: int = 0  # the session's tool calls when this run started
    max_turns: int | None = None  # the run's model calls at most, its sub-agents' included
    text: str = ""
    calls: int = 0
    reason: str | None = None
    output: Any = None  # the final answer parsed against the output schema
    corrected: bool = False  # the one corrective retry of the output schema was used
    cut_at_limit: bool = False  # the last answer stopped at the output limit (length)


def child_budget(
    budget: Budget, tally: RunTally, state: State, elapsed: float
) -> tuple[Budget, str | None]:
    """What a sub-agent started now may spend: what is left of every limit of ``budget``
    (the parent's), the run's and the session's, after what the parent's run, its sub-agents
    and its session's earlier runs spent (``state``: the parent's; ``elapsed``: the run's
    seconds so far). Unlimited fields stay unlimited. The second value describes the limits
    already spent, when one is: then no sub-agent starts (a child session starts counting at
    zero, so the parent's whole cap would be the child's again)."""
    spent = tally.usage + tally.child_usage
    run_tools = state.tool_calls - tally.tools_before + tally.child_tools
    calls_before, tools_before, cost_before = state.earlier_children  # earlier runs' children
    session_cost = (state.usage.cost_usd or 0.0) + cost_before + (tally.child_usage.cost_usd or 0.0)
    left: dict[str, Any] = {
        "max_input_tokens": _left(budget.max_input_tokens, spent.input_tokens),
        "max_output_tokens": _left(budget.max_output_tokens, spent.output_tokens),
        "max_total_tokens": _left(budget.max_total_tokens, spent.total_tokens),
        "max_cost_usd": _left(budget.max_cost_usd, spent.cost_usd or 0.0),
        "max_wall_seconds": _left(budget.max_wall_seconds, elapsed),
        "max_tool_calls": _left(budget.max_tool_calls, run_tools),
        "session_max_turns": _left(
            budget.session_max_turns, state.model_calls + calls_before + tally.child_calls
        ),
        "session_max_tool_calls": _left(
            budget.session_max_tool_calls, state.tool_calls + tools_before + tally.child_tools
        ),
        "session_max_wall_seconds": _left(
            budget.session_max_wall_seconds, state.run_seconds + elapsed
        ),
        "session_max_cost_usd": _left(budget.session_max_cost_usd, session_cost),
    }
    if gone := [name for name, rest in left.items() if rest is not None and rest <= 0]:
        return budget, f"no budget is left for a sub-agent ({', '.join(gone)} spent)"
    return attrs.evolve(budget, **left), None


def _left(limit: float | None, used: float) -> float | None:
    """What is left of ``limit`` after ``used`` (an int for int arguments), None: no limit."""
    return None if limit is None else limit - used


def budget_exceeded(budget: Budget, usage: Usage, elapsed: float) -> str | None:
    """The first limit this run has reached, described, or None."""
    checks = (
        (budget.max_input_tokens, usage.input_tokens, "input tokens"),
        (budget.max_output_tokens, usage.output_tokens, "output tokens"),
        (budget.max_total_tokens, usage.total_tokens, "total tokens"),
        (budget.max_cost_usd, usage.cost_usd or 0.0, "USD"),
        (budget.max_wall_seconds, elapsed, "seconds"),
    )
    for limit, spent, what in checks:
        if limit is not None and spent >= limit:
            return f"budget reached: {spent:g} {what} of {limit:g} allowed for this run"
    return None
