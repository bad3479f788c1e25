"""Awaiting work that must end before its caller goes on, even when the caller is cancelled.

A thread's work cannot be interrupted: a store's fsync, a session's create or release, a
worker's clean-up go on in their thread whatever happens to the task awaiting them. Where
what comes next depends on that work being over (lines taken are durable, a session made
is released, a worker's threads are stopped), the caller waits for it to the end and only
then lets the cancellation go on.
"""

from __future__ import annotations

import asyncio


async def finished(work: asyncio.Future[None]) -> None:
    """Await ``work``. Cancelled meanwhile, wait for ``work`` to end all the same, then raise
    the cancellation (``work``'s own failure, if any, is retrieved: the cancellation is what
    the caller gets)."""
    try:
        await asyncio.shield(work)
    except asyncio.CancelledError:
        await asyncio.wait([work])
        if not work.cancelled():
            work.exception()
        raise
