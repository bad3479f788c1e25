"""One run's running tally and the budget checks made against it."""

from __future__ import annotations

from typing import Any

import attrs

from rho_domain.config import Budget
from rho_domain.messages import Usage


@attrs.define
class RunTally:
    """What one run has counted so far; ``RunResult`` is built from it when the run ends.

    ``started`` is the clock's monotonic time; ``calls`` counts model calls; ``text`` is the
    final answer once a turn ends without tool calls; ``reason`` says why the loop stopped
    when no exception does (a stuck loop), and becomes the result's ``error``.
    """

    id: str
    started: float
    usage: Usage = Usage()
    child_usage: Usage = Usage()  # sub-agents' usage: counted against this run's budget
    text: str = ""
    calls: int = 0
    reason: str | None = None
    output: Any = None  # the final answer parsed against the output schema
    corrected: bool = False  # the one corrective retry of the output schema was used


def remaining_budget(budget: Budget, spent: Usage) -> Budget:
    """What is left of ``budget`` after ``spent`` (for a sub-agent: its parent's remainder).
    Unlimited fields stay unlimited; the wall-clock limit is kept as it is."""

    def left(limit: int | None, used: int) -> int | None:
        return None if limit is None else max(limit - used, 0)

    return attrs.evolve(
        budget,
        max_input_tokens=left(budget.max_input_tokens, spent.input_tokens),
        max_output_tokens=left(budget.max_output_tokens, spent.output_tokens),
        max_total_tokens=left(budget.max_total_tokens, spent.total_tokens),
        max_cost_usd=(
            None
            if budget.max_cost_usd is None
            else max(budget.max_cost_usd - (spent.cost_usd or 0.0), 0.0)
        ),
    )


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
