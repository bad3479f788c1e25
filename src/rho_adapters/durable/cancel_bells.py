"""Bells a cancel rings in its own process, for the runs that listen for it there.

A durable run whose store has no signals (a library's own ``SessionStore``) learns of its
cancel by reading the queue's record (``cancels.py``) every ``poll`` seconds: a second after
the cancel, at worst. A cancel recorded in the run's own process (a ``serve --durable`` that
runs its worker, a library process that consumes its queue) rings the run's bell as it is
recorded, so the run reads the record at once. A cancel from another process still waits for
the next read. No ``dbos`` here: the entry layer's run signals listen without the extra.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading

__all__ = ["listen", "ring", "unlisten"]

_bells: dict[str, set[tuple[asyncio.AbstractEventLoop, asyncio.Event]]] = {}
_lock = threading.Lock()


def listen(run_id: str) -> asyncio.Event:
    """An event set when a cancel of ``run_id`` is recorded in this process (``ring``); call
    it on the loop that waits, and ``unlisten`` when done."""
    event = asyncio.Event()
    with _lock:
        _bells.setdefault(run_id, set()).add((asyncio.get_running_loop(), event))
    return event


def unlisten(run_id: str, event: asyncio.Event) -> None:
    """Stop ringing ``event``."""
    with _lock:
        bells = _bells.get(run_id, set())
        bells.difference_update({entry for entry in bells if entry[1] is event})
        if not bells:
            _bells.pop(run_id, None)


def ring(run_id: str) -> None:
    """Wake whoever listens for ``run_id`` in this process. Any thread."""
    with _lock:
        bells = tuple(_bells.get(run_id, ()))
    for loop, event in bells:
        with contextlib.suppress(RuntimeError):  # that loop is closed: nobody waits
            loop.call_soon_threadsafe(event.set)
