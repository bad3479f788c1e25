"""``wiring.working_dir_of``: the workspace every Session confines its tools to, absolute and
real (the executor compares real paths: a symlinked or ``~`` workspace must be the same
directory, never a second name for it)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rho_domain.config import AgentConfig
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
