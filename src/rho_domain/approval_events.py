"""The events of a tool call that waits for a human or does not run: approval asked and
answered (``ApprovalRequested`` / ``ApprovalResolved``), a call blocked (``ToolBlocked``,
``by`` the profile, the user or a hook).

A run whose calls all pass emits none of them, so they are built by the first process that
emits or reads one (``rho_domain.events`` names them lazily, PEP 562). Each has a stable
``kind`` tag; ``rho_domain.events`` joins them to ``Event``: import them from there.
"""

from __future__ import annotations

from typing import ClassVar, Literal

import attrs

from rho_domain.event_view import SeedEventView
from rho_domain.messages import ToolCall
from rho_domain.value_methods import value_eq, value_hash, value_repr

BlockedBy = Literal["policy", "user", "hook"]


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

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

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
        shown: For a tool a source serves (an MCP server's), the digest of the tool as it
            was shown when the call was asked about (``call_digest.tool_digest``: name,
            description, input schema); empty for the agent's own tools. An answer, and an
            "always", holds for the tool so shown: the call asked again under another shape
            records another event, which takes back an approval given before.
        place: The working directory the call was to run in when it was asked about (the
            session's executor's ``working_dir``; empty in traces written before it was
            recorded): an answer holds for the call run there (``rho_domain.call_digest``).
        reviews: The ids of the session's earlier writing calls whose every file the reason
            names (``shell.destructive_session``): approved, they are reviewed (``State``
            drops them from ``unreviewed_writes``); set by the loop, never read from the
            reason's text, which quotes the model's words.
    """

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    kind: ClassVar[str] = "approval_requested"
    at: float
    call: ToolCall
    reason: str
    pending: tuple[ToolCall, ...] = ()
    child_session_id: str | None = None
    child_call: ToolCall | None = None
    shown: str = ""
    place: str = ""
    reviews: tuple[str, ...] = ()


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
        digest: The digest of the call the answerer was shown (``rho_domain.call_digest``),
            which the answer carried and was checked against; None for an answer that carried
            none (in-process, a denial) and in traces written before the field (a new
            optional field: older readers skip it, the trace format is unchanged).
    """

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    kind: ClassVar[str] = "approval_resolved"
    at: float
    call_id: str
    tool_name: str
    approved: bool
    always: bool = False
    reason: str = ""
    digest: str | None = None
