"""Helpers for runtime tests that watch real processes."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rho_entry.runtime import AgentHandle, AgentRuntime, HandleStatus


def processes_with(marker: str) -> list[int]:
    """Pids (other than ours) whose command line contains ``marker``, read from /proc."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or entry.name == str(os.getpid()):
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if marker.encode() in cmdline:
            found.append(int(entry.name))
    return found


def clean_env(home: Path, **extra: str) -> dict[str, str]:
    """A minimal environment: no API keys or model settings leak in from the host."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "RHO_AGENT_HOME": str(home / "rho"),
        "NO_COLOR": "1",
        "LANG": "C.UTF-8",
    }
    if os.environ.get("PYTHONPATH"):  # the sources under test (a worktree's src)
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    env.update(extra)
    return env


def status_now(handle: AgentHandle) -> HandleStatus:
    """The handle's status at this moment: a call, so that a type checker does not carry an
    earlier ``assert handle.status is ...`` narrowing across the awaits that change it."""
    return handle.status


def state_now(runtime: AgentRuntime) -> str:
    """The runtime's state at this moment (see ``status_now``)."""
    return runtime.state
