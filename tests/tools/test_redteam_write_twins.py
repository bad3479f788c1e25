"""Twins of what is never written, which the write rules did not know (red-team pass
redwrite16): each was written under ``file_write: full`` (developer after "always" for write,
eval without asking), the short names under create-only too.

* Windows short (8.3) names: NTFS resolves ``GIT~1`` to ``.git`` and ``DEVCON~1`` to
  ``.devcontainer`` (a workspace under WSL's /mnt/c), so ``GIT~1/hooks/pre-commit`` is a git
  hook there, and create-only created ``DEVCON~1/devcontainer.json`` (no hidden component).
* Other version controls' directories: Sapling's ``.sl`` (hooks in ``.sl/config``), darcs'
  ``_darcs`` (posthooks in ``prefs/defaults``), pijul's ``.pijul``, the repo tool's ``.repo``
  (its launcher runs ``.repo/repo/*.py``).
* mise's project configuration, direnv's twin: its env templates and enter hooks run at the
  user's next prompt in the directory (``mise.toml``, ``.mise.toml``, ``mise.local.toml``,
  ``mise.dev.toml``, ``.mise/config.toml``, ``mise/config.toml``, ``.config/mise.toml``).
* .vscode's twins, run when the project is opened in another editor or a cloud IDE: Theia's
  ``.theia``, Visual Studio's ``.vs``, ``.fleet``, ``.nova``, Project IDX's ``.idx/dev.nix``,
  ``.codesandbox/tasks.json``, ``.gitpod.yml`` and its Dockerfile, ``.replit`` and
  ``replit.nix``, a devfile, ``.stackblitzrc`` and a VS Code ``*.code-workspace``."""

from __future__ import annotations

from pathlib import Path

import pytest
from write_backends import writer

from rho_adapters.fakes import MemoryExecutor
from rho_domain.errors import PermissionDenied, SensitivePath
from rho_domain.permissions import FileWriteMode
from rho_domain.ports.executor import Executor

SHORT = "has the shape of a Windows short (8.3) name"
CONFIG = "which agents never write"
IDE = "whose commands run when the project is opened there"
TWINS = [
    ("GIT~1/hooks/pre-commit", SHORT),
    ("sub/git~1/config", SHORT),
    ("GI7EBA~1", SHORT),
    ("VSCODE~1/tasks.json", SHORT),
    (".sl/config", "is inside .sl/"),
    ("_darcs/prefs/defaults", "is inside _darcs/"),
    ("vendor/.pijul/config", "is inside .pijul/"),
    (".repo/repo/main.py", "is inside .repo/"),
    ("mise.toml", CONFIG),
    (".MISE.toml", CONFIG),
    ("mise.local.toml", CONFIG),
    ("api/.mise.dev.local.toml", CONFIG),
    (".mise/config.toml", "is inside .mise/"),
    ("mise/config.toml", "is inside mise/config.toml/"),
    (".config/mise.toml", "is inside .config/mise.toml/"),
    (".theia/tasks.json", "is inside .theia/"),
    (".vs/tasks.vs.json", "is inside .vs/"),
    (".fleet/run.json", "is inside .fleet/"),
    (".nova/Tasks/build.json", "is inside .nova/"),
    (".idx/dev.nix", "is inside .idx/"),
    (".codesandbox/tasks.json", "is inside .codesandbox/"),
    (".gitpod.yml", IDE),
    (".gitpod.Dockerfile", IDE),
    (".replit", IDE),
    ("replit.nix", IDE),
    ("devfile.yaml", IDE),
    ("app/.devfile.yaml", IDE),
    (".stackblitzrc", IDE),
    ("project.code-workspace", IDE),
]
# Near names that are the project's own work, written as before.
WRITTEN = [
    "notes/mise-en-place.md", "promise.toml", "darcs.md", "repo/main.py", "backup~.txt",
    "vs/notes.md", "docs/devfile.md", "workspace.code",
]  # fmt: skip


