"""Resource limits on every command (issue 32 item 6), on real processes.

Memory (``RLIMIT_AS``), CPU time (``RLIMIT_CPU``), file size (``RLIMIT_FSIZE`` and the
sandbox's bounded tmpfs) and output (the process group is killed past ``output_mib``): each is
hit by a real program, through ``LocalExecutor.run`` with and without bubblewrap, and the
result names the limit. The agent process itself must stay small whatever the command does.
"""

from __future__ import annotations

import asyncio
import os
import resource
import subprocess
import uuid
from pathlib import Path

import pytest

from rho_adapters.clock import SystemClock
from rho_adapters.local import LocalExecutor
from rho_adapters.local.executor import sandbox_available
from rho_adapters.local.rlimits import Rlimits, limited
from rho_adapters.local.seccomp import socket_filter
from rho_domain.errors import ConfigError
from rho_domain.limits import ResourceLimits, limit_hit
from rho_domain.permissions import PermissionProfile, developer_profile, readonly_profile
from rho_domain.ports.executor import Command, Stage
from rho_domain.tools.base import ToolContext
from rho_domain.tools.bash import BashHandler
from rho_entry.config.config_files import load_profile_file

MODES = [
    pytest.param(
        True,
        id="bwrap",
        marks=pytest.mark.skipif(not sandbox_available(), reason="bubblewrap not installed"),
    ),
    pytest.param(False, id="no-bwrap"),
]
SMALL = ResourceLimits(memory_mib=128, cpu_seconds=60, output_mib=1, file_size_mib=16)


def _agent_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _pipeline(*argvs: tuple[str, ...], timeout: float = 60) -> Command:
    return Command(pipeline=tuple(Stage(argv=argv) for argv in argvs), timeout=timeout)


@pytest.mark.parametrize("sandbox", MODES)
async def test_jq_building_a_huge_array_ends_at_the_memory_limit(
    tmp_path: Path, sandbox: bool
) -> None:
    # 32 MiB, not SMALL's 128: jq's CPU grows with the array it builds before the limit
    # (1.3 s at 128 MiB, 0.4 s at 32), and 32 MiB is still far past what jq needs to start.
    tight = ResourceLimits(memory_mib=32, cpu_seconds=60, output_mib=1, file_size_mib=16)
    executor = LocalExecutor(str(tmp_path), sandbox=sandbox, limits=tight)
    result = await executor.run(_pipeline(("jq", "-n", "[range(1e9)]")))
    assert result.limit == "memory", result
    assert result.exit_code not in (0, None)
    assert not result.timed_out
    assert _agent_rss_mib() < 512  # the agent never held the command's memory


@pytest.mark.parametrize("sandbox", MODES)
async def test_sort_of_an_endless_stream_ends_at_the_file_size_limit(
    tmp_path: Path, sandbox: bool
) -> None:
    """sort keeps its buffer within RLIMIT_AS and spills to temporary files: the sandbox's
    private /tmp is bounded, and without a sandbox no file may grow at all."""
    executor = LocalExecutor(str(tmp_path), sandbox=sandbox, limits=SMALL)
    result = await executor.run(_pipeline(("seq", "1", "inf"), ("sort", "-S", "1G")))
    assert result.limit == "file size", result
    assert not result.timed_out
    assert not list(tmp_path.iterdir())
    assert _agent_rss_mib() < 512


@pytest.mark.parametrize("sandbox", MODES)
async def test_a_cpu_spin_ends_at_the_cpu_limit(tmp_path: Path, sandbox: bool) -> None:
    limits = ResourceLimits(cpu_seconds=1)
    executor = LocalExecutor(str(tmp_path), sandbox=sandbox, limits=limits)
    result = await executor.run(_pipeline(("sha256sum", "/dev/zero"), timeout=120))
    assert (result.exit_code, result.limit) == (128 + 24, "cpu"), result  # SIGXCPU
    assert result.duration < 60


@pytest.mark.parametrize("sandbox", MODES)
async def test_a_flood_of_output_is_cut_and_its_process_killed(
    tmp_path: Path, sandbox: bool
) -> None:
    marker = uuid.uuid4().hex
    executor = LocalExecutor(str(tmp_path), sandbox=sandbox, limits=SMALL)
    result = await executor.run(_pipeline(("seq", "-f", f"%g{marker}", "1", "inf"), timeout=120))
    assert result.limit == "output", result
    assert result.exit_code == 128 + 9  # SIGKILL, not the end of the stream
    assert result.duration < 30
    # exactly 1 MiB was read: the 256 KiB the command keeps, and the rest counted
    assert result.omitted_bytes == (1 << 20) - Command(shell="x").max_output_bytes
    for _ in range(1000):  # SIGKILL and a PID namespace's teardown take a moment
        if not _running(marker):
            break
        await asyncio.sleep(0.01)
    assert _running(marker) == []


