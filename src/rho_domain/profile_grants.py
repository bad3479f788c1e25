"""What a permission profile grants, compared by content, never by its name.

A profile's ``name`` is a label anyone can write: a stored ``config.yaml`` may call a profile
granting an unrestricted shell and no approvals ``readonly``. Every decision about authority
(resuming a stored session, a server's allowed profiles, a listing's label) therefore compares
what the profile grants, axis by axis:

- shell: restricted < unrestricted; file writes: off < create-only < full; database:
  readonly < mutations; a longer ``shell_timeout`` grants more;
- approvals: ``all`` asks most, then ``granular``, then ``dangerous``, then ``none``.
  ``granular`` asks what ``dangerous`` asks and every call of its named tools, so it is within
  ``dangerous``, and within another granular profile when it names at least the same tools.
  A named tool whose every call is dangerous anyway (``tools.factory.dangerous_on_every_call``:
  the unrestricted bash, write, edit) adds nothing: the built-in ``developer`` (granular with
  those three) grants what the same profile with ``dangerous`` grants (sessions stored before
  developer became granular). Fewer ``dangerous_patterns`` or ``denied_tools`` grant more;
- tools: ``bash_only`` grants less; every ``extra_read_roots`` entry must be one the limit
  has too, and ``read_outside_workspace: allow`` grants more than ``deny``, and every
  MCP server the profile defines or names must be the limit's, as defined;
- limits: each resource limit of its commands (memory, CPU time, output, file size,
  processes) no higher than the limit's, and none lifted (``null``) where the limit has one.
"""

from __future__ import annotations

import attrs

from rho_domain.limits import ResourceLimits
from rho_domain.permissions import (
    BUILTIN_PROFILES,
    ApprovalMode,
    DatabaseMode,
    FileWriteMode,
    PermissionProfile,
    ShellMode,
    builtin_profile,
)
from rho_domain.reach import OutsideReads
from rho_domain.value_methods import value_eq, value_hash, value_repr

_SHELL = (ShellMode.RESTRICTED, ShellMode.UNRESTRICTED)
_FILES = (FileWriteMode.OFF, FileWriteMode.CREATE_ONLY, FileWriteMode.FULL)
_DATABASE = (DatabaseMode.READONLY, DatabaseMode.MUTATIONS)
_APPROVAL = (ApprovalMode.ALL, ApprovalMode.DANGEROUS, ApprovalMode.NONE)
# The names that are labels, not grants.
_LABELS = frozenset({"name", "description"})
# Compared by what they ask (``_asks``), not as written.
_APPROVAL_FIELDS = frozenset({"approval", "approval_required_tools"})


def same_grants(profile: PermissionProfile, other: PermissionProfile) -> bool:
    """True when both profiles grant exactly the same (names and descriptions aside)."""
    return _grants(profile) == _grants(other)


def builtin_equal(profile: PermissionProfile) -> str | None:
    """The built-in profile whose grants ``profile`` has exactly (``readonly``, ``developer``,
    ``eval``), or None. ``unrestricted`` is reported as ``eval``, its canonical name."""
    for name in ("readonly", "developer", "eval"):
        if same_grants(profile, builtin_profile(name)):
            return name
    return None


def excess(profile: PermissionProfile, limit: PermissionProfile) -> tuple[str, ...]:
    """What ``profile`` grants beyond ``limit``, one phrase per axis (empty: within it)."""
    out: list[str] = []
    for axis, order, mine, theirs in (
        ("shell", _SHELL, profile.shell, limit.shell),
        ("file writes", _FILES, profile.file_write, limit.file_write),
        ("database", _DATABASE, profile.database, limit.database),
    ):
        if order.index(mine) > order.index(theirs):
            out.append(f"{axis}: {mine.value} (the limit is {theirs.value})")
    if not _approval_within(profile, limit):
        out.append(f"approval: {_approval_text(profile)} (the limit is {_approval_text(limit)})")
    if limit.approval is not ApprovalMode.NONE:
        fewer = set(limit.dangerous_patterns) - set(profile.dangerous_patterns)
        if fewer:
            out.append(f"dangerous patterns not asked about: {', '.join(sorted(fewer))}")
    allowed_tools = set(limit.denied_tools) - set(profile.denied_tools)
    if allowed_tools:
        out.append(f"tools not denied: {', '.join(sorted(allowed_tools))}")
    if profile.shell_timeout > limit.shell_timeout:
        out.append(
            f"shell timeout {profile.shell_timeout:g}s (the limit is {limit.shell_timeout:g}s)"
        )
    if limit.bash_only and not profile.bash_only:
        out.append("tools besides bash")
    if (
        profile.read_outside_workspace is OutsideReads.ALLOW
        and limit.read_outside_workspace is OutsideReads.DENY
    ):
        out.append("reads outside the workspace: allow (the limit is deny)")
    roots = [r for r in profile.extra_read_roots if r not in limit.extra_read_roots]
    if roots:
        out.append(f"extra read roots: {', '.join(roots)}")
    servers = [
        name
        for name, server in profile.mcp_servers.items()
        if limit.mcp_servers.get(name) != server
    ]
    if servers:
        # a server is a program or a service outside the confinement: only the same one
        out.append(f"MCP servers: {', '.join(sorted(servers))}")
    lifted = _lifted_limits(profile.limits, limit.limits)
    if lifted:
        out.append(f"limits: {lifted}")
    return tuple(out)


