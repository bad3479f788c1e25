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
    builtin_as_made,
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


def test_a_builtin_as_made_is_labelled_by_its_name_without_comparing_grants() -> None:
    """``builtin_as_made`` (the one-shot's header and meta.json ask it before ``label``) says
    yes only where ``label`` gives the name: never for a profile that differs in any field."""
    made = [builtin_profile(name) for name in ("readonly", "developer", "eval")]
    assert all(builtin_as_made(p) and label(p) == p.name for p in made)
    assert not builtin_as_made(attrs.evolve(READONLY, shell=ShellMode.UNRESTRICTED))
    assert not builtin_as_made(attrs.evolve(READONLY, description="renamed"))
    assert not builtin_as_made(attrs.evolve(eval_profile(), name="unrestricted"))
    assert not builtin_as_made(attrs.evolve(READONLY, name="audit"))


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
    assert excess(asks("bash"), asks("bash", "write")) == (
        "approval: granular (bash) (the limit is granular (bash, write))",
    )
    assert within(asks("bash"), eval_profile())  # eval asks nothing: anything is within
    # granular asks every dangerous call too: within dangerous, and dangerous not within it
    # while it names a tool whose calls are not all dangerous (readonly's restricted bash)
    assert within(asks("bash", "write"), READONLY)
    assert not within(READONLY, asks("bash"))
    assert excess(READONLY, asks("bash")) == ("approval: dangerous (the limit is granular (bash))",)
    assert not within(asks("bash"), attrs.evolve(READONLY, approval=ApprovalMode.ALL))


def test_the_granular_developer_grants_what_the_dangerous_one_did() -> None:
    # Sessions stored before developer became GRANULAR carry approval: dangerous. Naming bash
    # (unrestricted), write and edit asks nothing more: each of their calls is dangerous.
    new = developer_profile()
    old = attrs.evolve(new, approval=ApprovalMode.DANGEROUS, approval_required_tools=frozenset())
    assert new.approval is ApprovalMode.GRANULAR
    assert same_grants(old, new)
    assert within(old, new)
    assert within(new, old)
    assert label(old) == label(new) == "developer"
    assert builtin_equal(old) == "developer"
    # one more named tool whose calls are not all dangerous is more asking, not the same
    stricter = attrs.evolve(new, approval_required_tools=frozenset({"bash", "read"}))
    assert within(stricter, new)
    assert not within(new, stricter)
    # under a restricted shell, bash's calls are read-only: naming it asks more than dangerous
    restricted = attrs.evolve(new, shell=ShellMode.RESTRICTED)
    assert not within(attrs.evolve(old, shell=ShellMode.RESTRICTED), restricted)


def test_describe_names_every_axis() -> None:
    assert describe(eval_profile()) == (
        "shell: unrestricted, file writes: full, database: mutations, approval: none"
    )


SAMPLES = {
    "bash": [{"command": c} for c in ("", "ls", "cat README.md", "git status", "grep -r x .")],
    "write": [{"path": p, "content": ""} for p in ("a.txt", "src/x.py", "/tmp/x", ".")],
    "edit": [{"path": p, "old_string": "a", "new_string": "b"} for p in ("a.txt", "x/y")],
}


@pytest.mark.parametrize(
    "profile",
    [
        developer_profile(),
        READONLY,
        eval_profile(),
        attrs.evolve(READONLY, file_write=FileWriteMode.CREATE_ONLY),
        attrs.evolve(developer_profile(), bash_only=True),
    ],
    ids=["developer", "readonly", "eval", "create-only", "bash-only"],
)
def test_the_tools_dangerous_on_every_call_are_what_their_handlers_say(
    profile: PermissionProfile,
) -> None:
    """``dangerous_on_every_call`` restates the handlers' policies: it must agree with them,
    or a granular profile naming such a tool would be judged to ask less than it does."""
    from rho_domain.tools.factory import build_registry, dangerous_on_every_call

    registry = build_registry(profile)
    named = dangerous_on_every_call(profile)
    assert named <= set(registry.names)
    for name in registry.names:
        handler = registry.get(name)
        assert handler is not None
        policies = [handler.policy_for(args) for args in SAMPLES.get(name, [])]
        if name in named:
            assert policies, name
            assert all(p.dangerous for p in policies), name
        elif name in SAMPLES:
            assert not all(p.dangerous for p in policies), name
