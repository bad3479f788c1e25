"""A tool's processes die with the agent, even when the agent is killed with SIGKILL.

The agent is forked from the CLI's zygote (``program_zygote``, which has imported the executor):
a process of its own, whose start is not what these tests are about; ``send_signal`` kills the
agent itself, not the zygote's client.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))  # program_zygote
from program_zygote import popen

AGENT = textwrap.dedent(
    """
    import asyncio, sys
    from rho_adapters.local import LocalExecutor
    from rho_domain.ports.executor import Command, Stage

    async def main():
        shell, sandbox, seconds = sys.argv[1] == "shell", sys.argv[2] == "on", sys.argv[3]
        executor = LocalExecutor(sys.argv[4], allow_shell=shell, sandbox=sandbox)
        if shell:  # bash forks: a background job and a foreground one
            command = Command(shell=f"sleep {seconds} & sleep {seconds}; echo done", timeout=60)
        else:  # sleep is not a restricted program; seq counting far into wc runs as long and
            # writes nothing to the agent's pipe (whose closing would end it with SIGPIPE)
            stages = (Stage(argv=("seq", seconds)), Stage(argv=("wc", "-l")))
            command = Command(pipeline=stages, timeout=60)
        print("started", flush=True)
        await executor.run(command)

    asyncio.run(main())
    """
)


def _processes(seconds: str) -> list[int]:
    """Pids of ``sleep SECONDS`` or ``seq SECONDS`` (by any path to the program)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if not entry.name.isdigit():
                continue
            argv = (entry / "cmdline").read_bytes().split(b"\x00")
        except OSError:
            continue
        program = argv[0].rpartition(b"/")[2]
        args = argv[2:] if argv[1:2] == [b"--"] else argv[1:]  # the harness's "--" (seq)
        if program in (b"sleep", b"seq") and args[:1] == [seconds.encode()]:
            found.append(int(entry.name))
    return found


def _wait_for(predicate: object, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return True
        time.sleep(0.02)
    return False


@pytest.mark.parametrize(
    ("mode", "sandbox", "seconds"),
    [("shell", "off", "41.25"), ("argv", "off", "41500000000"), ("argv", "on", "41750000000")],
    ids=["unrestricted-shell", "restricted-no-bwrap", "restricted-bwrap"],
)
def test_killing_the_agent_with_sigkill_kills_its_tool(
    tmp_path: Path, mode: str, sandbox: str, seconds: str
) -> None:
    if sandbox == "on" and not any(
        os.access(os.path.join(d, "bwrap"), os.X_OK) for d in os.environ["PATH"].split(":")
    ):
        pytest.skip("bubblewrap is not installed")
    script = tmp_path / "agent.py"
    script.write_text(AGENT)
    agent = popen(
        "rho",
        [sys.executable, str(script), mode, sandbox, seconds, str(tmp_path)],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,  # the agent is not the tool's ancestor group
    )
    try:
        assert agent.stdout is not None
        assert agent.stdout.readline() == "started\n"
        expected = 2 if mode == "shell" else 1
        assert _wait_for(lambda: len(_processes(seconds)) == expected), _processes(seconds)
        agent.send_signal(signal.SIGKILL)
        agent.wait(timeout=10)
        assert _wait_for(lambda: not _processes(seconds)), "the tool outlived the agent"
    finally:
        for pid in _processes(seconds):
            os.kill(pid, signal.SIGKILL)
        if agent.poll() is None:
            agent.kill()
