"""A run's events as an async iterator: ``Session.stream`` and the facade's ``stream``.

Imported with the first stream: a run that is awaited (``Session.run``) never loads it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rho_domain import events as ev
    from rho_domain.loop.journal import Listener


async def stream_events(
    run: Callable[[Listener], Coroutine[Any, Any, object]], cancel: Callable[[], None]
) -> AsyncIterator[ev.Event]:
    """Start ``run(listener)`` and yield every event its listener receives, then its outcome
    (an exception it raised is raised here). Leaving the loop early calls ``cancel`` and waits
    for the run to stop: ``Session.stream``, and a wrapper whose ``run`` adds to the domain's."""
    queue: asyncio.Queue[ev.Event | None] = asyncio.Queue()
    task = asyncio.create_task(run(queue.put_nowait))
    task.add_done_callback(lambda _: queue.put_nowait(None))
    try:
        while (item := await queue.get()) is not None:
            yield item
        await task
    finally:
        if not task.done():
            cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
