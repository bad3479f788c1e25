"""lag_of: how long work held the event loop, for the tests that no tool stalls it."""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Awaitable
from typing import TypeVar

T = TypeVar("T")
STALL = 0.1  # the longest one callback may hold the event loop
TICKING = 0.5  # the longest gap between 10 ms ticks, load included


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
