"""The events of one tool call: approval asked and answered, started, ended or blocked.

``ApprovalRequested`` / ``ApprovalResolved`` record a human's part, ``ToolStarted`` /
``ToolEnded`` a call that ran (its result message follows), ``ToolBlocked`` one that did not
(``by``: the profile, the user or a hook). Each has a stable ``kind`` tag.
``rho_domain.events`` joins them to ``Event``: import them from there.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Literal

import attrs

from rho_domain.event_view import SeedEventView
from rho_domain.messages import ToolCall

BlockedBy = Literal["policy", "user", "hook"]


@attrs.frozen(kw_only=True)
class ToolStarted(SeedEventView):
    """A tool call passed policy and approval and began to run.

    Attributes:
        at: Wall-clock time.
        call: The call as the model made it.
    """

    kind: ClassVar[str] = "tool_start"
    at: float
    call: ToolCall


@attrs.frozen(kw_only=True)
class ToolEnded(SeedEventView):
    """A tool call finished, failed or was cancelled; its result message follows.

    Attributes:
        at: Wall-clock time.
        call_id: The call's id.
        tool_name: The tool's name.
        content: What the model reads (already truncated).
        is_error: True when the call failed (the model is told so).
        duration: Seconds on the monotonic clock.
        metadata: Details for UIs and traces (exit code, truncation, child session...).
    """

    kind: ClassVar[str] = "tool_end"
    at: float
    call_id: str
    tool_name: str
    content: str
    is_error: bool
    duration: float
    metadata: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class ToolBlocked(SeedEventView):
    """A call that did not run.

    Attributes:
        at: Wall-clock time.
        call: The call.
        by: ``"policy"`` (denied by the profile), ``"user"`` (rejected by a human) or
            ``"hook"`` (denied by a before-tool hook, or its hook failed).
        reason: Why, in words.
    """

    kind: ClassVar[str] = "tool_blocked"
    at: float
    call: ToolCall
    by: BlockedBy
    reason: str


@attrs.frozen(kw_only=True)
class ApprovalRequested(SeedEventView):
    """A call waits for a human.

    With no approver wired, the run ends ``awaiting_approval``.

    Attributes:
        at: Wall-clock time.
        call: The call to approve.
        reason: Why it needs approval (the approval policy's words).
        pending: Every call of the batch that has not run yet, in order.
        child_session_id: Set when ``call`` is a ``delegate`` call whose sub-agent waits:
            the child session, which continues once the parent's call is answered.
        child_call: The sub-agent's call that the answer is really about.
    """

    kind: ClassVar[str] = "approval_requested"
    at: float
    call: ToolCall
    reason: str
    pending: tuple[ToolCall, ...] = ()
    child_session_id: str | None = None
    child_call: ToolCall | None = None


@attrs.frozen(kw_only=True)
class ApprovalResolved(SeedEventView):
    """A human answered an approval (live, or later with ``Session.resolve_approval``).

    Attributes:
        at: Wall-clock time.
        call_id: The call answered.
        tool_name: Its tool (``always`` applies to the tool, not the call).
        approved: True to run it.
        always: Approve this tool for the rest of the session.
        reason: Why the human rejected it (empty when none was given); the model reads it.
    """

    kind: ClassVar[str] = "approval_resolved"
    at: float
    call_id: str
    tool_name: str
    approved: bool
    always: bool = False
    reason: str = ""
