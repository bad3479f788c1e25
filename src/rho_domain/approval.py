"""The approval policy: a pure decision per tool call.

``decide`` never asks anyone. It says whether a call may run (Allowed), must be approved by a
human first (RequiresApproval), or must not run at all (Denied). Asking is the Approver port's
job; when no approver is wired, a call that requires approval is *not* run: the session stops
with status ``awaiting_approval`` (fail closed).
"""

from __future__ import annotations

from collections.abc import Set

import attrs

from rho_domain.messages import ToolCall
from rho_domain.permissions import ApprovalMode, PermissionProfile
from rho_domain.tools.base import ToolPolicy


@attrs.frozen
class Allowed:
    """The call may run; ``reason`` says why when it is not the default."""

    reason: str = ""


@attrs.frozen
class RequiresApproval:
    """The call waits for a human; ``reason`` is shown to them."""

    reason: str


@attrs.frozen
class Denied:
    """The call must not run; ``reason`` is reported to the model."""

    reason: str


Decision = Allowed | RequiresApproval | Denied


def decide(
    profile: PermissionProfile,
    call: ToolCall,
    policy: ToolPolicy | None,
    *,
    auto_approve: bool = False,
    always_allowed: Set[str] = frozenset(),
) -> Decision:
    """Decide on one call.

    ``policy`` is None when the tool is unknown or its arguments are invalid: such a call
    cannot run anything (the registry answers it with an error), so it is allowed through.
    Dangerous patterns in the arguments require approval even for tools approved "always".
    """
    if call.name in profile.denied_tools:
        return Denied(f"the {profile.name!r} profile does not allow the {call.name!r} tool")
    if policy is None or profile.approval is ApprovalMode.NONE or auto_approve:
        return Allowed()
    pattern = _dangerous_pattern(profile, call)
    if pattern is not None:
        return RequiresApproval(f"the arguments contain the dangerous pattern {pattern!r}")
    if call.name in always_allowed:
        return Allowed("approved for the rest of the session")
    match profile.approval:
        case ApprovalMode.ALL:
            return RequiresApproval(f"the {profile.name!r} profile asks before every tool call")
        case ApprovalMode.DANGEROUS if policy.dangerous:
            return RequiresApproval(f"{call.name!r} can change things outside the conversation")
        case ApprovalMode.GRANULAR if call.name in profile.approval_required_tools:
            return RequiresApproval(f"the {profile.name!r} profile asks before {call.name!r}")
    return Allowed()


def _dangerous_pattern(profile: PermissionProfile, call: ToolCall) -> str | None:
    text = call.arguments.lower()
    for pattern in profile.dangerous_patterns:
        if pattern.lower() in text:
            return pattern
    return None