def _running(marker: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
                state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if marker.encode() in cmdline and state != "Z":
                found.append(int(entry))
    return found


async def test_unrestricted_commands_are_limited_too(tmp_path: Path) -> None:
    executor = LocalExecutor(
        str(tmp_path), allow_shell=True, base_env={"PATH": "/usr/bin:/bin"}, limits=SMALL
    )
    flood = await executor.run(Command(shell="yes", timeout=60))
    assert (flood.limit, flood.exit_code) == ("output", 137)
    memory = await executor.run(Command(shell="python3 -c 'x = bytearray(1 << 30)'"))
    assert memory.limit == "memory", memory
    assert "MemoryError" in memory.output
    big = await executor.run(Command(shell="head -c 20000000 /dev/zero > big; echo rc=$?"))
    assert "rc=153" in big.output  # SIGXFSZ at 16 MiB
    assert (tmp_path / "big").stat().st_size == 16 << 20


async def test_legit_commands_run_under_the_default_limits(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("".join(f"line {i}\n" for i in range(100_000)))
    for profile in (readonly_profile(), developer_profile()):
        executor = LocalExecutor(str(tmp_path), limits=profile.limits)
        result = await executor.run(_pipeline(("sort", "-r", "a.txt"), ("head", "-n", "1")))
        assert (result.exit_code, result.output, result.limit) == (0, "line 99999\n", None)


async def test_the_bash_tool_says_which_limit_stopped_the_command(tmp_path: Path) -> None:
    profile = PermissionProfile(name="small", limits=SMALL)
    ctx = ToolContext(
        session_id="s",
        call_id="c",
        executor=LocalExecutor(str(tmp_path), limits=SMALL),
        profile=profile,
        clock=SystemClock(),
    )
    out = await BashHandler(restricted=True, timeout=60).handle(
        {"command": "jq -n '[range(1e9)]'"}, ctx
    )
    assert "stopped by the memory limit (128 MiB)" in out.content
    assert out.metadata["limit"] == "memory"
    out = await BashHandler(restricted=True, timeout=60).handle({"command": "seq 1 inf"}, ctx)
    assert "stopped by the output limit (1 MiB): the process group was killed" in out.content


@pytest.mark.parametrize("prlimit", ["/usr/bin/prlimit", None], ids=["prlimit", "python"])
def test_both_launchers_set_the_limits(prlimit: str | None) -> None:
    if prlimit is not None and not os.path.exists(prlimit):
        pytest.skip("util-linux prlimit not installed")
    limits = Rlimits(memory=256 << 20, cpu_seconds=7, file_size=1 << 20, processes=5000)
    argv = limited(("/bin/bash", "-c", "ulimit -v; ulimit -t; ulimit -f; ulimit -u"), limits,
                   prlimit=prlimit)  # fmt: skip
    out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout.split()
    assert out == [str(256 << 10), "7", str((1 << 20) // 1024), "5000"]


_UNDER_OWN = """
import resource, subprocess, sys
from rho_adapters.local.rlimits import Rlimits, limited
own = 1 << 20  # the user's `ulimit -f 1024` (soft and hard) and `ulimit -t 600`
resource.setrlimit(resource.RLIMIT_FSIZE, (own, own))
resource.setrlimit(resource.RLIMIT_CPU, (600, 600))
limits = Rlimits(cpu_seconds=3600, file_size=1 << 30)  # the profile's, looser
for prlimit in sys.argv[1:]:
    argv = limited(("/bin/bash", "-c", "ulimit -f; ulimit -t"), limits, prlimit=prlimit or None)
    done = subprocess.run(argv, capture_output=True, text=True)
    print(done.returncode, *done.stdout.split(), done.stderr.strip() or "-")
"""


def test_a_command_runs_under_the_users_own_lower_hard_limits() -> None:
    """Under a hard ``ulimit -f`` (or ``-t``, ``-v``) below the profile's limit, every command
    failed before it started: prlimit (and the Python launcher) could not raise the limit."""
    import sys

    launchers = ["/usr/bin/prlimit", ""] if os.path.exists("/usr/bin/prlimit") else [""]
    done = subprocess.run(
        [sys.executable, "-c", _UNDER_OWN, *launchers], capture_output=True, text=True, check=True
    )
    assert done.stdout.splitlines() == ["0 1024 600 -"] * len(launchers), done.stdout


def test_limit_hit_reads_the_exit() -> None:
    limits = ResourceLimits()
    assert limit_hit(152, "", limits) == "cpu"
    assert limit_hit(153, "", limits) == "file size"
    assert limit_hit(1, "sort: memory exhausted\n", limits) == "memory"
    assert limit_hit(0, "out of memory", limits) is None  # a success is never a limit
    assert limit_hit(1, "grep: no match", limits) is None
    assert limit_hit(134, "jq: error: cannot allocate memory", limits) == "memory"
    assert limit_hit(1, "Cannot allocate memory", ResourceLimits(memory_mib=None)) is None


def test_seccomp_filter_is_built_for_known_machines_only() -> None:
    assert socket_filter("riscv64") is None
    for machine in ("x86_64", "aarch64"):
        program = socket_filter(machine)
        assert program is not None
        assert len(program) == 10 * 8  # ten struct sock_filter


def test_profile_yaml_limits_block(tmp_path: Path) -> None:
    path = tmp_path / "ops.yaml"
    path.write_text("base: developer\nlimits:\n  memory_mib: 2048\n  output_mib: null\n")
    limits = load_profile_file(path).limits
    assert (limits.memory_mib, limits.output_mib) == (2048, None)
    assert limits.cpu_seconds == developer_profile().limits.cpu_seconds  # the base's
    path.write_text("limits: {cpu_seconds: 5}\n")
    assert load_profile_file(path).limits == ResourceLimits(cpu_seconds=5)
    path.write_text("limits: {memory: 5}\n")
    with pytest.raises(
        ConfigError, match=r"unknown key 'memory' \(did you mean 'memory_mib'\?\) @ profile.limits"
    ):
        load_profile_file(path)
    path.write_text("limits: {cpu_seconds: -1}\n")
    with pytest.raises(ConfigError, match=r"limits\.cpu_seconds: expected a positive number"):
        load_profile_file(path)
