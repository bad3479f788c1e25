"""in_thread: CPU work off the event loop, told to stop when its caller gives up.

Parsing a spreadsheet or a CSV file is CPU work; on the event loop it stalls every session
of a server. In a thread it does not, but a cancelled ``asyncio.to_thread`` leaves its thread
running to the end. So the work receives a ``Stop`` and calls ``Stop.check()`` at each step
(a row): once the awaiting task is cancelled (the tool's deadline, a cancelled run), the
next check raises ``Stopped`` and the thread ends. A step must itself be bounded (a row of
a size-capped file).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


class Stopped(Exception):
    """Raised by ``Stop.check`` in the worker thread once its caller has given up."""


class Stop:
    """The flag a worker thread checks at each step."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def set(self) -> None:
        """Ask the worker to stop at its next check."""
        self._event.set()

    def check(self) -> None:
        """Raise ``Stopped`` when the caller has given up."""
        if self._event.is_set():
            raise Stopped


async def in_thread(work: Callable[[Stop], T]) -> T:
    """``work(stop)`` in a thread; when the caller is cancelled, ``stop`` is set (the thread
    ends at its next check) and the cancellation propagates."""
    stop = Stop()
    try:
        return await asyncio.to_thread(work, stop)
    finally:
        stop.set()
