"""A guarded command's rlimits are set by the guard, with no ``prlimit`` exec in front (suite26b).

A shell command and a restricted command without bubblewrap run under the guard
(``local/guard.py``), a fresh single-threaded Python program that forks the command: its
child sets the rlimits between the fork and the exec, so the limits hold from the command's
first instruction (the exec itself runs under them) and nothing is raisable. Before, every
such command ran ``prlimit`` first, one more exec (about 1 ms of CPU) for what the guard can
do. A sandboxed command has no guard: ``prlimit`` still sets its limits, in front of bwrap.

Each test runs real processes through ``LocalExecutor.run``; the search path holds a
``prlimit`` that records each use, then runs the real one.
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

from rho_adapters.local import LocalExecutor
from rho_adapters.local.executor import sandbox_available
from rho_adapters.local.guard import guarded
from rho_domain.limits import ResourceLimits
from rho_domain.ports.executor import Command, Stage

REAL_PRLIMIT = shutil.which("prlimit")
pytestmark = pytest.mark.skipif(REAL_PRLIMIT is None, reason="util-linux prlimit not installed")
LIMITS = ResourceLimits(memory_mib=512, cpu_seconds=7, output_mib=1, file_size_mib=2)
# bash's ulimit -v (KiB), -t (s), -f (1 KiB blocks under bash's POSIX-less default), -c
SHOWN = "ulimit -H -v; ulimit -v; ulimit -H -t; ulimit -H -f; ulimit -f; ulimit -c"


def _search_path(tmp_path: Path) -> tuple[Path, list[str]]:
    """A bin directory whose ``prlimit`` appends its argv to ``log`` then runs the real one,
    first on the search path, and the log's path."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    log = tmp_path / "prlimit.log"
    wrapper = bindir / "prlimit"
    wrapper.write_text(f'#!/bin/sh\necho "$*" >> {log}\nexec {REAL_PRLIMIT} "$@"\n')
    wrapper.chmod(0o755)
    return log, [str(bindir), "/usr/local/bin", "/usr/bin", "/bin"]


def _uses(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


async def test_a_shell_command_runs_under_the_limits_with_no_prlimit(tmp_path: Path) -> None:
    work = tmp_path / "w"
    work.mkdir()
    log, search_path = _search_path(tmp_path)
    executor = LocalExecutor(
        str(work),
        allow_shell=True,
        search_path=search_path,
        base_env={"PATH": "/usr/bin:/bin"},
        limits=LIMITS,
    )
    result = await executor.run(Command(shell=SHOWN, timeout=60))
    # hard = soft: nothing the command runs can raise them
    assert result.output.split() == ["524288", "524288", "8", "2048", "2048", "0"], result
    assert _uses(log) == []  # the guard set them: no prlimit exec


@pytest.mark.parametrize("sandbox", [False, True], ids=["guard", "bwrap"])
async def test_the_exec_itself_runs_under_the_memory_limit(tmp_path: Path, sandbox: bool) -> None:
    """A 1 MiB address space is in force at the exec: ``echo`` never runs its first
    instruction (set after the exec, by anyone, it would have printed). Without bwrap the
    restricted command runs under the guard, which set it with no prlimit."""
    if sandbox and not sandbox_available():
        pytest.skip("bubblewrap not installed")
    work = tmp_path / "w"
    work.mkdir()
    log, search_path = _search_path(tmp_path)
    tiny = ResourceLimits(memory_mib=1, cpu_seconds=60, output_mib=1, file_size_mib=1)
    executor = LocalExecutor(str(work), search_path=search_path, sandbox=sandbox, limits=tiny)
    result = await executor.run(
        Command(pipeline=(Stage(argv=("echo", "first-instruction")),), timeout=60)
    )
    assert "first-instruction" not in result.output, result
    assert result.exit_code not in (0, None)
    assert len(_uses(log)) == (1 if sandbox else 0)  # bwrap has no guard: prlimit in front


async def test_a_limit_the_guard_cannot_set_runs_nothing(tmp_path: Path) -> None:
    """A limit past what the kernel allows (open files past ``fs.nr_open``: refused even to
    root; the profile's are kept within the agent's own, ``rlimits._within_own``, so only a
    guard given such a limit by hand meets this): the command is not run, and stderr says
    which limit."""
    ceiling = int(Path("/proc/sys/fs/nr_open").read_text())
    marker = tmp_path / "ran"
    too_many = [("RLIMIT_NOFILE", ceiling + 1, ceiling + 1)]
    argv = guarded(("/bin/sh", "-c", f"touch {marker}"), too_many)
    proc = await asyncio.create_subprocess_exec(
        *argv, stderr=asyncio.subprocess.PIPE, start_new_session=True
    )
    _, err = await proc.communicate()
    assert proc.returncode == 126
    assert b"cannot set RLIMIT_NOFILE" in err, err
    assert not marker.exists()