BACKENDS: list[str] = ["local", "daytona", "memory"]


def _written(executor: Executor, ws: Path) -> list[str]:
    """The files on the backend's disk (the memory fake's: its dict)."""
    if isinstance(executor, MemoryExecutor):
        return sorted(executor.files)
    return sorted(str(p.relative_to(ws)) for p in ws.rglob("*") if not p.is_dir())


@pytest.mark.parametrize("backend", BACKENDS)
async def test_the_twins_of_what_is_never_written_are_never_written(
    tmp_path: Path, backend: str
) -> None:
    executor = writer(backend, tmp_path, FileWriteMode.FULL)
    refused: dict[str, str] = {}
    try:
        for path, _ in TWINS:
            with pytest.raises(SensitivePath) as caught:
                await executor.write(path, b"[hooks]\nenter = 'id'\n", overwrite=True)
            refused[path] = str(caught.value)
        for path in WRITTEN:
            await executor.write(path, b"fine\n", overwrite=True)
    finally:
        await executor.aclose()
    assert {path: why in refused[path] for path, why in TWINS} == dict.fromkeys(refused, True)
    assert _written(executor, tmp_path) == sorted(WRITTEN)


@pytest.mark.parametrize("backend", BACKENDS)
async def test_create_only_creates_no_document_under_a_short_name(
    tmp_path: Path, backend: str
) -> None:
    executor = writer(backend, tmp_path, FileWriteMode.CREATE_ONLY)
    try:
        for path in ("DEVCON~1/devcontainer.json", "GITHUB~1/workflows/notes.md"):
            with pytest.raises((SensitivePath, PermissionDenied)) as caught:
                await executor.write(path, b"{}\n", overwrite=False)
            assert SHORT in str(caught.value)
        await executor.write("report.md", b"findings\n", overwrite=False)
    finally:
        await executor.aclose()
    assert _written(executor, tmp_path) == ["report.md"]


# Files of a created kind (.json) that tools find by name and take commands from, the twins of
# project.json, vercel.json and lefthook.json, which create-only created before (redwrite16).
BY_NAME_TWINS = [
    "nx.json", "apps/workspace.json", "angular.json", "rush.json", "wrangler.json", "now.json",
    "nixpacks.json", "railpack.json", "cloudbuild.json", "dub.json", "esy.json",
    "simple-git-hooks.json", "VCPKG.json", "vcpkg-configuration.json",
]  # fmt: skip


@pytest.mark.parametrize("backend", BACKENDS)
async def test_create_only_creates_no_file_a_tool_takes_commands_from(
    tmp_path: Path, backend: str
) -> None:
    executor = writer(backend, tmp_path, FileWriteMode.CREATE_ONLY)
    refused: dict[str, bool] = {}
    try:
        for path in BY_NAME_TWINS:
            with pytest.raises(PermissionDenied) as caught:
                await executor.write(path, b'{"build": {"command": "id"}}\n', overwrite=False)
            refused[path] = "a file tools find by its name and act on" in str(caught.value)
        await executor.write("findings/nx-notes.json", b"{}\n", overwrite=False)
    finally:
        await executor.aclose()
    assert refused == dict.fromkeys(BY_NAME_TWINS, True)
    assert _written(executor, tmp_path) == ["findings/nx-notes.json"]


async def test_a_refused_create_only_write_leaves_no_hidden_directory(tmp_path: Path) -> None:
    # A link to a hidden directory that does not exist yet (a planted repository's): the
    # write was refused once resolved, but .github/workflows/ had been made on the way.
    (tmp_path / "notes").symlink_to(".github")
    executor = writer("local", tmp_path, FileWriteMode.CREATE_ONLY)
    try:
        with pytest.raises(PermissionDenied, match=r"inside \.github/, a hidden directory"):
            await executor.write("notes/workflows/ci.md", b"x\n", overwrite=False)
    finally:
        await executor.aclose()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes"]
