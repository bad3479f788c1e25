"""The approval policy: a pure decision per tool call.

``decide`` never asks anyone. It says whether a call may run (Allowed), must be approved by a
human first (RequiresApproval), or must not run at all (Denied). Asking is the Approver port's
job; when no approver is wired, a call that requires approval is *not* run: the session stops
with status ``awaiting_approval`` (fail closed).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Set
from typing import TYPE_CHECKING, Any

import attrs

from rho_domain.errors import ToolArgumentsError
from rho_domain.lazy_names import lazy_names
from rho_domain.messages import ToolCall
from rho_domain.permissions import ApprovalMode, PermissionProfile
from rho_domain.tools.base import ToolPolicy
from rho_domain.tools.prepared import decode_arguments as parse_arguments
from rho_domain.value_methods import value_eq, value_hash, value_repr

_ASKS = "rho_domain.approval_asks"


@attrs.frozen
class Allowed:
    """The call may run; ``reason`` says why when it is not the default."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    reason: str = ""


if TYPE_CHECKING:
    from rho_domain.approval_asks import Denied as Denied
    from rho_domain.approval_asks import RequiresApproval as RequiresApproval

    Decision = Allowed | RequiresApproval | Denied

# A plain run's calls are allowed: the other two outcomes (and the joined ``Decision``) are
# built with the first call that is denied or asks a human (~3 M instructions of a one-shot).
_named_later = lazy_names(__name__, dict.fromkeys(("Denied", "RequiresApproval"), _ASKS))


def __getattr__(name: str) -> Any:
    """``Denied``, ``RequiresApproval`` and the joined ``Decision``, when first asked for."""
    if name == "Decision":
        from rho_domain.approval_asks import Denied, RequiresApproval

        globals()["Decision"] = Allowed | RequiresApproval | Denied
        return globals()["Decision"]
    return _named_later(name)


class _Unparsed(enum.Enum):
    """``decide`` was not given the decoded arguments: it parses them itself."""

    UNPARSED = "unparsed"


_UNPARSED = _Unparsed.UNPARSED


def decide(
    profile: PermissionProfile,
    call: ToolCall,
    policy: ToolPolicy | None,
    *,
    auto_approve: bool = False,
    always_allowed: Set[str] = frozenset(),
    decoded: Mapping[str, Any] | _Unparsed | None = _UNPARSED,
) -> Decision:
    """Decide on one call.

    ``decoded`` is the call's arguments as decoded JSON, when the caller has them (the loop
    passes its ``PreparedCall.decoded``: None for arguments that are not a JSON object);
    without it they are parsed here.

    ``policy`` is None when the tool is unknown or its arguments are invalid: such a call
    cannot run anything (the registry answers it with an error), so it is allowed through.
    A call the handler would refuse under this profile (``policy.refused``) is denied at once,
    with the handler's reason: nobody is asked to approve what would not run. A destructive
    call (``policy.destructive``, decided by the handler on the parsed arguments) and a call
    that is not read-only whose decoded arguments hold one of the profile's
    ``dangerous_patterns`` require approval even for tools approved "always".

    DANGEROUS asks before every call whose handler declares it dangerous (``policy.dangerous``);
    GRANULAR asks before those too, and before every call of the tools the profile names in
    ``approval_required_tools``: naming tools only ever adds questions, so GRANULAR never asks
    less than DANGEROUS.
    """
    if _is_denied(profile, call.name):
        return _denied(f"the {profile.name!r} profile does not allow the {call.name!r} tool")
    if policy is None:
        return Allowed()
    if policy.refused:
        return _denied(policy.refused)
    if profile.approval is ApprovalMode.NONE or auto_approve:
        return Allowed()
    if policy.destructive:
        return _asks(policy.destructive)
    pattern = _dangerous_pattern(profile, call, policy, decoded)
    if pattern is not None:
        return _asks(f"the arguments contain the dangerous pattern {pattern!r}")
    if call.name in always_allowed:
        return Allowed("approved for the rest of the session")
    match profile.approval:
        case ApprovalMode.ALL:
            return _asks(f"the {profile.name!r} profile asks before every tool call")
        # GRANULAR names tools to ask about on top of what their handlers declare: a tool the
        # list forgets (a custom or MCP tool, SQL that writes) still asks when it is dangerous
        case ApprovalMode.DANGEROUS | ApprovalMode.GRANULAR if policy.dangerous:
            return _asks(policy.asks or f"{call.name!r} can change things outside the conversation")
        case ApprovalMode.GRANULAR if call.name in profile.approval_required_tools:
            return _asks(f"the {profile.name!r} profile asks before {call.name!r}")
    return Allowed()


def _is_denied(profile: PermissionProfile, name: str) -> bool:
    """Whether ``denied_tools`` names ``name``: exactly, or an MCP tool in a spelling its
    server chose to slip past the entry (``mcp_names.denied_name``: ``Delete_All``)."""
    if name in profile.denied_tools:
        return True
    if not profile.denied_tools or not name.startswith("mcp__"):
        return False
    from rho_domain.mcp_names import denied_name  # with the first MCP call of such a profile

    return denied_name(profile.denied_tools, name)


def _denied(reason: str) -> Decision:
    from rho_domain.approval_asks import Denied  # with the first call denied

    return Denied(reason)


def _asks(reason: str) -> Decision:
    from rho_domain.approval_asks import RequiresApproval  # with the first call that asks

    return RequiresApproval(reason)


def _dangerous_pattern(
    profile: PermissionProfile,
    call: ToolCall,
    policy: ToolPolicy,
    decoded: Mapping[str, Any] | _Unparsed | None,
) -> str | None:
    r"""The first profile pattern found in the call's decoded string arguments.

    Matched on the decoded values (a JSON escape such as ``\u002d`` is the character it
    encodes), case-folded, every run of whitespace read as one space. A read-only call cannot
    do what a pattern fears, so it is never matched (``grep -r "drop table"`` is a search).
    This is the profile's extra text check; the handler's parsed check is ``destructive``.
    """
    if policy.read_only or not profile.dangerous_patterns:
        return None
    if isinstance(decoded, _Unparsed):
        try:
            decoded = parse_arguments(call)
        except ToolArgumentsError:
            decoded = None
    values: object = call.arguments if decoded is None else decoded
    text = _flat(" ".join(_strings(values)))
    for pattern in profile.dangerous_patterns:
        if _flat(pattern) in text:
            return pattern
    return None


def _strings(value: object) -> list[str]:
    """Every string in a decoded JSON value (keys included), depth first."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for key, item in value.items() for s in (*_strings(key), *_strings(item))]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    return []


def _flat(text: str) -> str:
    return " ".join(text.casefold().split())