def _lifted_limits(mine: ResourceLimits, theirs: ResourceLimits) -> str:
    """The resource limits ``mine`` sets higher than ``theirs``, or lifts (None) where
    ``theirs`` has one: a stored ``limits:`` block is as much a grant as the shell mode."""
    found: list[str] = []
    for field in attrs.fields(ResourceLimits):
        value, bound = getattr(mine, field.name), getattr(theirs, field.name)
        if bound is not None and (value is None or value > bound):
            shown = "no limit" if value is None else _number(value)
            found.append(f"{field.name} {shown} (the limit is {_number(bound)})")
    return ", ".join(found)


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def within(profile: PermissionProfile, limit: PermissionProfile) -> bool:
    """True when ``profile`` grants nothing that ``limit`` does not."""
    return not excess(profile, limit)


def describe(profile: PermissionProfile) -> str:
    """What the profile grants, in one line: ``shell: unrestricted, file writes: full,
    database: mutations, approval: none``."""
    return (
        f"shell: {profile.shell.value}, file writes: {profile.file_write.value}, "
        f"database: {profile.database.value}, approval: {_approval_text(profile)}"
    )


def label(profile: PermissionProfile) -> str:
    """How a listing names a profile: its name when it grants exactly the built-in profile of
    that name (``readonly``), else the name with a ``*`` and what it grants
    (``readonly* (shell: unrestricted, ...)``), so that a name never passes for a grant."""
    if profile.name in BUILTIN_PROFILES and same_grants(profile, builtin_profile(profile.name)):
        return profile.name
    return f"{profile.name}* ({describe(profile)})"


def _approval_within(profile: PermissionProfile, limit: PermissionProfile) -> bool:
    mine, theirs = _asks(profile), _asks(limit)
    if theirs.mode is ApprovalMode.NONE or mine.mode is ApprovalMode.ALL:
        return True
    if mine.mode is ApprovalMode.DANGEROUS and theirs.mode is ApprovalMode.DANGEROUS:
        # each asks every dangerous call, and every call of its named tools besides
        return mine.named >= theirs.named
    return _APPROVAL.index(mine.mode) <= _APPROVAL.index(theirs.mode)


@attrs.frozen
class _Asked:
    """What a profile's approval asks, in one form per meaning: ``mode`` ALL, NONE, or
    DANGEROUS (the dangerous calls) with ``named`` the tools asked on every call besides."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    mode: ApprovalMode
    named: frozenset[str] = frozenset()


def _asks(profile: PermissionProfile) -> _Asked:
    if profile.approval is not ApprovalMode.GRANULAR:
        return _Asked(profile.approval)  # approval_required_tools is read in GRANULAR only
    # The registry's rule, read where it applies: comparing profiles does not build every
    # tool handler's class (the factory imports them all), unless one of them is GRANULAR.
    from rho_domain.tools.factory import dangerous_on_every_call

    named = profile.approval_required_tools - dangerous_on_every_call(profile)
    return _Asked(ApprovalMode.DANGEROUS, frozenset(named))


def _approval_text(profile: PermissionProfile) -> str:
    if profile.approval is ApprovalMode.GRANULAR:
        return f"granular ({', '.join(sorted(profile.approval_required_tools))})"
    return str(profile.approval.value)


def _grants(profile: PermissionProfile) -> dict[str, object]:
    values = attrs.asdict(profile, recurse=False)
    grants: dict[str, object] = {
        k: (frozenset(v) if k == "dangerous_patterns" else v)
        for k, v in values.items()
        if k not in _LABELS | _APPROVAL_FIELDS
    }
    grants["approval"] = _asks(profile)
    return grants
