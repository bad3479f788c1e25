"""Helpers for the resource tests: a machine without ripgrep, a tool call through the real
registry, our live regex workers, and ``lag_of`` (how long work held the event loop)."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import time
from collections.abc import Awaitable
from pathlib import Path
from typing import Any, TypeVar

from rho_adapters.clock import SystemClock
from rho_adapters.local import LocalExecutor
from rho_adapters.local.line_search import ProcessLineSearcher
from rho_domain.messages import ToolCall
from rho_domain.permissions import PermissionProfile, readonly_profile
from rho_domain.tools.base import ToolContext, ToolOutput
from rho_domain.tools.factory import build_registry

T = TypeVar("T")
RO = readonly_profile()
# The longest one callback may hold the event loop. Debug mode times callbacks in wall time,
# so on 2 cores shared by 4 test workers a 20 ms callback can read 100 ms (measured: 0.106 s
# in a full run); each case here held the loop a second or more before its fix (a 600,000-row
# CSV parsed on the loop, a catastrophic regex, 24 x **/ in a glob).
STALL = 0.25
TICKING = 0.5  # the longest gap between 10 ms ticks, load included


class NoRipgrep(LocalExecutor):
    """The machine without ripgrep: grep and glob take their fallbacks."""

    async def which(self, program: str) -> str | None:
        return None if program == "rg" else await super().which(program)


async def call(
    ws: Path,
    tool: str,
    *,
    profile: PermissionProfile = RO,
    timeout: float | None = None,
    **args: Any,
) -> ToolOutput:
    registry = build_registry(profile, line_searcher=ProcessLineSearcher())
    ctx = ToolContext(
        session_id="s",
        call_id="c",
        executor=NoRipgrep(str(ws), base_env={"PATH": "/usr/bin:/bin"}),
        profile=profile,
        clock=SystemClock(),
    )
    call = ToolCall(id="c", name=tool, arguments=json.dumps(args))
    return await registry.dispatch(call, ctx, timeout=timeout)


def worker_processes() -> list[int]:
    """Our live regex workers (children started with ``-I -c``)."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == os.getpid() and b"-I" in cmdline and b"-c" in cmdline:
            found.append(int(pid))
    return found


class _SlowCallbacks(logging.Handler):
    """Collects asyncio's debug-mode reports of callbacks that held the loop too long."""

    def __init__(self) -> None:
        super().__init__()
        self.durations: list[float] = []

    def emit(self, record: logging.LogRecord) -> None:
        found = re.search(r"took ([0-9.]+) seconds", record.getMessage())
        if found:
            self.durations.append(float(found.group(1)))


async def lag_of(work: Awaitable[T]) -> tuple[T, float, float]:
    """``work``'s result, the longest time one callback held the event loop while it ran,
    and its time.

    The loop runs in debug mode, which times every callback (a task step included): that is
    work on the loop, whatever else the machine does. A probe that ticks every 10 ms checks
    besides that the loop really kept turning (``TICKING``): on 2 shared cores at a load of
    8, the gap between ticks alone also counts the time the OS gave other processes.
    """
    loop = asyncio.get_running_loop()
    slow = _SlowCallbacks()
    logger = logging.getLogger("asyncio")
    debug, threshold = loop.get_debug(), loop.slow_callback_duration
    loop.set_debug(True)
    loop.slow_callback_duration = STALL / 4
    logger.addHandler(slow)
    worst = 0.0
    done = asyncio.Event()

    async def probe() -> None:
        nonlocal worst
        last = loop.time()
        while not done.is_set():
            await asyncio.sleep(0.01)
            now = loop.time()
            worst = max(worst, now - last)
            last = now

    ticker = asyncio.create_task(probe())
    await asyncio.sleep(0.02)  # the probe is ticking before the work starts
    started = time.monotonic()
    try:
        result = await work
    finally:
        elapsed = time.monotonic() - started
        done.set()
        await ticker
        logger.removeHandler(slow)
        loop.set_debug(debug)
        loop.slow_callback_duration = threshold
    assert worst < TICKING, f"the loop did not tick for {worst:.3f} s"
    return result, max(slow.durations, default=0.0), elapsed
