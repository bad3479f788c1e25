"""One run's vocabulary: its statuses, its running tally, its result, its budget check."""

from __future__ import annotations

import uuid
from typing import Any

import attrs

from rho_domain.config import Budget
from rho_domain.events import Event
from rho_domain.messages import ToolCall, Usage
from rho_domain.run_status import RunStatus as RunStatus  # re-exported: its old home


def new_id() -> str:
    """A short random id for a session or a run."""
    return uuid.uuid4().hex[:12]


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


@attrs.frozen(kw_only=True)
class PendingApproval:
    """A call waiting for a human when the run ended ``awaiting_approval``."""

    call: ToolCall
    reason: str


@attrs.frozen(kw_only=True)
class RunResult:
    """The outcome of one ``Session.run``.

    ``text`` is the final answer (the text of the last model turn). ``usage`` counts this run
    only; ``session_usage`` the whole session. ``error`` is set when status is ERROR (and may
    explain BUDGET_EXCEEDED). ``pending`` lists the call waiting for approval. ``events`` is
    every event of the run when asked for (``rho_entry.Session.run(..., record_events=True)``),
    else empty: keeping them costs memory a long run may not want to spend. ``output`` is
    the final answer parsed as JSON when the agent has an ``output_schema`` (and it matched),
    else None.
    """

    session_id: str
    run_id: str
    status: RunStatus
    text: str
    usage: Usage
    session_usage: Usage
    error: str | None = None
    error_type: str | None = None
    pending: tuple[PendingApproval, ...] = ()
    events: tuple[Event, ...] = ()
    output: Any = None

    @property
    def ok(self) -> bool:
        """True when the run completed."""
        return self.status is RunStatus.COMPLETED


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
