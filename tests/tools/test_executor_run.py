"""LocalExecutor.run with real subprocesses: process groups, timeouts, cancellation, caps, env."""

from __future__ import annotations

import asyncio
import contextlib
import os
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from rho_adapters.local import LocalExecutor
from rho_domain.errors import CommandRefused, PermissionDenied
from rho_domain.permissions import FileWriteMode
from rho_domain.ports.executor import Command, Stage


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with contextlib.suppress(OSError), open(f"/proc/{pid}/stat") as f:
        if f.read().split(")")[-1].split()[0] == "Z":
            return False
    return True


async def _until(condition: Callable[[], bool], what: str) -> None:
    """Wait for ``condition`` (polled every 10 ms, for at most 10 s): SIGKILL, reaping and
    process start-up take a moment, and a fixed sleep would be either flaky or slow."""
    for _ in range(1000):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"still waiting for {what}")


def _all_dead(pids: list[int]) -> Callable[[], bool]:
    return lambda: not any(_alive(p) for p in pids)


async def _pids_from(path: Path) -> list[int]:
    for _ in range(100):
        if path.exists() and len(path.read_text().split()) >= 3:
            break
        await asyncio.sleep(0.05)
    return [int(p) for p in path.read_text().split()]


# A shell that starts two background sleepers and a foreground one, recording every pid.
SPAWNER = "sleep 300 & echo $! >> pids; sleep 300 & echo $! >> pids; echo $$ >> pids; sleep 300"


@pytest.fixture
def shell_executor(tmp_path: Path) -> LocalExecutor:
    return LocalExecutor(
        str(tmp_path),
        file_write=FileWriteMode.FULL,
        allow_shell=True,
        base_env={"PATH": "/usr/bin:/bin"},
    )


async def test_executor_timeout_kills_whole_process_group(
    shell_executor: LocalExecutor, tmp_path: Path
) -> None:
    result = await shell_executor.run(Command(shell=SPAWNER, timeout=1.0))
    assert result.timed_out
    assert result.exit_code is None
    pids = await _pids_from(tmp_path / "pids")
    await _until(_all_dead(pids), "the process group to die")


async def test_executor_cancellation_kills_children_before_propagating(
    shell_executor: LocalExecutor, tmp_path: Path
) -> None:
    task = asyncio.create_task(shell_executor.run(Command(shell=SPAWNER, timeout=60)))
    pids = await _pids_from(tmp_path / "pids")
    assert all(_alive(p) for p in pids)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await _until(_all_dead(pids), "the process group to die")


async def test_executor_background_child_holding_output_is_ended(
    shell_executor: LocalExecutor, tmp_path: Path
) -> None:
    result = await shell_executor.run(Command(shell="sleep 300 & echo $! > pid; echo done"))
    assert result.exit_code == 0
    assert "done" in result.output
    pid = int((tmp_path / "pid").read_text())
    await _until(_all_dead([pid]), "the background child to end")


async def test_executor_output_is_capped_while_streaming(shell_executor: LocalExecutor) -> None:
    result = await shell_executor.run(
        Command(shell="head -c 5000000 /dev/zero | tr '\\0' a; echo END", max_output_bytes=10_000)
    )
    assert result.omitted_bytes > 4_000_000
    assert len(result.output) < 11_000
    assert result.output.rstrip().endswith("END")


async def test_executor_env_has_no_credentials(tmp_path: Path) -> None:
    ex = LocalExecutor(
        str(tmp_path),
        allow_shell=True,
        base_env={
            "PATH": "/usr/bin:/bin",
            "OPENAI_API_KEY": "sk-1",
            "GH_TOKEN": "t",
            "DB_SECRET": "s",
            "MY_PASSWORD": "p",
            "LD_PRELOAD": "x.so",
            "KEEP": "yes",
        },
    )
    result = await ex.run(Command(shell="env"))
    assert "KEEP=yes" in result.output
    for leaked in ("sk-1", "GH_TOKEN", "DB_SECRET", "MY_PASSWORD", "LD_PRELOAD"):
        assert leaked not in result.output


