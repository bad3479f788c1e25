"""A runtime's pool of dispatches: its run slots, the places in its queue, the handles not
done, and each dispatch's ticket.

``DispatchPool`` bounds a runtime (``core.py``'s ``AgentRuntime``, which decides where a
dispatch runs and when the runtime may take one): at most ``max_concurrent`` runs at once
(``slots``, held by a handle while it runs) and up to ``max_queued`` more handles waiting for a
slot (``places``: one is taken by every handle from its dispatch until it is done or awaits a
human). ``add`` builds a dispatch's handle and lists it in ``live`` (by session id) until it is
done. Each handle's owner is a ``Ticket``: how it opens its session (through the pool's
``SessionOpener``, one opening per turn of the loop), gives back its place and leaves
``live``. ``settle`` waits for handles at close; ``in_use`` says why a session cannot take
another handle.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from typing import Any, Literal

from rho_domain.errors import ConfigError, RuntimeFull
from rho_entry.facade import Session
from rho_entry.runtime.handle import AgentHandle
from rho_entry.runtime.opening import SessionOpener
from rho_entry.seed_api.approval_callback import ApprovalCallback

WhenFull = Literal["wait", "raise"]


class DispatchPool:
    """The bounds and the live handles of one runtime (see the module docstring). Raises
    ``ConfigError`` for bounds no runtime can keep."""

    __slots__ = (
        "approval_callback",
        "live",
        "max_concurrent",
        "max_queued",
        "opener",
        "opening",
        "places",
        "record_events",
        "slots",
        "when_full",
    )

    def __init__(
        self,
        opener: SessionOpener,
        *,
        max_concurrent: int,
        max_queued: int,
        when_full: WhenFull,
        approval_callback: ApprovalCallback | None,
        record_events: bool,
    ) -> None:
        if max_concurrent < 1 or max_queued < 0:
            raise ConfigError(
                f"create_runtime: max_concurrent must be >= 1 and max_queued >= 0 "
                f"(got {max_concurrent} and {max_queued})"
            )
        if when_full not in ("wait", "raise"):
            raise ConfigError(
                f"create_runtime: when_full must be 'wait' or 'raise', not {when_full!r}"
            )
        self.opener = opener
        self.max_concurrent = max_concurrent
        self.max_queued = max_queued
        self.when_full: WhenFull = when_full
        self.approval_callback = approval_callback
        self.record_events = record_events
        self.slots = asyncio.Semaphore(max_concurrent)
        self.places = asyncio.Semaphore(max_concurrent + max_queued)
        self.live: dict[str, AgentHandle] = {}  # by session id: the handles not done
        # The turnstile of session openings: one per turn of the loop (Ticket.open_session)
        self.opening = asyncio.Lock()

    def refuse_if_full(self) -> None:
        """Raise ``RuntimeFull`` when every place is taken and the pool does not wait."""
        if self.when_full == "raise" and self.places.locked():
            raise RuntimeFull(
                f"runtime is full: {self.max_concurrent} running and {self.max_queued} queued; "
                "retry later or raise max_concurrent / max_queued"
            )

    def add(
        self,
        sid: str,
        *,
        own: bool,
        resume: bool,
        max_turns: int | None,
        labels: Mapping[str, str] | None,
        schema: Mapping[str, Any] | None,
    ) -> AgentHandle:
        """The handle of a dispatch that holds a place, listed in ``live``; not started."""
        handle = AgentHandle(
            session_id=sid,
            owner=Ticket(self, sid, own=own, resume=resume, labels=labels, schema=schema),
            slots=self.slots,
            max_turns=max_turns,
            record_events=self.record_events,
        )
        self.live[sid] = handle
        return handle


class Ticket:
    """One dispatch's part of the runtime: how its handle opens its session, gives back its
    place in the queue and leaves the runtime's table once done.

    One object where three closures were (with their eight cells and the ``admitted`` list):
    every running or queued handle holds it, and the garbage collector walks each of those
    objects at every full pass (issue 33: 1,000 sessions at once are ~50,000 of them).
    """

    __slots__ = ("_admitted", "_labels", "_own", "_pool", "_resume", "_schema", "_sid")

    def __init__(
        self,
        pool: DispatchPool,
        sid: str,
        *,
        own: bool,
        resume: bool,
        labels: Mapping[str, str] | None,
        schema: Mapping[str, Any] | None,
    ) -> None:
        self._pool = pool
        self._sid = sid
        self._own = own
        self._resume = resume
        self._labels = labels
        self._schema = schema
        self._admitted = True

    async def open_session(self, listener: Any) -> Session:
        """Open the dispatch's session (its own, a new one or a stored one)."""
        pool = self._pool
        # A burst of dispatches would otherwise open every session (the workspace's real
        # path, the executor, the system prompt: ~0.3 ms each, more on a busy machine)
        # in one turn of the loop, stalling it for all of them at once (1,000 at once:
        # 0.4-1.3 s). A turnstile: each opening waits for a turn of the loop of its own
        # (the lock held across one yield), and the opening itself (a resume's reads
        # included) runs after the lock is given on, so nothing waits for its I/O.
        # acquire/release, not ``async with``: fewer objects held per waiting session
        await pool.opening.acquire()
        try:
            await asyncio.sleep(0)
        finally:
            pool.opening.release()
        callback = pool.approval_callback
        if self._own:
            return await pool.opener.open_own(listener, self._labels, self._schema, callback)
        return await pool.opener.open(
            self._sid, self._resume, listener, self._labels, self._schema, callback
        )

    def leave_queue(self) -> None:
        """Give the handle's place back (idempotent): it is done or awaits a human."""
        if self._admitted:
            self._admitted = False
            self._pool.places.release()

    def on_done(self, handle: AgentHandle) -> None:
        """The handle is done: out of the runtime's table, its place given back."""
        self._pool.live.pop(handle.session_id, None)
        self.leave_queue()


async def settle(handles: tuple[AgentHandle, ...], timeout: float, *, running_only: bool) -> None:
    """Wait up to ``timeout`` for the handles to be done (or, ``running_only``, settled)."""
    waits = [asyncio.ensure_future(h.wait() if running_only else h.wait_done()) for h in handles]
    if not waits:
        return
    with contextlib.suppress(TimeoutError):
        await asyncio.wait(waits, timeout=max(timeout, 0.0))
    for waiting in waits:
        waiting.cancel()


def in_use(session_id: str, *, own: bool = False) -> str:
    """Why ``session_id`` cannot take another handle, and what to do instead."""
    other = (
        "; or dispatch_prompt(runtime, prompt, new_session=True) for a conversation of its own"
        if own
        else ""
    )
    return (
        f"session {session_id} is in use by another handle: await that handle "
        f"(runtime.get_handle({session_id!r})) or cancel it, then dispatch again{other}"
    )
