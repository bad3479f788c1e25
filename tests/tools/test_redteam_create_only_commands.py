"""Create-only mode does not create the JSON files other tools take commands from
(varwrite15c).

varsurf15b refused package.json, project.json, vercel.json and their kin, but create-only
still created lefthook.json and lefthook-local.json (the git hooks lefthook installed run
their commands at the next commit; the -local file is merged into the project's, or used
alone), devbox.json (its init_hook runs at every devbox shell and run, and at cd through
devbox's direnv integration), nodemon.json (its exec and event commands) and railway.json
(its build and start commands at the next deploy), at the root or in a subproject."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_redteam_create_only import BY_NAME, FACTORIES

from rho_adapters.fakes.memory_executor import MemoryExecutor
from rho_domain.errors import PermissionDenied

COMMANDS = [
    "lefthook.json",
    "lefthook-local.json",
    "web/Lefthook-Local.JSON",
    "devbox.json",
    "services/api/devbox.json",
    "nodemon.json",
    "railway.json",
]
HOOK = json.dumps(
    {
        "pre-commit": {"commands": {"x": {"run": "touch pwned"}}},
        "shell": {"init_hook": ["touch pwned"]},
        "events": {"start": "touch pwned"},
        "build": {"buildCommand": "touch pwned"},
    }
).encode()


@pytest.mark.parametrize("kind", sorted(FACTORIES))
@pytest.mark.parametrize("path", COMMANDS)
async def test_create_only_refuses_the_files_tools_take_commands_from(
    tmp_path: Path, kind: str, path: str
) -> None:
    executor = FACTORIES[kind](tmp_path)
    try:
        # (a tool's local configuration is never written in any mode since redmcp21)
        with pytest.raises(PermissionDenied, match=f"{BY_NAME}|agents never write"):
            await executor.write(path, HOOK, overwrite=False)
        if isinstance(executor, MemoryExecutor):
            assert not executor.files
    finally:
        await executor.aclose()
    assert not (tmp_path / path).exists()


@pytest.mark.parametrize("kind", sorted(FACTORIES))
async def test_data_named_after_them_is_still_created(tmp_path: Path, kind: str) -> None:
    executor = FACTORIES[kind](tmp_path)
    try:
        for path in ("lefthook-report.json", "devbox-packages.csv", "railway-notes.md"):
            assert await executor.write(path, b"{}\n", overwrite=False) is False
    finally:
        await executor.aclose()
