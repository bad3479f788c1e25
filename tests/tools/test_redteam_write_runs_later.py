"""Files a tool of the user's runs by itself are never written, in any mode.

Red-team pass (redwrite15) under ``file_write: full`` (developer after "always" for write,
eval without asking): .git and .vscode were refused, but their twins were written: mercurial's
.hg/hgrc (its hooks run at the next hg command), a devcontainer (its initializeCommand runs
on the host when the folder is opened), Zed's tasks, and the code Python runs at every start
(a .pth in the workspace's virtual environment, sitecustomize.py, usercustomize.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from write_backends import writers

from rho_adapters.fakes import MemoryExecutor
from rho_domain.errors import RhoError, SensitivePath
from rho_domain.permissions import FileWriteMode

FULL = FileWriteMode.FULL
PYTHON = "is code Python runs at every start"
CONFIG = "which agents never write"


BUILDERS = writers(FULL, ("local", "daytona"))

ATTACKS = [
    (".venv/lib/python3.12/site-packages/zz_init.pth", "installed code that tools run"),
    ("lib/Distutils-Precedence.PTH", PYTHON),
    ("src/sitecustomize.py", PYTHON),
    ("usercustomize.py", PYTHON),
    (".hg/hgrc", "is inside .hg/"),
    (".svn/entries", "is inside .svn/"),
    (".devcontainer/devcontainer.json", "is inside .devcontainer/"),
    (".devcontainer.json", CONFIG),
    (".zed/tasks.json", "is inside .zed/"),
    (".kiro/hooks/on-save.kiro.hook", "is inside .kiro/"),
]


@pytest.mark.parametrize("backend", sorted(BUILDERS))
@pytest.mark.parametrize(("path", "why"), ATTACKS)
async def test_a_file_a_tool_runs_by_itself_is_never_written(
    tmp_path: Path, backend: str, path: str, why: str
) -> None:
    executor = BUILDERS[backend](tmp_path)
    try:
        with pytest.raises(SensitivePath) as refused:
            await executor.write(path, b"import os; os.system('id')\n", overwrite=True)
    finally:
        await executor.aclose()
    assert why in str(refused.value)
    assert not (tmp_path / path).exists()


@pytest.mark.parametrize("backend", sorted(BUILDERS))
async def test_nor_through_a_link_to_its_directory(tmp_path: Path, backend: str) -> None:
    # 'tools' is a link the workspace came with, to mercurial's own directory.
    (tmp_path / ".hg").mkdir()
    (tmp_path / "tools").symlink_to(".hg")
    executor = BUILDERS[backend](tmp_path)
    try:
        with pytest.raises(SensitivePath) as refused:
            await executor.write("tools/hgrc", b"[hooks]\npre-status = id\n", overwrite=True)
    finally:
        await executor.aclose()
    assert "is inside .hg/" in str(refused.value)
    assert not (tmp_path / ".hg" / "hgrc").exists()


# With the workspace a home directory (note42: .bashrc and .config/git were refused), the
# start-up files of the user's other tools were written: each runs a command later, at the
# next vim, tmux, psql, gdb, nvim, direnv or prompt, or replaces a program on the PATH.
HOME_ATTACKS = [
    ".vimrc", ".exrc", ".nvim.lua", ".vim/plugin/x.vim", ".emacs", ".emacs.d/init.el",
    ".tmux.conf", ".screenrc", ".psqlrc", ".sqliterc", ".gdbinit", ".lldbinit", ".Rprofile",
    ".irbrc", ".xinitrc", ".hgrc", ".config/nvim/init.lua", ".config/direnv/direnvrc",
    ".config/Code/User/tasks.json", ".config/starship.toml", ".config/mise/config.toml",
    ".config/tmux/tmux.conf", ".config/nushell/config.nu", ".config/powershell/profile.ps1",
    ".config/i3/config", ".local/bin/git", ".LOCAL/Bin/python3", ".cargo/bin/cargo",
]  # fmt: skip


@pytest.mark.parametrize("path", HOME_ATTACKS)
async def test_the_start_up_files_of_a_home_are_never_written(tmp_path: Path, path: str) -> None:
    executor = BUILDERS["local"](tmp_path)
    try:
        with pytest.raises(SensitivePath) as refused:
            await executor.write(path, b"!id\n", overwrite=True)
    finally:
        await executor.aclose()
    assert CONFIG in str(refused.value)
    assert not (tmp_path / path).exists()


# The same names as a case-insensitive disk reads them: HFS+ ignores some invisible code
# points in a name and NTFS drops trailing dots and spaces (a WSL workspace under /mnt/c), so
# each of these is the refused file there; Linux wrote them all.
FOLDED_ATTACKS = [
    (".g\u200cit/hooks/pre-commit", "is inside"),
    ("\ufeff.vscode/tasks.json", "is inside"),
    (".git./hooks/post-checkout", "is inside"),
    (".git /config", "is inside"),
    (".config/git./config", "is inside"),
    (".bashrc.", CONFIG),
    (".Bash\u200dRC ", CONFIG),
    ("src/sitecustomize.py.", PYTHON),
    (".env.", "is a secrets file"),
]


@pytest.mark.parametrize(("path", "why"), FOLDED_ATTACKS)
async def test_names_a_case_insensitive_disk_folds_are_refused(
    tmp_path: Path, path: str, why: str
) -> None:
    executor = BUILDERS["local"](tmp_path)
    try:
        with pytest.raises(SensitivePath) as refused:
            await executor.write(path, b"!id\n", overwrite=True)
    finally:
        await executor.aclose()
    assert why in str(refused.value)
    assert not (tmp_path / path).exists()
    assert not any(tmp_path.iterdir())


# An environment's installed code, which the next test run imports and which git ignores, so
# a review of the change never shows it: each was written under full before.
INSTALLED_ATTACKS = [
    (".venv/lib/python3.12/site-packages/pytest/__init__.py", "installed code that tools run"),
    ("venv/lib/python3/dist-packages/requests/api.py", "installed code that tools run"),
    ("node_modules/.bin/jest", "installed code that tools run"),
    ("web/node_modules/lodash/index.js", "installed code that tools run"),
    (".venv/pyvenv.cfg", "a virtual environment's setting or activation script"),
    (".venv/bin/activate", "a virtual environment's setting or activation script"),
    ("venv/Scripts/Activate.ps1", "a virtual environment's setting or activation script"),
]


@pytest.mark.parametrize(("path", "why"), INSTALLED_ATTACKS)
async def test_installed_code_is_never_written(tmp_path: Path, path: str, why: str) -> None:
    executor = BUILDERS["local"](tmp_path)
    try:
        with pytest.raises(SensitivePath) as refused:
            await executor.write(path, b"import os; os.system('id')\n", overwrite=True)
    finally:
        await executor.aclose()
    assert why in str(refused.value)
    assert not (tmp_path / path).exists()


async def test_a_project_script_named_activate_outside_bin_is_written(tmp_path: Path) -> None:
    executor = BUILDERS["local"](tmp_path)
    try:
        await executor.write("scripts-dev/activate", b"echo hi\n", overwrite=True)
    finally:
        await executor.aclose()
    assert (tmp_path / "scripts-dev" / "activate").read_bytes() == b"echo hi\n"


@pytest.mark.parametrize("backend", ["local", "daytona", "memory"])
@pytest.mark.parametrize(
    ("path", "data", "why"),
    [
        (".git/hooks/pre-commit", b"id\n", "is inside .git/"),
        ("vendor/lib/HEAD", b"ref: refs/heads/main\n", "would be a git HEAD"),
    ],
)
async def test_the_fake_refuses_what_the_executors_refuse(
    tmp_path: Path, backend: str, path: str, data: bytes, why: str
) -> None:
    # MemoryExecutor, the executor port's fake, wrote both (it checked the write mode only),
    # so a test of a rule on the fake passed where the real executors refuse.
    executor = (
        MemoryExecutor(root=str(tmp_path)) if backend == "memory" else BUILDERS[backend](tmp_path)
    )
    try:
        with pytest.raises(SensitivePath) as refused:
            await executor.write(path, data, overwrite=True)
    finally:
        await executor.aclose()
    assert why in str(refused.value)


async def test_the_fake_refuses_the_path_texts_the_executors_refuse(tmp_path: Path) -> None:
    # MemoryExecutor wrote '.bashrc\x00' (and read such paths), which the local and Daytona
    # executors refuse before any I/O (paths.check_path_text): a test on the fake passed
    # where the real executors refuse
    said: dict[str, list[str]] = {}
    for backend in ("local", "daytona", "memory"):
        executor = (
            MemoryExecutor(root=str(tmp_path))
            if backend == "memory"
            else BUILDERS[backend](tmp_path)
        )
        try:
            for path in (".bashrc\x00", "a\x1b.txt", "~/x.txt", "a\\b.txt"):
                with pytest.raises(RhoError) as refused:
                    await executor.write(path, b"x", overwrite=True)
                said.setdefault(backend, []).append(type(refused.value).__name__)
        finally:
            await executor.aclose()
    assert said["memory"] == said["local"] == said["daytona"], said
