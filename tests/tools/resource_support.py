"""Helpers for the resource tests: a machine without ripgrep, a tool call through the real
registry, our live regex workers, and ``lag_of`` (how long work held the event loop)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import threading
import time
from collections.abc import Awaitable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from core_waits import waited, waits

from rho_adapters.clock import SystemClock
from rho_adapters.local import LocalExecutor
from rho_adapters.local.line_search import ProcessLineSearcher
from rho_domain.messages import ToolCall
from rho_domain.permissions import PermissionProfile, readonly_profile
from rho_domain.tools.base import ToolContext, ToolOutput
from rho_domain.tools.factory import build_registry

T = TypeVar("T")
RO = readonly_profile()
# The longest one callback may hold the event loop, less the time the process's threads
# waited for a core (``_callback_times``); each case here held the loop a second or more
# before its fix (a 600,000-row CSV parsed on the loop, a catastrophic regex, 24 x **/ in a
# glob).
STALL = 0.25
TICKING = 0.5  # the longest gap between 10 ms ticks, less the waits for a core


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


async def workers_left(within: float = 30.0) -> list[int]:
    """Our regex workers still alive once none is left or ``within`` seconds have passed: a
    kill is sent at once, the process's end is the OS's (a fixed sleep was a guess at it)."""
    deadline = time.monotonic() + within
    while (found := worker_processes()) and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    return found


@contextlib.contextmanager
def _callback_times(loop: asyncio.AbstractEventLoop) -> Iterator[list[float]]:
    """How long each callback (a task step included) run by ``loop`` held its thread, less
    the time the process's threads waited for a core (``core_waits``): the work itself,
    blocking calls included, not the time the OS gave other processes (on 2 cores shared by
    4 test workers a 3 ms step read 335 ms in asyncio's debug mode, which times in wall
    time); never less than the thread's own CPU time in the callback."""
    times: list[float] = []
    run = asyncio.Handle._run
    thread = threading.get_ident()

    def timed(handle: asyncio.Handle) -> None:
        if threading.get_ident() != thread:
            return run(handle)
        # Read the waits outside the timed span: reading /proc releases the GIL, and taking
        # it back behind a worker thread's long C call is not this callback's work.
        before = waits()
        started, computed = time.perf_counter(), time.thread_time()
        try:
            return run(handle)
        finally:
            ended, computed = time.perf_counter(), time.thread_time() - computed
            # At least its own CPU time, which no load makes: the waits subtracted are every
            # thread's, and at load 19 another thread's waits took a held loop to 0.11 s
            times.append(max(computed, ended - started - waited(before, waits())))

    # Handle._run is where asyncio runs every callback (debug mode times it from outside).
    asyncio.Handle._run = timed  # type: ignore[method-assign,assignment]
    try:
        yield times
    finally:
        asyncio.Handle._run = run  # type: ignore[method-assign]


async def lag_of(work: Awaitable[T]) -> tuple[T, float, float]:
    """``work``'s result, the longest time one callback held the event loop while it ran,
    and its time.

    Every callback is timed (``_callback_times``): that is work on the loop, whatever else
    the machine does. A probe that ticks every 10 ms checks besides that the loop really kept
    turning (``TICKING``), which a thread holding the GIL would stop without any callback
    being long: the gap between two ticks, less the time the process's threads waited for a
    core meanwhile (in wall time alone a gap read 0.66 s with 6 busy loops beside 4 test
    workers on 2 cores).
    """
    loop = asyncio.get_running_loop()
    worst = 0.0
    done = asyncio.Event()

    async def probe() -> None:
        nonlocal worst
        last, before = loop.time(), waits()
        while not done.is_set():
            await asyncio.sleep(0.01)
            now, after = loop.time(), waits()
            worst = max(worst, now - last - waited(before, after))
            last, before = now, after

    ticker = asyncio.create_task(probe())
    with _callback_times(loop) as times:
        # The probe is ticking before the work starts, and the step that runs the work's
        # start is this task's next one: timed, as the patch is in place when it begins.
        await asyncio.sleep(0.02)
        started = time.monotonic()
        try:
            result = await work
        finally:
            elapsed = time.monotonic() - started
            done.set()
            await ticker
    assert worst < TICKING, f"the loop did not tick for {worst:.3f} s"
    return result, max(times, default=0.0), elapsed


async def calls_on_loop(work: Awaitable[T]) -> tuple[T, int]:
    """``work``'s result and how many calls (Python functions and C builtins) ran on the
    loop's thread while it ran: a count, not a time, so the machine's load cannot change
    it. Work moved to a thread is not counted (``sys.setprofile`` hooks this thread only);
    work left on the loop costs calls in proportion to its input."""
    count = 0

    def counted(frame: object, event: str, arg: object) -> None:
        nonlocal count
        if event in ("call", "c_call"):
            count += 1

    sys.setprofile(counted)
    try:
        result = await work
    finally:
        sys.setprofile(None)
    return result, count
