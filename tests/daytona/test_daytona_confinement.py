"""Confinement attacks, secrets and write modes on the Daytona executor (profile enforced)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
import pytest_asyncio
from daytona_support import Rig, closing, make_rig, reused

from rho_adapters.daytona import DaytonaExecutor
from rho_adapters.fakes import FakeClock
from rho_domain.errors import (
    CommandRefused,
    PathOutsideWorkspace,
    PermissionDenied,
    SensitivePath,
)
from rho_domain.permissions import FileWriteMode
from rho_domain.ports.executor import Command, Stage

# One sandbox for the module (each creation runs three scripts in the fake: 70-90 ms of
# CPU); its workspace is made afresh for each test (``reused``), beside outside.txt and a
# sibling ws-evil. A test on it runs in the module's event loop (``in_module``).
in_module = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Rig]:
    top = tmp_path_factory.mktemp("daytona-confinement")
    (top / "ws-evil").mkdir()
    (top / "ws-evil" / "x.txt").write_text("sibling")
    async for r in closing(make_rig(top)):
        await r.executor.stat(".")
        yield r


@pytest.fixture
def rig(shared: Rig) -> Rig:
    (shared.ws.parent / "outside.txt").write_text("host secret")
    return reused(shared)


ESCAPES = ["../outside.txt", "src/../../outside.txt", "/etc/passwd", "../ws-evil/x.txt", "~/x"]


@pytest.mark.parametrize("path", ESCAPES)
@in_module
async def test_daytona_lexical_escapes_refused_before_any_request(rig: Rig, path: str) -> None:
    with pytest.raises(PathOutsideWorkspace):
        await rig.executor.read(path)
    with pytest.raises(PathOutsideWorkspace):
        await rig.executor.write(path, b"x", overwrite=True)
    assert rig.fake.requests == []


@in_module
async def test_daytona_sibling_prefix_is_not_inside(rig: Rig) -> None:
    with pytest.raises(PathOutsideWorkspace):
        await rig.executor.stat(str(rig.ws) + "-evil/x.txt")


@pytest.mark.parametrize("path", ["a\nb", "a\x00b", "C:\\x", "a\\..\\b", "file:///etc/passwd"])
@in_module
async def test_daytona_ambiguous_path_text_refused(rig: Rig, path: str) -> None:
    with pytest.raises(PermissionDenied):
        await rig.executor.stat(path)


@in_module
async def test_daytona_dotdot_inside_the_workspace_is_fine(rig: Rig) -> None:
    assert await rig.executor.read("src/../src/a.txt") == b"hello\nworld\n"


@in_module
async def test_daytona_symlink_out_of_the_workspace_refused(rig: Rig) -> None:
    tmp_path = rig.ws.parent
    (rig.ws / "leak").symlink_to(tmp_path / "outside.txt")
    (rig.ws / "door").symlink_to(tmp_path)
    with pytest.raises(PathOutsideWorkspace):
        await rig.executor.read("leak")
    with pytest.raises(PathOutsideWorkspace):
        await rig.executor.stat("door/outside.txt")
    with pytest.raises(PathOutsideWorkspace):
        await rig.executor.list_dir("door")
    with pytest.raises(PathOutsideWorkspace):
        await rig.executor.write("door/planted.txt", b"x", overwrite=False)
    assert not (tmp_path / "planted.txt").exists()


@in_module
async def test_daytona_symlink_inside_is_followed_but_never_written_through(rig: Rig) -> None:
    (rig.ws / "alias").symlink_to("src/a.txt")
    assert await rig.executor.read("alias") == b"hello\nworld\n"
    with pytest.raises(PermissionDenied, match="symbolic link"):
        await rig.executor.write("alias", b"x", overwrite=True)
    assert (rig.ws / "src" / "a.txt").read_bytes() == b"hello\nworld\n"


@in_module
async def test_daytona_secret_through_a_symlink_refused(rig: Rig) -> None:
    (rig.ws / ".env").write_text("KEY=1")
    (rig.ws / "notes.txt").symlink_to(".env")
    with pytest.raises(SensitivePath):
        await rig.executor.read("notes.txt")


@pytest.mark.parametrize("name", [".env", ".env.local", "prod.env", "config/.envrc"])
@in_module
async def test_daytona_secrets_never_read_or_written(rig: Rig, name: str) -> None:
    with pytest.raises(SensitivePath):
        await rig.executor.read(name)
    with pytest.raises(SensitivePath):
        await rig.executor.write(name, b"x", overwrite=True)
    with pytest.raises(SensitivePath):
        await rig.executor.run(Command(pipeline=(Stage(argv=("cat",), stdin_path=name),)))


@in_module
async def test_daytona_env_templates_are_ordinary_files(rig: Rig) -> None:
    await rig.executor.write(".env.example", b"KEY=\n", overwrite=False)
    assert await rig.executor.read(".env.example") == b"KEY=\n"


@pytest.mark.parametrize(
    "name",
    [".git/config", ".git/hooks/pre-commit", ".vscode/settings.json", ".claude/x", ".codex/y",
     ".cursor/z", ".idea/w", ".gemini/v", ".mcp.json", "sub/.GIT/config"],
)  # fmt: skip
@in_module
async def test_daytona_agent_and_vcs_config_never_written(rig: Rig, name: str) -> None:
    with pytest.raises(SensitivePath):
        await rig.executor.write(name, b"x", overwrite=True)
    assert rig.toolbox_calls("/files/bulk-upload") == 0


@in_module
async def test_daytona_write_into_git_through_a_symlinked_dir_refused(rig: Rig) -> None:
    (rig.ws / ".git").mkdir()
    (rig.ws / "innocent").symlink_to(".git")
    with pytest.raises(SensitivePath):
        await rig.executor.write("innocent/config", b"x", overwrite=False)


async def test_daytona_readonly_refuses_writes_without_a_request(tmp_path: Path) -> None:
    async for rig in closing(make_rig(tmp_path, file_write=FileWriteMode.OFF)):
        for overwrite in (False, True):
            with pytest.raises(PermissionDenied, match="read-only"):
                await rig.executor.write("new.txt", b"x", overwrite=overwrite)
        assert rig.fake.requests == []
        assert not (rig.ws / "new.txt").exists()


async def test_daytona_create_only_refuses_overwrites(tmp_path: Path) -> None:
    async for rig in closing(make_rig(tmp_path, file_write=FileWriteMode.CREATE_ONLY)):
        with pytest.raises(PermissionDenied, match="only create"):
            await rig.executor.write("src/a.txt", b"x", overwrite=True)
        with pytest.raises(PermissionDenied, match="already exists"):
            await rig.executor.write("src/a.txt", b"x", overwrite=False)
        assert (rig.ws / "src" / "a.txt").read_bytes() == b"hello\nworld\n"
        assert await rig.executor.write("src/b.txt", b"new", overwrite=False) is False
        assert (rig.ws / "src" / "b.txt").read_bytes() == b"new"


@in_module
async def test_daytona_create_only_is_atomic_against_a_late_file(rig: Rig) -> None:
    """A file appearing between the check and the final link is never replaced."""
    target = rig.ws / "race.txt"
    upload = rig.fake.handler

    async def racing(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/files/bulk-upload"):
            target.write_text("theirs")
        return await upload(request)

    rig.fake.transport.handler = racing
    with pytest.raises(PermissionDenied, match="already exists"):
        await rig.executor.write("race.txt", b"mine", overwrite=False)
    assert target.read_text() == "theirs"
    assert [p.name for p in rig.ws.iterdir() if "rho-tmp" in p.name] == []


@in_module
async def test_daytona_restricted_profile_refuses_shell_strings(rig: Rig) -> None:
    with pytest.raises(PermissionDenied, match="restricted"):
        await rig.executor.run(Command(shell="touch pwned"))
    assert rig.fake.requests == []


@pytest.mark.parametrize(
    "argv",
    [("sh", "-c", "touch pwned"), ("python3", "-c", "1"), ("rg", "--pre=/bin/rm", "x"),
     ("find", ".", "-delete"), ("sed", "-i", "s/a/b/", "src/a.txt")],
)  # fmt: skip
@in_module
async def test_daytona_pipeline_revalidated_even_if_a_handler_bug_asks(
    rig: Rig, argv: tuple[str, ...]
) -> None:
    with pytest.raises(CommandRefused):
        await rig.executor.run(Command(pipeline=(Stage(argv=argv),)))
    assert rig.toolbox_calls("/process/execute") == 0


@pytest.mark.parametrize(
    "word", ["$(touch pwned)", "`touch pwned`", "x; touch pwned", "x' ; touch pwned; '", "*"]
)
@in_module
async def test_daytona_argv_words_are_never_interpreted(rig: Rig, word: str) -> None:
    result = await rig.executor.run(Command(pipeline=(Stage(argv=("echo", word)),)))
    assert result.output == word + "\n"
    assert not (rig.ws / "pwned").exists()


@in_module
async def test_daytona_here_document_text_is_never_interpreted(rig: Rig) -> None:
    text = "$(touch pwned)\n`touch pwned`\nEOF\n'\"\n"
    result = await rig.executor.run(Command(pipeline=(Stage(argv=("cat",), stdin_data=text),)))
    assert result.output == text
    assert not (rig.ws / "pwned").exists()


async def test_daytona_restricted_pipelines_do_not_see_sandbox_env(tmp_path: Path) -> None:
    rig = make_rig(tmp_path, env={"RHO_SECRET_TOKEN": "s3cr3t"}, allow_shell=True)
    async for r in closing(rig):
        awk = ("awk", 'BEGIN { print "[" ENVIRON["RHO_SECRET_TOKEN"] "]" }')
        restricted = await r.executor.run(Command(pipeline=(Stage(argv=awk),)))
        assert restricted.output == "[]\n"
        shell = await r.executor.run(Command(shell='echo "[$RHO_SECRET_TOKEN]"'))
        assert shell.output == "[s3cr3t]\n"


@in_module
async def test_daytona_restricted_cwd_outside_refused(rig: Rig) -> None:
    tmp_path = rig.ws.parent
    (rig.ws / "door").symlink_to(tmp_path)
    for cwd in ("..", "/tmp", "door"):
        with pytest.raises(PathOutsideWorkspace):
            await rig.executor.run(Command(pipeline=(Stage(argv=("ls",)),), cwd=cwd))


async def test_daytona_extra_read_roots_are_readable_not_writable(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "app.log").write_text("line\n")
    rig = make_rig(tmp_path)
    executor = DaytonaExecutor(
        rig.fake.settings(working_dir=str(rig.ws)),
        file_write=FileWriteMode.FULL,
        extra_read_roots=(str(logs),),
        transport=rig.fake.transport,
        clock=FakeClock(),
    )
    try:
        assert await executor.read(str(logs / "app.log")) == b"line\n"
        with pytest.raises(PathOutsideWorkspace):
            await executor.write(str(logs / "app.log"), b"x", overwrite=True)
    finally:
        await executor.aclose()


@in_module
async def test_daytona_never_writes_a_file_with_other_hard_links(rig: Rig) -> None:
    """As the local executor refuses it (tests/tools/test_executor_paths.py's
    ``hardlink.txt``): Daytona replaced the workspace's name of a file linked from outside,
    the promise differing by backend."""
    tmp_path = rig.ws.parent
    (rig.ws / "linked.txt").hardlink_to(tmp_path / "outside.txt")
    with pytest.raises(PermissionDenied, match=r"linked\.txt has other hard links"):
        await rig.executor.write("linked.txt", b"pwned", overwrite=True)
    assert (rig.ws / "linked.txt").stat().st_nlink == 2
    assert (tmp_path / "outside.txt").read_text() == "host secret"