async def test_executor_env_has_no_url_with_a_password(tmp_path: Path) -> None:
    """A credential in a variable's value, not its name (a database URL, a proxy's login):
    the unrestricted shell printed them with ``env``."""
    ex = LocalExecutor(
        str(tmp_path),
        allow_shell=True,
        base_env={
            "PATH": "/usr/bin:/bin",
            "DATABASE_URL": "postgresql://app:pg-pw-5d1c@db.internal/app",
            "HTTPS_PROXY": "http://alice:proxy-pw-77e0@proxy.corp:3128",
            "all_proxy": "socks5://bob:socks-pw-0b2a@proxy.corp:1080",
            "CACHE": "redis://:redis-pw-c3f9@cache:6379/0",
            "HTTP_PROXY": "http://proxy.corp:3128",
            "DOCS": "https://example.org/a:b@c",
        },
    )
    result = await ex.run(Command(shell="env"))
    assert "HTTP_PROXY=http://proxy.corp:3128" in result.output  # no password: kept
    assert "DOCS=https://example.org/a:b@c" in result.output  # a path, not a login
    for leaked in ("pg-pw-5d1c", "proxy-pw-77e0", "socks-pw-0b2a", "redis-pw-c3f9"):
        assert leaked not in result.output


async def test_executor_env_has_no_authorization_header_value(tmp_path: Path) -> None:
    """OpenTelemetry's exporter headers (OTEL_EXPORTER_OTLP_HEADERS=Authorization=Bearer ...)
    and the like: a credential in a value whose name says only HEADERS."""
    ex = LocalExecutor(
        str(tmp_path),
        allow_shell=True,
        base_env={
            "PATH": "/usr/bin:/bin",
            "OTEL_EXPORTER_OTLP_HEADERS": "Authorization=Bearer otel-tok-4f2a",
            "EXTRA_HEADERS": "authorization: Basic YmFzaWMtcHctOWU=",
            "GREETING": "a bearer of good news",
        },
    )
    result = await ex.run(Command(shell="env"))
    assert "GREETING=a bearer of good news" in result.output
    for leaked in ("otel-tok-4f2a", "YmFzaWMtcHctOWU="):
        assert leaked not in result.output


async def test_executor_stdin_is_dev_null(shell_executor: LocalExecutor) -> None:
    result = await shell_executor.run(Command(shell="cat; echo rc=$?", timeout=5))
    assert result.output == "rc=0\n"


async def test_executor_restricted_profile_refuses_shell(tmp_path: Path) -> None:
    with pytest.raises(PermissionDenied):
        await LocalExecutor(str(tmp_path)).run(Command(shell="ls"))


async def test_executor_revalidates_pipeline_argv(tmp_path: Path) -> None:
    ex = LocalExecutor(str(tmp_path))
    with pytest.raises(CommandRefused):
        await ex.run(Command(pipeline=(Stage(argv=("rm", "-rf", ".")),)))
    with pytest.raises(CommandRefused):
        await ex.run(Command(pipeline=(Stage(argv=("rg", "--pre=/bin/rm", "x")),)))
    with pytest.raises(CommandRefused):
        await ex.run(Command(pipeline=(Stage(argv=("find", ".", "-delete")),)))


