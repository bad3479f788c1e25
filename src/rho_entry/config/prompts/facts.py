"""What the default system prompt says about a profile, computed from its fields.

The public implementation told every profile but ``developer`` that it was read-only; here
the text follows the profile's actual shell, file, database and approval modes.
"""

from __future__ import annotations

from collections.abc import Sequence

from rho_domain.permissions import (
    ApprovalMode,
    DatabaseMode,
    FileWriteMode,
    PermissionProfile,
    ShellMode,
)
from rho_domain.tools.factory import dangerous_on_every_call

_SHELL = {
    ShellMode.RESTRICTED: (
        "The shell is restricted: only allowlisted read-only programs (ls, cat, head, tail, "
        "grep, find, wc, git log/diff/status, ...) run, without redirections to files, command "
        "substitution or installs. Use it to inspect, not to change."
    ),
    ShellMode.UNRESTRICTED: (
        "The shell is unrestricted: any command runs through bash in the working directory, "
        "so you can build, test and change things. Prefer reversible, targeted commands."
    ),
}
_FILES = {
    FileWriteMode.OFF: "You cannot create or modify files: file tools are read-only.",
    FileWriteMode.CREATE_ONLY: (
        "You may create new documents and data files (.md, .txt, .csv, .json, ...) outside "
        "hidden directories, but you cannot overwrite or edit existing ones."
    ),
    FileWriteMode.FULL: "You may create, overwrite and edit files in the working directory.",
}
_DATABASES = {
    DatabaseMode.READONLY: "Database queries run read-only: statements that change data fail.",
    DatabaseMode.MUTATIONS: "Database statements may change data; be deliberate.",
}


_ASKS_DANGEROUS = (
    "Calls that can change things (shell commands, file writes, database statements) need the "
    "user's approval before they run."
)


def _approval_text(
    profile: PermissionProfile, tools: Sequence[str], databases: Sequence[str]
) -> str:
    match profile.approval:
        case ApprovalMode.NONE:
            return "No tool call needs the user's approval."
        case ApprovalMode.ALL:
            return "The user approves every tool call before it runs."
        case ApprovalMode.GRANULAR:
            # granular asks what dangerous asks, and every call of the named tools besides
            asked = set(profile.approval_required_tools) - dangerous_on_every_call(profile)
            if tools:
                asked &= set(tools)
            elif not databases:
                # Imported here: the database tools (and the SQL checker) load only when needed.
                from rho_domain.tools.database import DATABASE_TOOL_NAMES

                asked -= DATABASE_TOOL_NAMES
            if not asked:
                return _ASKS_DANGEROUS
            return f"{_ASKS_DANGEROUS} So does every call to {', '.join(sorted(asked))}."
        case _:
            return _ASKS_DANGEROUS


def profile_facts(
    profile: PermissionProfile,
    *,
    tools: Sequence[str] = (),
    databases: Sequence[str] = (),
) -> dict[str, str]:
    """Variables for the default prompt: profile_name, capabilities, tools, databases, and
    the raw modes (shell_mode, file_write_mode, database_mode, approval_mode)."""
    lines = []
    if profile.bash_only:
        lines.append("Your only tool is the shell.")
    lines.append(_SHELL[profile.shell])
    if not profile.bash_only:
        lines.append(_FILES[profile.file_write])
    if databases:
        lines.append(_DATABASES[profile.database])
    lines.append(_approval_text(profile, tools, databases))
    if profile.denied_tools:
        lines.append(f"These tools are denied: {', '.join(sorted(profile.denied_tools))}.")
    lines.append(
        "If the user rejects a call, do not retry it in another form: stop and wait for "
        "their instructions."
    )
    return {
        "profile_name": profile.name,
        "profile_description": profile.description or profile.name,
        "capabilities": "\n".join(f"- {line}" for line in lines),
        "tools": ", ".join(sorted(tools)) if tools else "(listed with each request)",
        "databases": ", ".join(databases) if databases else "(none configured)",
        "shell_mode": profile.shell.value,
        "file_write_mode": profile.file_write.value,
        "database_mode": profile.database.value,
        "approval_mode": profile.approval.value,
    }
