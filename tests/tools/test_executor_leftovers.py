"""What a command leaves running ends with the command, whether or not it holds the output pipe.

The unrestricted shell runs ``bash -c`` under the guard (``local/guard.py``). Before, only a
leftover still holding the output pipe was killed when the command ended: ``nohup cmd
>/dev/null &`` stayed in the command's group and ``setsid cmd &`` left it, and both ran on after
the call, and after the agent was killed, reparented to pid 1. Inside bubblewrap the PID
namespace already ends them; this is the unsandboxed side.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from rho_adapters.local import LocalExecutor
from rho_domain.ports.executor import Command

# Each leftover writes its pid to `pids` before the command's last line runs; none holds the
# output pipe (all redirect it), so the pipe's end says nothing of them.
LEFTOVERS = "\n".join(
    (
        "nohup sleep 1000 >/dev/null 2>&1 & echo $! >> pids",  # stays in the group
        "setsid sleep 1000 </dev/null >/dev/null 2>&1 & echo $! >> pids",  # leaves it
        # a new session whose own child is reparented to the guard only when it is killed
        "setsid sh -c 'sleep 1000 & echo $! >> pids; wait' </dev/null >/dev/null 2>&1 &",
        "while [ $(wc -l < pids) -lt 3 ]; do sleep 0.01; done",
        "echo output kept",
        "exit 3",
    )
)


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for pid 1 to reap it does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def test_a_commands_leftovers_end_with_it_and_its_output_and_status_are_kept(
    tmp_path: Path,
) -> None:
    executor = LocalExecutor(str(tmp_path), allow_shell=True)
    (tmp_path / "pids").write_text("")

    result = asyncio.run(executor.run(Command(shell=LEFTOVERS, timeout=60)))

    pids = [int(line) for line in (tmp_path / "pids").read_text().split()]
    assert len(pids) == 3
    assert [pid for pid in pids if _alive(pid)] == []
    assert result.exit_code == 3
    assert "output kept" in result.output
    assert not result.timed_out
