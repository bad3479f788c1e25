"""Templates: frontmatter, {{ name }} substitution, required variables, the default prompt."""

from __future__ import annotations

import platform
from pathlib import Path

import pytest

from rho_domain.config import AgentConfig
from rho_domain.errors import ConfigError
from rho_domain.permissions import builtin_profile
from rho_entry.config.system_prompt import resolve_system_prompt
from rho_entry.config.templates import (
    load_template,
    parse_template,
    parse_var_assignments,
    render_template,
)

REVIEW = """\
---
description: Review a repository
vars:
  repo: {required: true}
  focus: security
initial_prompt: Review {{ repo }} with a focus on {{focus}}.
profile: developer
model: small-model
---
You review {{ repo }}.
"""


def test_frontmatter_fields_are_parsed() -> None:
    template = parse_template(REVIEW, source="review.md")
    assert (template.description, template.profile, template.model) == (
        "Review a repository",
        "developer",
        "small-model",
    )
    assert template.vars["repo"].required
    assert template.vars["focus"].default == "security"


def test_render_uses_values_then_defaults() -> None:
    rendered = render_template(parse_template(REVIEW), {"repo": "api"})
    assert rendered.system_prompt == "You review api.\n"
    assert rendered.initial_prompt == "Review api with a focus on security."


def test_missing_required_variable_names_itself_and_the_file() -> None:
    with pytest.raises(ConfigError, match=r"review\.md.*'repo'"):
        render_template(parse_template(REVIEW, source="review.md"), {})


def test_undeclared_placeholder_without_value_is_an_error() -> None:
    with pytest.raises(ConfigError, match=r"t\.md.*\{\{ who \}\}"):
        render_template(parse_template("Hello {{ who }}", source="t.md"), {})


def test_unknown_frontmatter_key_is_an_error() -> None:
    with pytest.raises(ConfigError, match="unknown frontmatter key"):
        parse_template("---\nflavour: x\n---\nbody", source="t.md")


def test_unclosed_frontmatter_and_empty_body_are_errors() -> None:
    with pytest.raises(ConfigError, match="never closed"):
        parse_template("---\ndescription: x\nbody")
    with pytest.raises(ConfigError, match="no body"):
        parse_template("---\ndescription: x\n---\n\n")


def test_var_assignments_split_on_first_equals() -> None:
    assert parse_var_assignments(["a=1=2", " b = x "]) == {"a": "1=2", "b": "x"}
    with pytest.raises(ConfigError, match="KEY=VALUE"):
        parse_var_assignments(["=oops"])


def test_missing_template_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read"):
        load_template(tmp_path / "nope.md")


@pytest.mark.parametrize(
    ("profile", "expected", "absent"),
    [
        ("readonly", "cannot create or modify files", "any command runs"),
        ("developer", "create, overwrite and edit files", "The shell is restricted"),
        ("eval", "No tool call needs the user's approval", "cannot create"),
    ],
)
def test_default_prompt_is_truthful_per_profile(profile: str, expected: str, absent: str) -> None:
    text = resolve_system_prompt(AgentConfig(), builtin_profile(profile), "/work/x", None)
    assert expected in text
    assert absent not in text
    assert "/work/x" in text
    assert f"Permission profile: {profile}" in text


def test_user_default_prompt_overrides_the_builtin(tmp_path: Path) -> None:
    (tmp_path / "default.md").write_text("Mine: {{ profile_name }} in {{ working_dir }}")
    text = resolve_system_prompt(AgentConfig(), builtin_profile("readonly"), "/w", tmp_path)
    assert text == "Mine: readonly in /w"


def test_an_edited_template_file_is_read_again(tmp_path: Path) -> None:
    """Parsed templates are cached by their text: a long-lived service sees an edit at once."""
    path = tmp_path / "default.md"
    profile = builtin_profile("readonly")
    path.write_text("---\ndescription: one\n---\nFirst {{ profile_name }}")
    assert resolve_system_prompt(AgentConfig(), profile, "/w", tmp_path) == "First readonly"
    path.write_text("---\ndescription: two\n---\nSecond {{ profile_name }}")
    assert resolve_system_prompt(AgentConfig(), profile, "/w", tmp_path) == "Second readonly"
    path.write_text("---\nnot_a_key: 1\n---\nBroken")
    with pytest.raises(ConfigError, match="not_a_key"):
        resolve_system_prompt(AgentConfig(), profile, "/w", tmp_path)
    with pytest.raises(ConfigError, match="not_a_key"):  # errors are not cached away
        resolve_system_prompt(AgentConfig(), profile, "/w", tmp_path)


def test_system_prompt_template_path_is_rendered_with_config_vars(tmp_path: Path) -> None:
    path = tmp_path / "sys.md"
    path.write_text(REVIEW)
    config = AgentConfig(system_prompt=str(path), vars={"repo": "web"})
    assert resolve_system_prompt(config, builtin_profile("readonly"), "/w", None) == (
        "You review web.\n"
    )


@pytest.mark.parametrize("profile", ["readonly", "developer", "eval"])
def test_the_default_prompt_from_its_parts_is_the_rendered_template(profile: str) -> None:
    """The default prompt is filled from the template's parts (no template values built): the
    text ``render_template`` gives for the same template, facts and config vars."""
    from rho_entry.config.prompts.facts import profile_facts
    from rho_entry.config.system_prompt import default_prompt_template

    grants = builtin_profile(profile)
    facts = {**profile_facts(grants, tools=("list",), databases=()), "working_dir": "/w"}
    config = AgentConfig(vars={"extra": "x"})
    facts["platform"] = platform.system() or "unknown"
    expected = render_template(default_prompt_template(None), {**facts, "extra": "x"}).system_prompt
    text = resolve_system_prompt(config, grants, "/w", None, tools=("list",))
    assert text == expected


def test_a_user_default_prompt_missing_a_required_variable_names_it(tmp_path: Path) -> None:
    (tmp_path / "default.md").write_text(
        "---\nvars:\n  team: {required: true}\n  tone: plain\n---\n{{ team }}, {{ tone }}"
    )
    profile = builtin_profile("readonly")
    with pytest.raises(ConfigError, match=r"default\.md: missing required variable 'team'"):
        resolve_system_prompt(AgentConfig(), profile, "/w", tmp_path)
    config = AgentConfig(vars={"team": "ops"})
    assert resolve_system_prompt(config, profile, "/w", tmp_path) == "ops, plain"
