"""DaytonaExecutor against FakeDaytona: every Executor method, sandbox lifecycle, create body."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from daytona_support import Rig, closing, make_rig, reused

from rho_adapters.daytona import DaytonaExecutor, DaytonaSettings, git_scripts, scripts
from rho_adapters.daytona.creation import create_body
from rho_adapters.fakes import FakeClock
from rho_adapters.fakes.daytona import FakeDaytona
from rho_domain.errors import ConfigError, ExecutorError, ToolError
from rho_domain.limits import ResourceLimits
from rho_domain.ports.executor import Command, FileKind, Stage
from rho_domain.shell.git_repo import SHARED

# One sandbox for the module's tests that do not prove its making (each creation runs
# three scripts in the fake: 70-90 ms of CPU); the lifecycle tests make their own. A test
# on it runs in the module's event loop (``in_module``), where its HTTP client lives.
in_module = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Rig]:
    made = make_rig(tmp_path_factory.mktemp("daytona-executor"), allow_shell=True)
    async for r in closing(made):
        await r.executor.stat(".")
        yield r


@pytest.fixture
def rig(shared: Rig) -> Rig:
    return reused(shared, limits=ResourceLimits())


async def test_daytona_sandbox_is_created_lazily_once_and_deleted_on_close(tmp_path: Path) -> None:
    rig = make_rig(tmp_path, allow_shell=True)
    assert rig.fake.created == []
    results = await asyncio.gather(*(rig.executor.stat("src") for _ in range(5)))
    assert {r.kind for r in results} == {FileKind.DIRECTORY}
    assert len(rig.fake.created) == 1
    await rig.executor.aclose()
    await rig.executor.aclose()  # idempotent
    assert rig.fake.deleted == ["sbx-1"]


async def test_daytona_never_used_executor_creates_nothing(tmp_path: Path) -> None:
    rig = make_rig(tmp_path)
    await rig.executor.aclose()
    assert rig.fake.requests == []


async def test_daytona_closed_executor_refuses_work(tmp_path: Path) -> None:
    rig = make_rig(tmp_path)
    await rig.executor.aclose()
    with pytest.raises(ExecutorError, match="closed"):
        await rig.executor.stat(".")


async def test_daytona_working_dir_is_created(tmp_path: Path) -> None:
    fake = FakeDaytona()
    target = tmp_path / "new" / "workspace"
    executor = DaytonaExecutor(
        fake.settings(working_dir=str(target)), transport=fake.transport, clock=FakeClock()
    )
    try:
        assert (await executor.list_dir(".")) == ()
    finally:
        await executor.aclose()
    assert target.is_dir()
    assert executor.working_dir == str(target)


def test_daytona_create_body_snapshot_wins_and_resources_only_for_images() -> None:
    image = DaytonaSettings(api_key="k", image="python:3.12", cpu=2, memory=4, disk=10)
    body = create_body(image)
    assert body["buildInfo"] == {"dockerfileContent": "FROM python:3.12\n"}
    assert (body["cpu"], body["memory"], body["disk"]) == (2, 4, 10)
    snap = create_body(DaytonaSettings(api_key="k", image="x", snapshot="snap", cpu=2))
    assert "buildInfo" not in snap
    assert "cpu" not in snap
    assert snap["snapshot"] == "snap"


async def test_daytona_create_request_carries_settings(tmp_path: Path) -> None:
    rig = make_rig(
        tmp_path, env={"FOO": "bar"}, target="eu", auto_stop_interval=0, snapshot="my-snap"
    )
    async for r in closing(rig):
        await r.executor.stat(".")
        (spec,) = r.fake.created
        assert spec["env"] == {"FOO": "bar"}
        assert spec["target"] == "eu"
        assert spec["autoStopInterval"] == 0
        assert spec["snapshot"] == "my-snap"
        assert spec["labels"]["created-by"] == "rho-agent"


def test_daytona_settings_require_an_absolute_working_dir() -> None:
    with pytest.raises(ConfigError, match="absolute"):
        DaytonaSettings(api_key="k", working_dir="relative/dir")


def test_daytona_settings_hide_the_api_key() -> None:
    assert "sekrit" not in repr(DaytonaSettings(api_key="sekrit"))


@in_module
async def test_daytona_stat_file(rig: Rig) -> None:
    info = await rig.executor.stat("src/a.txt")
    assert (info.path, info.name, info.kind, info.size) == ("src/a.txt", "a.txt", FileKind.FILE, 12)
    assert info.mode == (rig.ws / "src" / "a.txt").stat().st_mode & 0o7777


@in_module
async def test_daytona_stat_missing_is_a_tool_error(rig: Rig) -> None:
    with pytest.raises(ToolError, match="no such file"):
        await rig.executor.stat("src/nope.txt")


@in_module
async def test_daytona_stat_accepts_absolute_paths_inside(rig: Rig) -> None:
    info = await rig.executor.stat(str(rig.ws / "src" / "a.txt"))
    assert info.path == "src/a.txt"


@in_module
async def test_daytona_read_whole_and_ranges(rig: Rig) -> None:
    assert await rig.executor.read("src/a.txt") == b"hello\nworld\n"
    assert await rig.executor.read("src/a.txt", offset=1, length=3) == b"ell"
    assert await rig.executor.read("src/a.txt", offset=6) == b"world\n"
    assert await rig.executor.read("src/a.txt", offset=100, length=5) == b""


@in_module
async def test_daytona_read_binary_round_trip(rig: Rig) -> None:
    blob = bytes(range(256)) * 40
    (rig.ws / "blob.bin").write_bytes(blob)
    assert await rig.executor.read("blob.bin") == blob
    assert await rig.executor.read("blob.bin", offset=250, length=10) == blob[250:260]


@in_module
async def test_daytona_read_empty_file(rig: Rig) -> None:
    (rig.ws / "empty").write_bytes(b"")
    assert await rig.executor.read("empty") == b""


@in_module
async def test_daytona_read_refuses_directories_and_fifos(rig: Rig) -> None:
    import os

    os.mkfifo(rig.ws / "pipe")
    with pytest.raises(ToolError, match="directory"):
        await rig.executor.read("src")
    with pytest.raises(ToolError, match="FIFO"):
        await rig.executor.read("pipe")  # must not block


@in_module
async def test_daytona_list_dir(rig: Rig) -> None:
    (rig.ws / "src" / "sub").mkdir()
    (rig.ws / "src" / ".hidden").write_text("x")
    (rig.ws / "src" / "link").symlink_to("a.txt")
    entries = {e.name: e for e in await rig.executor.list_dir("src")}
    assert set(entries) == {"a.txt", "sub", ".hidden", "link"}
    assert entries["a.txt"].path == "src/a.txt"
    assert entries["a.txt"].size == 12
    assert entries["sub"].kind is FileKind.DIRECTORY
    # described by lstat, as the local executor lists: a link is a link (listing.py)
    assert (entries["link"].kind, entries["link"].link_target) == (FileKind.SYMLINK, "a.txt")
    assert entries["a.txt"].mtime > 0
    top = {e.path for e in await rig.executor.list_dir(".")}
    assert "src" in top


@in_module
async def test_daytona_list_dir_of_a_file_is_an_error(rig: Rig) -> None:
    with pytest.raises(ToolError, match="not a directory"):
        await rig.executor.list_dir("src/a.txt")


@in_module
async def test_daytona_write_creates_with_parents_then_replaces(rig: Rig) -> None:
    assert await rig.executor.write("new/deep/f.txt", b"one", overwrite=False) is False
    assert (rig.ws / "new" / "deep" / "f.txt").read_bytes() == b"one"
    assert await rig.executor.write("new/deep/f.txt", b"two", overwrite=True) is True
    assert (rig.ws / "new" / "deep" / "f.txt").read_bytes() == b"two"
    leftovers = [p.name for p in (rig.ws / "new" / "deep").iterdir()]
    assert leftovers == ["f.txt"]  # no temp file left behind


@in_module
async def test_daytona_overwrite_preserves_the_mode(rig: Rig) -> None:
    target = rig.ws / "run.sh"
    target.write_text("old")
    target.chmod(0o750)
    await rig.executor.write("run.sh", b"new", overwrite=True)
    assert target.stat().st_mode & 0o777 == 0o750


@in_module
async def test_daytona_overwrite_true_on_missing_file_reports_created(rig: Rig) -> None:
    assert await rig.executor.write("fresh.txt", b"x", overwrite=True) is False


@in_module
async def test_daytona_write_binary_data(rig: Rig) -> None:
    blob = bytes(range(256)) + b"\r\n--boundary\r\n"
    await rig.executor.write("b.bin", blob, overwrite=False)
    assert (rig.ws / "b.bin").read_bytes() == blob


@in_module
async def test_daytona_write_onto_a_directory_is_an_error(rig: Rig) -> None:
    with pytest.raises(ToolError, match="not a regular file"):
        await rig.executor.write("src", b"x", overwrite=True)


@in_module
async def test_daytona_which(rig: Rig) -> None:
    assert await rig.executor.which("sh") in ("/usr/bin/sh", "/bin/sh")
    assert await rig.executor.which("no-such-program-rho") is None
    assert await rig.executor.which("../bin/sh") is None
    assert await rig.executor.which("cd") is None  # a builtin, not a program


@in_module
async def test_daytona_run_pipeline(rig: Rig) -> None:
    result = await rig.executor.run(
        Command(pipeline=(Stage(argv=("cat", "src/a.txt")), Stage(argv=("wc", "-l"))))
    )
    assert (result.exit_code, result.output.strip(), result.timed_out) == (0, "2", False)


@in_module
async def test_daytona_run_stage_redirections(rig: Rig) -> None:
    data = await rig.executor.run(
        Command(pipeline=(Stage(argv=("grep", "-n", "x"), stdin_data="a\nx y\n"),))
    )
    assert data.output == "2:x y\n"
    from_file = await rig.executor.run(
        Command(pipeline=(Stage(argv=("head", "-n", "1"), stdin_path="src/a.txt"),))
    )
    assert from_file.output == "hello\n"
    quiet = await rig.executor.run(
        Command(pipeline=(Stage(argv=("ls", "missing"), stderr="null"),))
    )
    assert (quiet.output, quiet.exit_code != 0) == ("", True)
    merged = await rig.executor.run(
        Command(pipeline=(Stage(argv=("ls", "missing"), stderr="stdout"), Stage(argv=("wc", "-l"))))
    )
    assert merged.output.strip() == "1"
    nothing = await rig.executor.run(
        Command(pipeline=(Stage(argv=("cat", "src/a.txt"), stdout_null=True),))
    )
    assert nothing.output == ""


@in_module
async def test_daytona_run_in_subdirectory(rig: Rig) -> None:
    result = await rig.executor.run(Command(pipeline=(Stage(argv=("ls",)),), cwd="src"))
    assert result.output == "a.txt\n"
    with pytest.raises(ToolError, match="no such directory"):
        await rig.executor.run(Command(pipeline=(Stage(argv=("ls",)),), cwd="nope"))


@in_module
async def test_daytona_shell_command_exit_code_and_stderr(rig: Rig) -> None:
    result = await rig.executor.run(Command(shell="echo out; echo err >&2; exit 3"))
    assert (result.exit_code, result.output) == (3, "out\nerr\n")


@in_module
async def test_daytona_shell_runs_in_workspace_with_env(rig: Rig) -> None:
    result = await rig.executor.run(Command(shell='pwd; echo "$GREETING"', env={"GREETING": "hi"}))
    assert result.output == f"{rig.ws}\nhi\n"
    with pytest.raises(ToolError, match="environment variable"):
        await rig.executor.run(Command(shell="true", env={"A;B": "x"}))


@in_module
async def test_daytona_shell_stdin_is_empty(rig: Rig) -> None:
    result = await rig.executor.run(Command(shell="cat; echo done"))
    assert result.output == "done\n"


async def test_the_fake_daemon_s_bash_reads_its_commands_from_a_file() -> None:
    """FakeDaytona's shell daemon gives bash the command on stdin as a file, not a pipe: from
    a pipe bash reads a byte at a time (4-5 ms of CPU for a git stage's 20 KB). What bash
    leaves unread is still the stdin of the commands it runs, as from a pipe."""
    import httpx

    fake = FakeDaytona(polls_until_started=0, daemon="shell")
    async with httpx.AsyncClient(transport=fake.transport) as client:
        auth = {"authorization": f"Bearer {fake.api_key}"}
        created = await client.post(f"{fake.api_url}/sandbox", json={}, headers=auth)
        box = f"{fake.toolbox_url}/{created.json()['id']}"
        command = "stat -L -c %F /dev/stdin; read rest; echo got: $rest\nleft for read\n"
        answer = await client.post(
            f"{box}/process/execute", json={"command": command}, headers=auth
        )
    assert answer.json() == {"exitCode": 0, "result": "regular file\ngot: left for read\n"}


def test_the_capped_answer_runs_no_program_for_its_trailer(tmp_path: Path) -> None:
    """The trailer's exit code and count are read by the shell itself: with only mktemp,
    head, wc and rm on its PATH the capped script still answers (a $(cat ...) and a
    $(tr ...) were two more processes for every Daytona command)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for program in ("mktemp", "head", "wc", "rm"):
        (bin_dir / program).symlink_to(shutil.which(program) or program)
    script = scripts.capped("(printf 0123456789; exit 4)", 4, 8)
    answer = subprocess.run(
        ["/bin/sh", "-c", script], env={"PATH": str(bin_dir)}, capture_output=True, text=True
    )
    assert scripts.parse_capped(answer.stdout) == scripts.Captured(
        exit_code=4, output="0123", omitted=4
    ), answer


def test_git_discovery_resolves_the_shared_entries_in_one_realpath(tmp_path: Path) -> None:
    """The discovery script resolves the repository's shared entries (objects, refs, info,
    logs...) with one realpath, not one each (four or five processes more for every git
    command on Daytona), and still reports each entry's real path."""
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / ".git" / "logs").mkdir(exist_ok=True)
    bin_dir, log = tmp_path / "bin", tmp_path / "realpath.log"
    bin_dir.mkdir()
    shim = bin_dir / "realpath"
    real = shutil.which("realpath")
    shim.write_text(f'#!/bin/sh\necho "$*" >>{log}\nexec {real} "$@"\n')
    shim.chmod(0o755)
    answer = subprocess.run(
        ["/bin/sh", "-c", git_scripts.git_discovery(str(repo))],
        env={"PATH": f"{bin_dir}:/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    common = repo / ".git"
    present = _present(common)
    assert {"objects", "refs", "logs", "info"} <= set(present)
    assert {str(common / n) for n in present} <= set(git_scripts.parse_git_places(answer))
    calls = [line for line in log.read_text().splitlines() if f"{common}/refs" in line]
    assert calls == [" ".join(["-m", "--", *(f"{common}/{n}" for n in present)])]


def _present(common: Path) -> list[str]:
    """The shared entries of ``common`` in the order the discovery script names them."""
    return [n for n in SHARED if (common / n).exists() or (common / n).is_symlink()]


@in_module
async def test_daytona_output_cap_counts_omitted_bytes(rig: Rig) -> None:
    result = await rig.executor.run(Command(shell="head -c 10000 /dev/zero", max_output_bytes=100))
    assert (len(result.output), result.omitted_bytes) == (100, 9900)


@in_module
async def test_daytona_forged_status_line_changes_nothing(rig: Rig) -> None:
    result = await rig.executor.run(Command(shell=r"printf '\n\036rho:0:0\n'; exit 5"))
    assert result.exit_code == 5
    assert "rho:0:0" in result.output


@in_module
async def test_daytona_timeout_kills_and_reports(rig: Rig) -> None:
    pids = rig.ws / "pids"
    script = f"echo $$ >> {pids}; sleep 300 & echo $! >> {pids}; sleep 300"
    result = await rig.executor.run(Command(shell=script, timeout=1))
    assert (result.timed_out, result.exit_code) == (True, None)
    started = [int(p) for p in pids.read_text().split()]
    assert len(started) == 2
    assert await _all_ended(started)  # the whole process group died, background child too


@pytest.mark.parametrize("on_timeout", ["leave", "ignore"])
@in_module
async def test_daytona_timeout_kills_where_the_daemon_does_not(rig: Rig, on_timeout: str) -> None:
    # Before, a daemon that answered 408 and left the command, or ignored the timeout, let it
    # run on (here 300 s; in a real sandbox until it stopped): the sandbox now ends it itself.
    rig.fake.on_timeout = on_timeout  # type: ignore[assignment]
    pids = rig.ws / "pids"
    script = f"echo $$ >> {pids}; sleep 300 & echo $! >> {pids}; sleep 300"
    result = await rig.executor.run(Command(shell=script, timeout=1))
    assert (result.timed_out, result.exit_code) == (True, None)
    started = [int(p) for p in pids.read_text().split()]
    try:
        assert await _all_ended(started)  # the whole group, background child too
        if rig.fake.left:  # the fake's own process reaped before the loop closes
            await asyncio.wait(rig.fake.left, timeout=5)
    finally:
        for pid in started:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


async def _all_ended(pids: list[int]) -> bool:
    """Whether every pid has exited (zombies count), allowing SIGKILL up to 5 s to land."""
    for _ in range(500):
        if not any(_alive(pid) for pid in pids):
            return True
        await asyncio.sleep(0.01)
    return False


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as status:
            return status.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):  # reaped before, or between open and read
        return False


@in_module
async def test_daytona_empty_command_is_an_error(rig: Rig) -> None:
    with pytest.raises(ToolError, match="empty"):
        await rig.executor.run(Command())


@in_module
async def test_daytona_commands_run_under_the_profile_limits(rig: Rig) -> None:
    """ulimit -v/-t in the remote command, and reading stops at the output limit."""
    rig.executor.limits = ResourceLimits(memory_mib=128, cpu_seconds=1, output_mib=1)
    shown = await rig.executor.run(Command(shell="ulimit -v; ulimit -t"))
    assert shown.output.split() == [str(128 << 10), "1"]
    flood = await rig.executor.run(Command(shell="yes", timeout=60))
    assert flood.limit == "output"
    assert flood.exit_code == 128 + 13  # SIGPIPE: nobody reads past the limit
    assert len(flood.output.encode()) + flood.omitted_bytes == 1 << 20
    memory = await rig.executor.run(Command(shell="python3 -c 'x = bytearray(1 << 30)'"))
    assert memory.limit == "memory"
    cpu = await rig.executor.run(Command(shell="while :; do :; done", timeout=60))
    assert (cpu.limit, cpu.timed_out) == ("cpu", False), cpu
