"""Red-team pass on the write and edit tools (developer profile): what they put on disk is
bounded by the tool's cap and by the profile's file-size limit, whatever the model asks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs
import pytest

from rho_adapters.clock import SystemClock
from rho_adapters.local import LocalExecutor
from rho_domain.messages import ToolCall
from rho_domain.permissions import PermissionProfile, ShellMode, developer_profile
from rho_domain.tools.base import ToolContext, ToolOutput
from rho_domain.tools.factory import build_registry
from rho_domain.tools.write import MAX_WRITE


async def call(ws: Path, tool: str, profile: PermissionProfile, **args: Any) -> ToolOutput:
    registry = build_registry(profile)
    executor = LocalExecutor(
        str(ws),
        file_write=profile.file_write,
        allow_shell=profile.shell is ShellMode.UNRESTRICTED,
        base_env={"PATH": "/usr/bin:/bin"},
    )
    ctx = ToolContext(
        session_id="s", call_id="c", executor=executor, profile=profile, clock=SystemClock()
    )
    return await registry.dispatch(ToolCall(id="c", name=tool, arguments=json.dumps(args)), ctx)


def limited(mib: int) -> PermissionProfile:
    dev = developer_profile()
    return attrs.evolve(dev, limits=attrs.evolve(dev.limits, file_size_mib=mib))


async def test_edit_cannot_grow_a_file_past_the_write_cap(tmp_path: Path) -> None:
    # replace_all multiplies new_string by the matches: 2,000 matches x 8 KiB = 16 MB, past
    # the 10 MiB write caps (with a longer new_string, past the agent's memory).
    target = tmp_path / "small.txt"
    target.write_text("a\n" * 2000)
    out = await call(
        tmp_path, "edit", developer_profile(),
        path="small.txt", old_string="a", new_string="b" * 8192, replace_all=True,
    )  # fmt: skip
    assert out.is_error
    assert f"the limit is {MAX_WRITE:,}" in out.content
    assert "2,000 replacement(s)" in out.content
    assert target.read_text() == "a\n" * 2000


async def test_write_is_held_to_the_profile_file_size_limit(tmp_path: Path) -> None:
    # A profile limiting files to 1 MiB (RLIMIT_FSIZE for its commands) must not write a
    # 3 MiB file through the write tool instead.
    out = await call(tmp_path, "write", limited(1), path="big.bin", content="x" * (3 << 20))
    assert out.is_error
    assert "the profile's file size limit is 1 MiB" in out.content
    assert not (tmp_path / "big.bin").exists()
    ok = await call(tmp_path, "write", limited(1), path="small.bin", content="x" * 1000)
    assert not ok.is_error


async def test_edit_is_held_to_the_profile_file_size_limit(tmp_path: Path) -> None:
    target = tmp_path / "grow.txt"
    target.write_text("seed\n")
    out = await call(
        tmp_path, "edit", limited(1), path="grow.txt", old_string="seed", new_string="y" * (2 << 20)
    )
    assert out.is_error
    assert "the profile's file size limit is 1 MiB" in out.content
    assert target.read_text() == "seed\n"


HOME_START_UP = (
    ".config/git/config",
    ".CONFIG/Git/attributes",
    ".config/fish/config.fish",
    ".config/fish/conf.d/x.fish",
    ".config/systemd/user/x.service",
    ".config/autostart/x.desktop",
    ".config/environment.d/x.conf",
    ".bash_aliases",
    ".xprofile",
    ".xsessionrc",
    ".pam_environment",
    ".cshrc",
    ".tcshrc",
    ".login",
    ".kshrc",
    "linked/git/config",
)


@pytest.mark.parametrize("path", HOME_START_UP)
async def test_write_refuses_start_up_files_under_other_names(tmp_path: Path, path: str) -> None:
    # A workspace that is a home directory: .bashrc and .gitconfig were refused, but git's own
    # XDG config (core.fsmonitor runs a command at the next git status), fish's and systemd's
    # user files, the desktop's autostart and the other shells' start-up files were written.
    (tmp_path / ".config").mkdir()
    (tmp_path / "linked").symlink_to(".config")
    out = await call(tmp_path, "write", developer_profile(), path=path, content="[core]\n")
    assert out.is_error
    assert "which agents never write" in out.content
    assert not (tmp_path / path).exists()
    assert not (tmp_path / ".config" / "git").exists()
