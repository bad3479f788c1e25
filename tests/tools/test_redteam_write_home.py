"""A workspace that is, or holds, a home directory: nothing inside the home's hidden entries
is written (red-team pass redwrite16).

Before: the never-written lists name the known start-up files and PATH directories of a home
(``.bashrc``, ``.local/bin``, ``.cargo/bin``, ``.config/nvim``...), and every other hidden
entry was written under ``file_write: full``: a ``git`` in ``~/.bun/bin`` or ``~/.pyenv/shims``
(on the user's PATH: it replaces git at the next call), ``~/.nvm/nvm.sh``, an
``~/.oh-my-zsh/custom/*.zsh`` plugin and ``~/.fzf.zsh`` (sourced by every shell),
IPython's and Julia's start-up code, WezTerm's Lua configuration. No list of them is complete,
so the rule is by construction: a home's hidden entries, where the shell and every tool load
their configuration by themselves, are never written, unless the workspace is inside one of
them (``~/.config/nvim``, the user's choice of work)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rho_adapters.daytona import DaytonaExecutor
from rho_adapters.fakes import FakeDaytona
from rho_adapters.local import LocalExecutor
from rho_domain.errors import SensitivePath
from rho_domain.permissions import FileWriteMode
from rho_domain.ports.executor import Executor

HIDDEN = "a hidden entry of the home directory"
IN_HOME = (
    ".bun/bin/git",
    ".pyenv/shims/python",
    ".nvm/nvm.sh",
    ".oh-my-zsh/custom/plugin.zsh",
    ".fzf.zsh",
    ".ipython/profile_default/startup/00-init.py",
    ".julia/config/startup.jl",
    ".config/wezterm/wezterm.lua",
)


def _build(backend: str, ws: Path, home: Path) -> Executor:
    if backend == "local":
        return LocalExecutor(str(ws), file_write=FileWriteMode.FULL, homes=(str(home),))
    fake = FakeDaytona()
    settings = fake.settings(working_dir=str(ws))
    return DaytonaExecutor(
        settings, file_write=FileWriteMode.FULL, transport=fake.transport, homes=(str(home),)
    )


@pytest.mark.parametrize("backend", ["local", "daytona"])
async def test_a_home_s_hidden_entries_are_never_written(tmp_path: Path, backend: str) -> None:
    home = tmp_path / "home"
    (home / ".config" / "nvim").mkdir(parents=True)
    cases = [(home, path) for path in IN_HOME] + [(tmp_path, "home/.bun/bin/git")]
    refused: dict[str, bool] = {}
    for ws, path in cases:
        executor = _build(backend, ws, home)
        try:
            with pytest.raises(SensitivePath) as caught:
                await executor.write(path, b"#!/bin/sh\nid\n", overwrite=True)
            refused[path] = HIDDEN in str(caught.value)
        finally:
            await executor.aclose()
    assert refused == dict.fromkeys((*IN_HOME, "home/.bun/bin/git"), True)
    # A project in the home, and (local: Daytona's policy reads no workspace inside a hidden
    # entry either) a workspace inside a hidden entry, are written as before.
    allowed = [(home, "proj/.github/workflows/ci.yml"), (home / ".config/nvim", "init.lua")]
    for ws, path in allowed if backend == "local" else allowed[:1]:
        executor = _build(backend, ws, home)
        try:
            await executor.write(path, b"ok\n", overwrite=True)
        finally:
            await executor.aclose()
    written = sorted(str(p.relative_to(home)) for p in home.rglob("*") if p.is_file())
    assert (
        written == [".config/nvim/init.lua", "proj/.github/workflows/ci.yml"][backend != "local" :]
    )
