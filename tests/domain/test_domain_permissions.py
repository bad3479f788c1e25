"""The built-in permission profiles, field by field: they are the safety seeds every session
starts from, so each value is pinned here (a changed seed must change this table too)."""

from __future__ import annotations

import pytest

from rho_domain.errors import ConfigError
from rho_domain.limits import development_limits
from rho_domain.permissions import (
    DEFAULT_DANGEROUS_PATTERNS,
    ApprovalMode,
    DatabaseMode,
    FileWriteMode,
    PermissionProfile,
    ShellMode,
    builtin_profile,
)

READONLY = PermissionProfile(
    name="readonly",
    description="Investigate without changing anything: read-only shell, files and SQL.",
    shell=ShellMode.RESTRICTED,
    file_write=FileWriteMode.OFF,
    database=DatabaseMode.READONLY,
    approval=ApprovalMode.DANGEROUS,  # a call's risk comes from its handler's policy_for
    approval_required_tools=frozenset(),
    denied_tools=frozenset(),
    dangerous_patterns=DEFAULT_DANGEROUS_PATTERNS,
    shell_timeout=120.0,
    bash_only=False,
    extra_read_roots=(),
)
DEVELOPER = PermissionProfile(
    name="developer",
    description="Local development: any shell command and file edits, each approved.",
    shell=ShellMode.UNRESTRICTED,
    file_write=FileWriteMode.FULL,
    database=DatabaseMode.READONLY,
    # the design documents' GRANULAR row; the other dangerous calls still ask (approval.decide)
    approval=ApprovalMode.GRANULAR,
    approval_required_tools=frozenset({"bash", "write", "edit"}),
    shell_timeout=300.0,
    limits=development_limits(),
)
EVAL = PermissionProfile(
    name="eval",
    description="Sandboxed evaluation: everything allowed, nothing asked.",
    shell=ShellMode.UNRESTRICTED,
    file_write=FileWriteMode.FULL,
    database=DatabaseMode.MUTATIONS,
    approval=ApprovalMode.NONE,
    approval_required_tools=READONLY.approval_required_tools,
    shell_timeout=300.0,
    limits=development_limits(),
)


@pytest.mark.parametrize(
    ("name", "expected"),
    [("readonly", READONLY), ("developer", DEVELOPER), ("eval", EVAL), ("unrestricted", EVAL)],
)
def test_builtin_profiles_field_by_field(name: str, expected: PermissionProfile) -> None:
    assert builtin_profile(name) == expected


def test_only_readonly_is_read_only() -> None:
    assert [n for n in ("readonly", "developer", "eval") if builtin_profile(n).read_only] == [
        "readonly"
    ]
    assert not PermissionProfile(name="x", file_write=FileWriteMode.CREATE_ONLY).read_only
    assert not PermissionProfile(name="x", shell=ShellMode.UNRESTRICTED).read_only


def test_default_dangerous_patterns() -> None:
    assert DEFAULT_DANGEROUS_PATTERNS == (
        "rm -rf", "rm -r", "drop table", "drop database", "truncate", "delete from", "> /dev/",
        ":(){", "mkfs", "dd if=",
    )  # fmt: skip


def test_an_unknown_profile_names_the_choices() -> None:
    with pytest.raises(ConfigError) as raised:
        builtin_profile("root")
    assert str(raised.value) == (
        "unknown profile 'root': use one of developer, eval, readonly, unrestricted, "
        "or a path to a profile YAML file"
    )
    assert raised.value.__cause__ is None
    assert raised.value.__suppress_context__
