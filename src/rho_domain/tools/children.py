"""What a parent session and its child agents pass each other through the ``delegate`` tool.

``ToolContext.delegate`` (a ``Delegator``) runs a child on an instruction and answers with its
``ChildOutcome``; a child that waited for approval is continued through a ``ChildResumer``
with the human's ``ChildAnswer`` (``rho_domain.loop.sub_agents`` provides both, the loop's
``ToolBatch`` calls them). Apart from ``tools.base``: a run that delegates nothing never builds
these classes.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Protocol

import attrs

from rho_domain.messages import Usage
from rho_domain.run import PendingApproval, RunResult
from rho_domain.value_methods import value_eq, value_hash, value_repr


@attrs.frozen(kw_only=True)
class ChildOutcome:
    """How a child agent's run ended, as the ``delegate`` tool reports it. ``pending`` lists
    the child's calls waiting for approval (status ``awaiting_approval``)."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    session_id: str
    status: str
    text: str
    usage: Usage
    error: str | None = None
    pending: tuple[PendingApproval, ...] = ()
    rejected: str = ""
    model_calls: int = 0  # the child's model and tool calls in that run
    tool_calls: int = 0
    # what the child's calls wrote that no human reviewed (``shell.destructive_session``'s
    # paths, an unknown marker for a call that shows none): the parent's policy reads them
    written: tuple[str, ...] = ()

    @classmethod
    def from_result(
        cls,
        result: RunResult,
        *,
        rejected: str = "",
        model_calls: int = 0,
        tool_calls: int = 0,
        written: tuple[str, ...] = (),
    ) -> ChildOutcome:
        """The outcome of the child's ``RunResult``; ``rejected`` describes the child's call
        a human rejected in that run, if one was; ``model_calls`` and ``tool_calls`` are
        those the run made; ``written``, what the child's unreviewed calls wrote."""
        return cls(
            session_id=result.session_id,
            status=result.status.value,
            text=result.text,
            usage=result.usage,
            error=result.error,
            pending=result.pending,
            rejected=rejected,
            model_calls=model_calls,
            tool_calls=tool_calls,
            written=written,
        )


class Delegator(Protocol):
    """Runs a child agent on one instruction (``Session`` provides it to the delegate tool)."""

    def __call__(self, instruction: str, *, full_context: bool) -> Awaitable[ChildOutcome]:
        """Run a child on ``instruction`` (with the parent's settled history when
        ``full_context``) and return how it ended; never raises for the child's failures."""


@attrs.frozen(kw_only=True)
class ChildAnswer:
    """A human's answer to a sub-agent's waiting call, given through its parent."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    session_id: str
    call_id: str
    approved: bool
    always: bool = False
    reason: str = ""
    # the digest of the sub-agent's call as the parent recorded it (and its answerer was
    # shown it: ``call_digest(tool, arguments)``): the sub-agent's session, reopened from its
    # own trace, must hold that call; an MCP tool's shape the sub-agent compares itself
    digest: str | None = None


class ChildResumer(Protocol):
    """Continues a sub-agent that waited for approval (``Session`` provides it)."""

    def __call__(self, answer: ChildAnswer) -> Awaitable[ChildOutcome]:
        """Record ``answer`` in the child session and run it on; return how it ended.
        Raises SessionStateError when the child cannot be found or is not waiting."""
