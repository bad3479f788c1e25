"""``wiring.working_dir_of``: the workspace every Session confines its tools to, absolute and
real (the executor compares real paths: a symlinked or ``~`` workspace must be the same
directory, never a second name for it)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rho_domain.config import AgentConfig
from rho_entry.config.home import config_dir, config_dir_name
from rho_entry.wiring import working_dir_of


def test_the_working_dir_is_absolute_and_real(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = tmp_path / "real" / "work"
    real.mkdir(parents=True)
    (tmp_path / "link").symlink_to(tmp_path / "real")
    expected = os.path.realpath(real)
    assert working_dir_of(AgentConfig(working_dir=str(tmp_path / "link" / "work"))) == expected
    assert working_dir_of(AgentConfig(working_dir=str(real) + "/../work/")) == expected
    monkeypatch.setenv("HOME", str(tmp_path / "link"))
    assert working_dir_of(AgentConfig(working_dir="~/work")) == expected
    monkeypatch.chdir(tmp_path / "link")
    assert working_dir_of(AgentConfig(working_dir="work")) == expected
    monkeypatch.chdir(real)
    assert working_dir_of(AgentConfig()) == expected


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"RHO_AGENT_HOME": "~/agent-home/", "XDG_CONFIG_HOME": "/elsewhere"}, "HOME/agent-home"),
        ({"RHO_AGENT_HOME": "/abs//agent"}, "/abs/agent"),
        ({"XDG_CONFIG_HOME": "/xdg/config/"}, "/xdg/config/rho-agent"),
        ({"XDG_CONFIG_HOME": "relative/config"}, "HOME/relative/config/rho-agent"),
        ({}, "HOME/.config/rho-agent"),
    ],
)
def test_the_config_directory_as_a_string_is_the_same_directory(
    env: dict[str, str], expected: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # build_executor hides this directory from tools by its real path: the string the
    # wiring resolves must name the directory config_dir names, under every rule
    home = os.path.realpath(tmp_path)
    monkeypatch.setenv("HOME", home)
    monkeypatch.chdir(home)  # a relative XDG_CONFIG_HOME is relative to the current directory
    expected = expected.replace("HOME", home)
    assert os.path.realpath(config_dir_name(env)) == expected
    assert os.path.realpath(config_dir(env)) == expected
