"""How a Daytona command's end is told: its own exit code is never taken for the sandbox's
deadline, and what it left running ends with the call, as on the local machine."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from daytona_support import Rig, closing, make_rig

from rho_domain.errors import ToolError
from rho_domain.ports.executor import Command, Stage


@pytest.fixture
async def rig(tmp_path: Path) -> AsyncIterator[Rig]:
    async for r in closing(make_rig(tmp_path, allow_shell=True)):
        yield r


async def test_an_exit_code_of_124_or_137_is_the_command_s_own(rig: Rig) -> None:
    # Before, an answer with exit code 124 or 137 that came after the command's timeout was
    # taken for the sandbox's deadline (GNU timeout's codes): reported timed out, its exit
    # code dropped, although the command had ended by itself (here within its deadline).
    for code in (124, 137):
        result = await rig.executor.run(Command(shell=f"sleep 0.3; exit {code}", timeout=0.2))
        assert (result.exit_code, result.timed_out) == (code, False), result


async def test_what_a_shell_command_left_running_ends_with_the_call(rig: Rig) -> None:
    # Before, a process that left the command's process group (setsid) or its output pipe
    # (nohup ... &) outlived the call in the sandbox; one that kept the output pipe held the
    # answer until the daemon's timeout, which then reported the finished command timed out.
    # A program that cleared its environment (env -i) escaped the RHO_CALL_MARK sweep too:
    # it keeps the call's descriptor (scripts.MARK_FD). One that closed that descriptor as
    # well (as a daemon closing all of its own does) escaped both: it keeps the call's
    # file-locks limit (scripts.LIMIT_MARK).
    pids = rig.ws / "pids"
    left = (
        f"setsid sh -c 'echo $$ >> {pids}; exec sleep 30' & "
        f"nohup sh -c 'echo $$ >> {pids}; exec sleep 30' >/dev/null 2>&1 & "
        f"env -i setsid sh -c 'echo $$ >> {pids}; exec sleep 30' >/dev/null 2>&1 & "
        f"(exec 8>&-; env -i setsid sh -c 'echo $$ >> {pids}; exec sleep 30' >/dev/null 2>&1 &); "
        f"sleep 0.2; echo started"
    )
    result = await rig.executor.run(Command(shell=left, timeout=5))
    assert (result.output, result.exit_code, result.timed_out) == ("started\n", 0, False)
    assert await _all_ended([int(p) for p in pids.read_text().split()])

    # Ended by its deadline. A daemon that kills the command's group at the timeout (408)
    # killed the script that was to sweep too: a setsid child lived on. One that ignores the
    # timeout: a setsid child holding the output pipe held the call for its whole life.
    escaped = f"setsid sh -c 'echo $$ >> {pids}; exec sleep 30'"
    for daemon, stuck in (("kill", f"{escaped} >/dev/null 2>&1 &"), ("ignore", f"{escaped} &")):
        rig.fake.on_timeout = daemon  # type: ignore[assignment]
        pids.unlink()
        command = Command(shell=f"{stuck} echo $$ >> {pids}; sleep 30", timeout=0.2)
        result = await rig.executor.run(command)
        assert (result.exit_code, result.timed_out) == (None, True)
        assert await _all_ended([int(p) for p in pids.read_text().split()]), daemon


async def _all_ended(pids: list[int]) -> bool:
    """Whether every pid has exited (zombies count), killing the survivors afterwards."""
    try:
        for _ in range(500):
            if not any(_alive(pid) for pid in pids):
                return True
            await asyncio.sleep(0.01)
        return False
    finally:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as status:
            return status.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):  # reaped before, or between open and read
        return False


@pytest.mark.parametrize("seconds", [float("nan"), float("inf"), 0, -5.0, True])
def test_a_command_s_timeout_is_a_positive_finite_number(seconds: float) -> None:
    # Before, Daytona's run raised Python's ValueError (NaN) or OverflowError (infinity) from
    # math.ceil, and gave 0 or -5 a second, while the local executor ran NaN without a
    # deadline and ended 0 at once: the value is refused where it is made, for both.
    with pytest.raises(ToolError, match=r"timeout must be a number of seconds, more than 0"):
        Command(shell="true", timeout=seconds)


def test_a_nul_in_a_shell_command_or_its_environment_is_refused_where_it_is_made() -> None:
    # Before, Daytona's sandbox dropped a NUL silently: `r<NUL>m -rf x`, which the approver
    # was shown with its \x00 (and the destructive check could not read, so asked about),
    # ran as `rm -rf x`; the local executor raised Python's ValueError instead.
    with pytest.raises(ToolError, match=r"command line holds a NUL character \(at character 2"):
        Command(shell="r\0m -rf x")
    with pytest.raises(ToolError, match="environment holds a NUL character"):
        Command(shell="true", env={"A": "x\0y"})


async def test_a_nul_never_reaches_the_sandbox_s_shell(rig: Rig) -> None:
    # Before, a here-document's NUL (a restricted stage's stdin_data) was dropped by the
    # decoder's command substitution: `wc -c` counted 2 bytes of "a<NUL>b", locally 3.
    fed = Stage(argv=("wc", "-c"), stdin_data="a\0b")
    with pytest.raises(ToolError, match="a NUL character cannot reach the Daytona sandbox"):
        await rig.executor.run(Command(pipeline=(fed,)))


async def test_a_call_s_sweep_leaves_a_concurrent_call_s_processes_alone(rig: Rig) -> None:
    # Each call's marks are its own (token, descriptor file, file-locks limit): the sweep of
    # a call that ends first must not kill what another call, still running, started.
    slow = rig.executor.run(Command(shell="sleep 0.5 & wait; echo alive", timeout=5))
    quick = rig.executor.run(Command(shell="sleep 0.1 & wait", timeout=5))
    ran = await asyncio.gather(slow, quick)
    assert [(r.output, r.exit_code) for r in ran] == [("alive\n", 0), ("", 0)]
