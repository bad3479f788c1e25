"""The real tool handlers, unchanged, through DaytonaExecutor (FakeDaytona, real processes)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from daytona_support import Rig, closing, make_rig

from rho_adapters.clock import SystemClock
from rho_adapters.daytona import DaytonaExecutor
from rho_adapters.local.line_search import ProcessLineSearcher
from rho_domain.messages import ToolCall
from rho_domain.permissions import (
    PermissionProfile,
    ShellMode,
    developer_profile,
    readonly_profile,
)
from rho_domain.tools.base import ToolContext, ToolOutput
from rho_domain.tools.factory import build_registry

RO = readonly_profile()


async def call(rig: Rig, tool: str, profile: PermissionProfile = RO, **args: Any) -> ToolOutput:
    registry = build_registry(profile, line_searcher=ProcessLineSearcher())
    ctx = ToolContext(
        session_id="s", call_id="c", executor=rig.executor, profile=profile, clock=SystemClock()
    )
    return await registry.dispatch(ToolCall(id="c", name=tool, arguments=json.dumps(args)), ctx)


def _rig(tmp_path: Path, profile: PermissionProfile, **options: Any) -> Rig:
    rig = make_rig(
        tmp_path,
        file_write=profile.file_write,
        allow_shell=profile.shell is ShellMode.UNRESTRICTED,
        **options,
    )
    (rig.ws / "src" / "app.py").write_text("def main():\n    return 'foo'\n# foo again\n")
    (rig.ws / "README.md").write_text("Title\nfoo bar\n")
    (rig.ws / ".env").write_text("SECRET_FOO=1\n")
    return rig


# The readonly tests share one sandbox (they change nothing in it; each creation runs three
# scripts in the fake, 70-90 ms of CPU) and run in the module's event loop (``in_module``).
in_module = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared_ro(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Rig]:
    async for r in closing(_rig(tmp_path_factory.mktemp("daytona-tools"), RO)):
        yield r


@pytest.fixture
def ro(shared_ro: Rig) -> Rig:
    shared_ro.fake.requests.clear()
    shared_ro.fake.commands.clear()
    return shared_ro


@in_module
async def test_daytona_tool_read(ro: Rig) -> None:
    out = await call(ro, "read", path="src/app.py", offset=2, limit=1)
    assert not out.is_error
    assert "     2\t    return 'foo'" in out.content
    assert "lines 2-2 of 3" in out.content


@in_module
async def test_daytona_tool_read_refuses_secrets_and_escapes(ro: Rig) -> None:
    """Both targets exist, so only the refusal (not "no such file") can stop them."""
    escape = "../" * (len(ro.ws.parts) + 1) + "etc/passwd"
    assert Path(ro.ws, escape).resolve() == Path("/etc/passwd")
    secret = await call(ro, "read", path=".env")
    assert secret.is_error
    assert "secret" in secret.content
    assert "SECRET_FOO" not in secret.content
    outside = await call(ro, "read", path=escape)
    assert outside.is_error
    assert "outside the workspace" in outside.content
    assert "root:" not in outside.content


@in_module
async def test_daytona_tool_list(ro: Rig) -> None:
    out = await call(ro, "list", path="src")
    assert not out.is_error
    assert "app.py" in out.content
    assert "a.txt" in out.content


class ImageWithoutRipgrep(DaytonaExecutor):
    """A sandbox image without ripgrep (FakeDaytona's processes see this machine's programs,
    which may include an ``rg``)."""

    async def which(self, program: str) -> str | None:
        return None if program == "rg" else await super().which(program)


async def test_daytona_tool_grep_falls_back_without_ripgrep(tmp_path: Path) -> None:
    async for ro in closing(_rig(tmp_path, RO, executor_class=ImageWithoutRipgrep)):
        out = await call(ro, "grep", pattern="foo")
        assert not out.is_error
        assert "src/app.py:2:" in out.content
        assert "README.md:2:foo bar" in out.content
        assert "SECRET_FOO" not in out.content
        assert not any("--no-config" in script for script in sent_scripts(ro))  # no rg ran


def sent_scripts(rig: Rig) -> list[str]:
    """The scripts the executor sent the sandbox (each is sent base64-encoded)."""
    return rig.fake.scripts


@in_module
async def test_daytona_tool_glob(ro: Rig) -> None:
    out = await call(ro, "glob", pattern="**/*.py")
    assert "src/app.py" in out.content


@in_module
async def test_daytona_tool_bash_restricted_pipeline_and_cd(ro: Rig) -> None:
    out = await call(ro, "bash", command="cd src && grep -c foo app.py | cat; echo done")
    assert not out.is_error, out.content
    assert out.content.startswith("2\ndone\n")


@in_module
async def test_daytona_tool_bash_restricted_refuses_writes_and_shells(ro: Rig) -> None:
    for line in ("touch pwned", "ls; /bin/rm -rf src", "cat x | sh", "echo hi > pwned"):
        out = await call(ro, "bash", command=line)
        assert out.is_error, line
        assert "refused" in out.content.lower(), line
    assert not (ro.ws / "pwned").exists()
    assert (ro.ws / "src").is_dir()


@in_module
async def test_daytona_tool_write_not_offered_in_readonly(ro: Rig) -> None:
    out = await call(ro, "write", path="new.txt", content="x")
    assert out.is_error
    assert not (ro.ws / "new.txt").exists()


async def test_daytona_tool_developer_write_edit_and_bash(tmp_path: Path) -> None:
    profile = developer_profile()
    async for rig in closing(_rig(tmp_path, profile)):
        out = await call(rig, "write", profile, path="pkg/new.py", content="x = 1\n")
        assert not out.is_error, out.content
        out = await call(
            rig, "edit", profile, path="pkg/new.py", old_string="x = 1", new_string="x = 2"
        )
        assert not out.is_error, out.content
        assert (rig.ws / "pkg" / "new.py").read_text() == "x = 2\n"
        out = await call(rig, "bash", profile, command="echo $((6*7)) && exit 4")
        assert out.is_error
        assert out.content.startswith("42\n[exit code 4")
        out = await call(rig, "write", profile, path=".git/config", content="x")
        assert out.is_error
