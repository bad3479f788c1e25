"""TraceWriter: trace lines written off the event loop, many sessions' lines in one hand-off.

``FileSessionStore.append`` promises that its lines reached the OS when it returns (they
survive the process being killed). Writing them on the event loop made every append a
``write`` system call in the loop's time: with a thousand sessions streaming, the appends
were the longest stalls the loop-lag gauge saw (docs/benchmarks.md, issue 33's third round).

``write(handle, data)`` queues the lines and waits until a worker thread has written and
flushed them; one worker job drains everything queued while it runs, for every session of
the store, and wakes each loop once per batch. So the promise is the same (``write``
returns after the flush; an error raised by the write is raised by ``write``), the lines of
one handle keep their order, and a busy store uses one worker thread of the default
executor for all its appends, not one per append.

A caller cancelled while its lines are queued does not take them back: they are written
(as an append on the loop could not be interrupted half way either). ``settled(handle)``
waits until nothing queued for ``handle`` is left, so a session is closed only after its
last lines are written.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from typing import IO

_Done = tuple["asyncio.Future[None]", Exception | None]


class TraceWriter:
    """Writes and flushes queued lines in a worker thread (module docstring)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._queue: list[tuple[IO[bytes], bytes, asyncio.AbstractEventLoop, asyncio.Future[None]]]
        self._queue = []
        self._draining = False
        self._pending: dict[int, list[asyncio.Future[None]]] = {}
        self.batches = 0  # how many worker jobs ran (tests, diagnostics)

    async def write(self, handle: IO[bytes], data: bytes) -> None:
        """Write ``data`` to ``handle`` and flush it, in a worker thread; return after that."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        with self._lock:
            self._queue.append((handle, data, loop, future))
            start = not self._draining
            self._draining = True
        key = id(handle)
        self._pending.setdefault(key, []).append(future)
        future.add_done_callback(lambda f: self._forget(key, f))
        if start:
            try:
                _ = loop.run_in_executor(None, self._drain)  # settles the futures itself
            except RuntimeError:  # the loop's executor is shut down: write here instead
                self._drain()
        await asyncio.shield(future)

    async def settled(self, handle: IO[bytes]) -> None:
        """Return once every write queued for ``handle`` is done (its errors not raised)."""
        pending = list(self._pending.get(id(handle), ()))
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)

    def _forget(self, key: int, future: asyncio.Future[None]) -> None:
        futures = self._pending.get(key)
        if futures is not None and future in futures:
            futures.remove(future)
            if not futures:
                del self._pending[key]

    def _drain(self) -> None:
        """The worker job: write batches until the queue is empty."""
        while True:
            with self._lock:
                batch, self._queue = self._queue, []
                if not batch:
                    self._draining = False
                    return
            self.batches += 1
            done: dict[asyncio.AbstractEventLoop, list[_Done]] = {}
            for handle, data, loop, future in batch:
                error: Exception | None = None
                try:
                    handle.write(data)
                    handle.flush()
                except Exception as exc:  # noqa: BLE001 - raised to the caller, as inline
                    error = exc
                done.setdefault(loop, []).append((future, error))
            for loop, results in done.items():
                _call_soon(loop, _settle, results)


def _call_soon(loop: asyncio.AbstractEventLoop, fn: Callable[..., None], *args: object) -> None:
    # A closed loop: nobody waits for these futures any more.
    with contextlib.suppress(RuntimeError):
        loop.call_soon_threadsafe(fn, *args)


def _settle(results: list[_Done]) -> None:
    for future, error in results:
        if future.done():
            continue
        if error is None:
            future.set_result(None)
        else:
            future.set_exception(error)
