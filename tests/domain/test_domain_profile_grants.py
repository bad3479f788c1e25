"""profile_grants: profiles compared by what they grant, never by their names."""

from __future__ import annotations

import attrs
import pytest

from rho_domain.permissions import (
    ApprovalMode,
    DatabaseMode,
    FileWriteMode,
    PermissionProfile,
    ShellMode,
    builtin_profile,
    developer_profile,
    eval_profile,
    readonly_profile,
)
from rho_domain.profile_grants import (
    builtin_equal,
    describe,
    excess,
    label,
    same_grants,
    within,
)

READONLY = readonly_profile()


def test_a_profile_named_readonly_that_grants_a_shell_is_not_readonly() -> None:
    fake = attrs.evolve(READONLY, shell=ShellMode.UNRESTRICTED, approval=ApprovalMode.NONE)
    assert fake.name == "readonly"
    assert not same_grants(fake, READONLY)
    assert not within(fake, READONLY)
    assert excess(fake, READONLY) == (
        "shell: unrestricted (the limit is restricted)",
        "approval: none (the limit is dangerous)",
    )
    assert builtin_equal(fake) is None
    assert label(fake) == (
        "readonly* (shell: unrestricted, file writes: off, database: readonly, approval: none)"
    )


def test_a_profile_named_developer_that_grants_eval_is_marked() -> None:
    fake = attrs.evolve(eval_profile(), name="developer")
    assert not within(fake, developer_profile())
    assert builtin_equal(fake) == "eval"
    assert label(fake).startswith("developer* (shell: unrestricted")


@pytest.mark.parametrize("name", ["readonly", "developer", "eval", "unrestricted"])
def test_every_builtin_is_within_itself_and_labelled_by_its_name(name: str) -> None:
    profile = builtin_profile(name)
    assert within(profile, profile)
    assert excess(profile, profile) == ()
    assert label(profile) == profile.name  # unrestricted is eval's alias, named eval


def test_names_and_descriptions_are_labels_not_grants() -> None:
    renamed = attrs.evolve(READONLY, name="audit", description="anything")
    assert same_grants(renamed, READONLY)
    assert within(renamed, READONLY)
    assert builtin_equal(renamed) == "readonly"
    assert label(renamed).startswith("audit* (")  # a custom name is always shown with grants


def test_the_builtins_are_ordered() -> None:
    assert within(READONLY, developer_profile())
    assert within(developer_profile(), eval_profile())
    assert not within(developer_profile(), READONLY)
    assert not within(eval_profile(), developer_profile())


@pytest.mark.parametrize(
    ("change", "phrase"),
    [
        ({"file_write": FileWriteMode.CREATE_ONLY}, "file writes: create-only"),
        ({"database": DatabaseMode.MUTATIONS}, "database: mutations"),
        ({"approval": ApprovalMode.NONE}, "approval: none"),
        ({"dangerous_patterns": ("rm -rf",)}, "dangerous patterns not asked about"),
        ({"shell_timeout": 121.0}, "shell timeout 121s"),
        ({"extra_read_roots": ("/home",)}, "extra read roots: /home"),
        (
            {"approval": ApprovalMode.GRANULAR, "approval_required_tools": frozenset({"bash"})},
            "approval: granular (bash)",
        ),
    ],
)
def test_each_axis_that_grants_more_is_named(change: dict[str, object], phrase: str) -> None:
    more = attrs.evolve(READONLY, **change)  # type: ignore[arg-type]
    found = excess(more, READONLY)
    assert len(found) == 1
    assert found[0].startswith(phrase)


def test_less_is_within() -> None:
    strict = attrs.evolve(
        READONLY,
        approval=ApprovalMode.ALL,
        denied_tools=frozenset({"grep"}),
        bash_only=True,
        shell_timeout=10.0,
        dangerous_patterns=(*READONLY.dangerous_patterns, "curl"),
    )
    assert within(strict, READONLY)
    assert not within(READONLY, strict)
    assert "tools besides bash" in excess(READONLY, strict)
    assert "tools not denied: grep" in excess(READONLY, strict)


def test_granular_approval_is_compared_by_its_tools() -> None:
    def asks(*tools: str) -> PermissionProfile:
        return attrs.evolve(
            READONLY, approval=ApprovalMode.GRANULAR, approval_required_tools=frozenset(tools)
        )

    assert within(asks("bash", "write"), asks("bash"))
    assert not within(asks("bash"), asks("bash", "write"))
    assert within(asks("bash"), eval_profile())  # eval asks nothing: anything is within
    assert not within(asks("bash", "write"), READONLY)  # dangerous asks about other tools


def test_describe_names_every_axis() -> None:
    assert describe(eval_profile()) == (
        "shell: unrestricted, file writes: full, database: mutations, approval: none"
    )
