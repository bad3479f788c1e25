"""The budget of a run and of its session: which limit is reached, and when time runs out.

``BudgetWatch.start`` takes what the session had spent before the run (model calls, tool
calls, active seconds: ``State`` counts them from the events, so a resumed session counts its
earlier runs too). ``reached`` says, before each model call, which limit the run or the
session has reached; ``deadline`` is the monotonic time at which the wall-time limits (the
run's, or what is left of the session's) run out, which ``RunControl`` races every model call,
tool call and approval against, so a call in progress is stopped there rather than after it.
"""

from __future__ import annotations

import attrs

from rho_domain.config import Budget
from rho_domain.loop.tally import budget_exceeded
from rho_domain.messages import Usage
from rho_domain.state import State
from rho_domain.value_methods import value_eq, value_hash, value_repr


@attrs.frozen(kw_only=True)
class BudgetWatch:
    """One run's view of its budget. ``started`` is the run's start on the monotonic clock;
    the ``*_before`` fields are the session's counts when the run started."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    budget: Budget
    started: float
    tool_calls_before: int = 0
    seconds_before: float = 0.0

    @classmethod
    def start(cls, budget: Budget, state: State, started: float) -> BudgetWatch:
        """The watch of a run starting now (``started``) on ``state``."""
        return cls(
            budget=budget,
            started=started,
            tool_calls_before=state.tool_calls,
            seconds_before=state.run_seconds,
        )

    def deadline(self) -> float | None:
        """When (monotonic) the run must stop for time: its own wall-time limit, or the
        session's minus what its earlier runs used; None without either."""
        ends = []
        if (limit := self.budget.max_wall_seconds) is not None:
            ends.append(self.started + limit)
        if (total := self.budget.session_max_wall_seconds) is not None:
            ends.append(self.started + max(total - self.seconds_before, 0.0))
        return min(ends) if ends else None

    def reached(
        self,
        *,
        own: Usage,
        children: Usage,
        state: State,
        now: float,
        child_calls: int = 0,
        child_tools: int = 0,
    ) -> str | None:
        """The first limit reached, described (what was spent, what is allowed, for the run
        or for the session), or None. ``own`` is this run's model usage, ``children`` its
        sub-agents', and ``child_calls`` and ``child_tools`` their model and tool calls in
        this run; ``state`` is the session's (its usage includes this run's own)."""
        budget, elapsed = self.budget, now - self.started
        if reason := budget_exceeded(budget, own + children, elapsed):
            return reason
        run_tools = state.tool_calls - self.tool_calls_before + child_tools
        if (limit := budget.max_tool_calls) is not None and run_tools >= limit:
            return f"budget reached: {run_tools} tool calls of {limit} allowed for this run"
        # the earlier runs' sub-agents from the trace, this run's from its tally
        calls_before, tools_before, cost_before = state.earlier_children
        session = (
            (
                budget.session_max_turns,
                state.model_calls + calls_before + child_calls,
                "model calls",
            ),
            (
                budget.session_max_tool_calls,
                state.tool_calls + tools_before + child_tools,
                "tool calls",
            ),
            (budget.session_max_wall_seconds, self.seconds_before + elapsed, "seconds"),
            (
                budget.session_max_cost_usd,
                (state.usage.cost_usd or 0.0) + cost_before + (children.cost_usd or 0.0),
                "USD",
            ),
        )
        for cap, spent, what in session:
            if cap is not None and spent >= cap:
                return f"budget reached: {spent:g} {what} of {cap:g} allowed for this session"
        return None
