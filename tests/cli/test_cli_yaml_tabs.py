"""A tab in a hand-written YAML file's indentation (an editor's Tab key) is named with the fix,
in every YAML file a user writes: a profile, a ``--config``, a ``databases.yaml``, a prompt
template's frontmatter. libyaml's words, "found character that cannot start any token",
never said it was a tab."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rho_domain.errors import ConfigError
from rho_entry.config.config_files import load_agent_config, load_profile_file
from rho_entry.config.databases_config import load_databases_file
from rho_entry.config.yaml_text import parse_yaml

HINT = "(a tab: YAML indents with spaces only; replace the tab with spaces)"

TABBED = [
    "base: readonly\nlimits:\n\tmemory_mib: 10\n",  # a tab alone
    "base: readonly\nlimits:\n  \tcpu_seconds: 10\n",  # spaces, then a tab
    "base: readonly\nlimits:\n  memory_mib: 10\n\tcpu_seconds: 3\n",  # "violates indentation"
    "\tbase: readonly\n",  # the first line
]

LOADERS: dict[str, Callable[[Path], Any]] = {
    "profile": load_profile_file,
    "config": load_agent_config,
    "databases": lambda path: load_databases_file(path, {}),
}


@pytest.mark.parametrize("loader", sorted(LOADERS))
@pytest.mark.parametrize("text", TABBED)
def test_a_tab_in_the_indentation_is_named_with_the_fix(
    tmp_path: Path, loader: str, text: str
) -> None:
    path = tmp_path / "mine.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as caught:
        LOADERS[loader](path)
    message = str(caught.value)
    assert "mine.yaml" in message
    assert HINT in message


def test_a_template_s_frontmatter_names_the_tab_too() -> None:
    with pytest.raises(ConfigError, match=re.escape(HINT)):
        parse_yaml("profile: readonly\nvars:\n\tx: 1\n", invalid="t.md: invalid YAML frontmatter")


@pytest.mark.parametrize(
    "text",
    [
        "model: m\nsystem_prompt: 'a\tb'\nmax_turns: [\n",  # a tab inside a value, not indentation
        "model:\tm: x\n",  # a tab after the key: the problem is the second ':'
    ],
)
def test_a_tab_that_is_not_the_problem_is_not_blamed(tmp_path: Path, text: str) -> None:
    path = tmp_path / "mine.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as caught:
        load_agent_config(path)
    assert "a tab" not in str(caught.value)
