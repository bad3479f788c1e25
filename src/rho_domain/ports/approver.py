"""Approver: asking a human (or a policy service) whether a tool call may run."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Mapping
from typing import Any, Protocol

import attrs

from rho_domain.messages import ToolCall
from rho_domain.run import PendingApproval, RunResult
from rho_domain.value_methods import value_eq, value_hash, value_repr


@attrs.frozen(kw_only=True)
class ApprovalRequest:
    """A tool call waiting for a decision. ``arguments`` is the parsed JSON (empty if invalid)."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    session_id: str
    call: ToolCall
    arguments: Mapping[str, Any]
    reason: str


@attrs.frozen(kw_only=True)
class ApprovalAnswer:
    """``approved``; ``always`` approves this tool for the rest of the session."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    approved: bool
    always: bool = False
    note: str = ""


class ApprovalInterrupt(Exception):
    """Raised by an approver to leave the decision to someone else, later (out of band).

    Not a ``RhoError``: it is control flow. The call stays pending, the run ends
    ``awaiting_approval``, and ``Session.resolve_approval`` + ``Session.run()`` continue it,
    in this process or another (the pending call is in the trace).

    The library's ``Session.run`` raises it to its caller, as the design documents say, when
    no approver or callback is set and a call needs approval: ``pending`` then holds the
    waiting calls and ``result`` the run's result (status ``awaiting_approval``).
    """

    def __init__(
        self,
        *args: object,
        pending: tuple[PendingApproval, ...] = (),
        result: RunResult | None = None,
    ) -> None:
        super().__init__(*args)
        self.pending = pending
        self.result = result


class Approver(Protocol):
    """Decides on tool calls that the approval policy says need a human."""

    @abstractmethod
    async def decide(self, request: ApprovalRequest) -> ApprovalAnswer:
        """Return the decision. May take as long as a human needs; cancellable.

        An approver that cannot ask (no terminal, closed input) must answer not approved.
        Raise ``ApprovalInterrupt`` to leave the call pending for an answer given out of band.
        """
