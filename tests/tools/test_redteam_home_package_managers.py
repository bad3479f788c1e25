"""A home's package-manager settings and build init scripts are never written (varwrite15c).

redwrite15 refused a home's start-up files under their tools' names (.bashrc, .vimrc,
.config/git, .local/bin...), but with the workspace a home directory, under
``file_write: full``, the write tool wrote the settings that choose what the user's package
managers install, whose build code then runs (pip's .config/pip/pip.conf and legacy
.pip/pip.conf, uv's .config/uv/uv.toml, .condarc, .gemrc, .yarnrc, .bunfig.toml, maven's
.m2/settings.xml mirrors), and gradle's init scripts (.gradle/init.gradle, .gradle/init.d/),
which run at every gradle build of every project."""

from __future__ import annotations

from pathlib import Path

import pytest
from write_backends import writers

from rho_adapters.fakes import MemoryExecutor
from rho_domain.errors import SensitivePath
from rho_domain.permissions import FileWriteMode

FULL = FileWriteMode.FULL


BUILDERS = writers(FULL)
SETTINGS = [
    ".config/pip/pip.conf",
    ".pip/pip.conf",
    ".config/uv/uv.toml",
    ".condarc",
    ".gemrc",
    ".yarnrc",
    ".bunfig.toml",
    ".m2/settings.xml",
    ".gradle/init.gradle",
    ".gradle/init.gradle.kts",
    ".gradle/init.d/mirror.gradle",
]
INDEX = b"[global]\nindex-url = http://127.0.0.1:9/simple\n"


@pytest.mark.parametrize("backend", sorted(BUILDERS))
@pytest.mark.parametrize("path", SETTINGS)
async def test_package_manager_settings_of_a_home_are_never_written(
    tmp_path: Path, backend: str, path: str
) -> None:
    executor = BUILDERS[backend](tmp_path)
    try:
        with pytest.raises(SensitivePath, match="which agents never write"):  # written before
            await executor.write(path, INDEX, overwrite=True)
        if isinstance(executor, MemoryExecutor):
            assert not executor.files
    finally:
        await executor.aclose()
    assert not (tmp_path / path).exists()


async def test_a_project_gradle_build_and_pip_notes_are_written(tmp_path: Path) -> None:
    executor = BUILDERS["local"](tmp_path)
    try:
        for path in ("build.gradle", "docs/pip.md", "settings.xml", "gradle/init.gradle"):
            await executor.write(path, b"// ok\n", overwrite=True)
    finally:
        await executor.aclose()
    assert (tmp_path / "gradle/init.gradle").exists()