async def test_executor_restricted_pipeline_runs_and_wires_pipes(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x1\ny2\nx3\n")
    ex = LocalExecutor(str(tmp_path))
    result = await ex.run(
        Command(pipeline=(Stage(argv=("grep", "x", "a.txt")), Stage(argv=("wc", "-l"))))
    )
    assert (result.exit_code, result.output.strip()) == (0, "2")
    result = await ex.run(Command(pipeline=(Stage(argv=("wc", "-l"), stdin_path="a.txt"),)))
    assert result.output.strip() == "3"
    result = await ex.run(Command(pipeline=(Stage(argv=("ls", "nope"), stderr="null"),)))
    assert (result.exit_code, result.output) == (2, "")


async def test_executor_restricted_commands_cannot_write(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("data\n")
    ex = LocalExecutor(str(tmp_path))
    # sed's w command is refused by the executor's check of the script (and by sed itself:
    # --sandbox is forced on).
    with pytest.raises(CommandRefused, match="the w command writes a file"):
        await ex.run(Command(pipeline=(Stage(argv=("sed", "-n", "w out.txt", "a.txt")),)))
    with pytest.raises(CommandRefused):
        await ex.run(Command(pipeline=(Stage(argv=("awk", '{print > "out.txt"}', "a.txt")),)))
    assert not (tmp_path / "out.txt").exists()


async def test_executor_git_runs_with_repo_fsmonitor_disabled(tmp_path: Path) -> None:
    repo = tmp_path
    proc = await asyncio.create_subprocess_exec("git", "init", "-q", str(repo))
    await proc.wait()
    marker = tmp_path.parent / f"{tmp_path.name}-pwned"
    with (repo / ".git" / "config").open("a") as f:
        f.write(f"[core]\n\tfsmonitor = touch {marker}\n\tpager = touch {marker}\n")
    (repo / "f.txt").write_text("x\n")
    result = await LocalExecutor(str(repo)).run(Command(pipeline=(Stage(argv=("git", "status")),)))
    assert "f.txt" in result.output
    assert not marker.exists()


async def test_executor_cancelled_restricted_pipeline_leaves_nothing(tmp_path: Path) -> None:
    # tail blocks opening a FIFO nobody writes to; its path makes the process this test's own,
    # so another suite running the same test on the machine cannot be mistaken for a leftover.
    fifo = tmp_path / f"never-written-{uuid.uuid4().hex}"
    os.mkfifo(fifo)
    marker = f"tail -n1 -- {fifo.name}".encode()  # as the harness rebuilds it
    ex = LocalExecutor(str(tmp_path))
    task = asyncio.create_task(
        ex.run(Command(pipeline=(Stage(argv=("tail", "-n", "1", fifo.name)),), timeout=60))
    )
    await _until(lambda: _tails(marker) != [], "the pipeline to start")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    # Scanned again on every poll: a process of the sandbox that was still starting when the
    # first scan ran must be gone too (a snapshot of pids made this flaky under load).
    await _until(lambda: _tails(marker) == [], "every process of the pipeline to end")


def _tails(marker: bytes) -> list[int]:
    """Live processes whose command line contains ``marker`` (the test's pipeline, and the
    sandbox around it), as ``pgrep -f`` finds them."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                    command = cmdline.read().replace(b"\0", b" ")
            except OSError:
                continue
            if marker in command and _alive(int(entry)):
                found.append(int(entry))
    return found


async def test_programs_installed_under_tmp_stay_visible_in_the_sandbox(tmp_path: Path) -> None:
    """A checkout under /tmp (as CI clones are) keeps its .venv/bin inside bubblewrap, whose
    private tmpfs would otherwise hide it (regression: grep found nothing in a /tmp clone)."""
    import shutil
    import sys

    rg = shutil.which("rg") or os.path.join(os.path.dirname(sys.executable), "rg")
    bindir = Path("/tmp") / f"rho-bin-{os.getpid()}"
    work = tmp_path / "work"
    work.mkdir()
    (work / "a.txt").write_text("needle here\n")
    bindir.mkdir(exist_ok=True)
    try:
        shutil.copy(rg, bindir / "rg")
        executor = LocalExecutor(
            str(work), search_path=(str(bindir), "/usr/bin", "/bin"), sandbox=None
        )
        result = await executor.run(
            Command(pipeline=(Stage(argv=("rg", "--no-config", "-e", "needle", "a.txt")),))
        )
    finally:
        shutil.rmtree(bindir, ignore_errors=True)
    assert result.exit_code == 0, result.output
    assert "needle here" in result.output
