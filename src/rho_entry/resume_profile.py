"""A stored session's profile on resume: judged by what it grants, never by its name.

A session directory is data (``rho_entry.resume_policy``): the profile its ``config.yaml``
names is loaded (a built-in by name, a profile file of the user's by path) and compared with
the profiles the resumer allows now (``ResumeAuthority.profiles``) by
``profile_grants.within``. One that grants more is refused, naming what it grants beyond
them (``profile_grants.excess``) and the least built-in profile that covers it, for the
resumer to pass if they mean to. A profile the resumer gives now
never comes here: it replaces the stored one.
"""

from __future__ import annotations

from pathlib import Path

from rho_domain.errors import ConfigError
from rho_domain.permissions import BUILTIN_PROFILES, PermissionProfile, builtin_profile
from rho_domain.ports.store import SessionRecord
from rho_domain.profile_grants import excess, label, within
from rho_entry.resume_authority import ResumeAuthority


def allowed_profile(
    record: SessionRecord, authority: ResumeAuthority, config_dir: Path | None
) -> PermissionProfile:
    """The profile ``record`` was stored with, loaded (a built-in by name, a file of the
    user's by path) and returned when it is within one of ``authority.profiles``.

    Raises ``ConfigError`` naming the session and what its profile grants beyond the
    resumer's, with the profile to pass instead; or naming the profile file that cannot be
    loaded now."""
    profile = _stored_profile(record, authority, config_dir)
    if any(within(profile, limit) for limit in authority.profiles):
        return profile
    limits = ", ".join(p.name for p in authority.profiles)
    beyond = "; ".join(excess(profile, authority.profiles[0]))
    raise ConfigError(
        f"session {record.id} was stored with profile {label(profile)}, which grants more than "
        f"{limits} ({beyond}). A session directory cannot raise permissions: "
        + authority.hint.format(profile=_suggestion(profile))
    )


def _stored_profile(
    record: SessionRecord, authority: ResumeAuthority, config_dir: Path | None
) -> PermissionProfile:
    spec = record.config.profile
    if isinstance(spec, PermissionProfile):
        return spec
    if spec in BUILTIN_PROFILES:
        return builtin_profile(spec)
    from rho_entry.config.config_files import resolve_profile

    try:  # a profile file of the user's, named by the session: still compared by content
        return resolve_profile(spec, config_dir=config_dir)
    except ConfigError as exc:
        raise ConfigError(
            f"session {record.id} was stored with profile {spec!r}, which cannot be loaded now "
            f"({exc}); choose the profile to resume it with: "
            + authority.hint.format(profile=authority.profiles[0].name)
        ) from None


def _suggestion(profile: PermissionProfile) -> str:
    """The least built-in profile that covers ``profile`` (else a file of the user's)."""
    for name in ("readonly", "developer", "eval"):
        if within(profile, builtin_profile(name)):
            return name
    return "<a profile YAML of yours>"
