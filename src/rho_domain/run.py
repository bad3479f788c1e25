"""RunResult and run statuses."""

from __future__ import annotations

from enum import StrEnum

import attrs

from rho_domain.messages import ToolCall, Usage


class RunStatus(StrEnum):
    COMPLETED = "completed"
    CANCELLED = "cancelled"
    MAX_TURNS = "max_turns"
    BUDGET_EXCEEDED = "budget_exceeded"
    AWAITING_APPROVAL = "awaiting_approval"
    ERROR = "error"


@attrs.frozen(kw_only=True)
class PendingApproval:
    call: ToolCall
    reason: str


@attrs.frozen(kw_only=True)
class RunResult:
    """The outcome of one ``Session.run``.

    ``text`` is the final answer (the text of the last model turn). ``usage`` counts this run
    only; ``session_usage`` the whole session. ``error`` is set when status is ERROR (and may
    explain BUDGET_EXCEEDED). ``pending`` lists the call waiting for approval.
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

    @property
    def ok(self) -> bool:
        return self.status is RunStatus.COMPLETED
