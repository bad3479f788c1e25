"""The server's runs, on the runtime API (``rho_entry.runtime``, issue 11).

One ``AgentRuntime`` serves every session: each run is ``dispatch_prompt(runtime, prompt,
session_id=...)`` on a session the server stored first, so the stored config (model, profile,
working directory) is the one that runs. A handle's events are pumped into the session's
``TraceFeed``; a handle that stops for approval stays open (no run slot held) so that an
answer continues it at once; after a restart, ``dispatch_prompt(runtime, None, session_id=)``
reopens the waiting calls from the trace.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from rho_domain.config import AgentConfig
from rho_domain.errors import RuntimeFull, SessionStateError
from rho_domain.events import ErrorOccurred
from rho_domain.ports.store import SessionStore
from rho_domain.run import RunStatus
from rho_entry.runtime import AgentHandle, AgentRuntime, HandleStatus
from rho_entry.server.errors import Busy, Conflict
from rho_entry.server.feed import TraceFeed

log = logging.getLogger("rho_entry.server")
ACTIVE = frozenset({HandleStatus.QUEUED, HandleStatus.RUNNING})


class Runs:
    """The live handles of a server, at most one per session, and the run limit."""

    def __init__(
        self,
        config: AgentConfig,
        store: SessionStore,
        *,
        max_runs: int,
        retry_after: int,
        approval_hold: float,
        ports: Mapping[str, Any],
        allowed_profiles: Sequence[str] = (),
        allowed_roots: Sequence[Path] = (),
    ) -> None:
        from rho_entry.runtime import create_runtime

        self.max_runs = max_runs
        self.retry_after = retry_after
        self.approval_hold = approval_hold
        # Awaiting approval holds admission but no slot: allow many of those, and refuse
        # (429) by counting the runs in progress ourselves, before dispatching.
        self.runtime: AgentRuntime = create_runtime(
            config,
            store=store,
            max_concurrent=max_runs,
            max_queued=100_000,
            when_full="raise",
            trace=True,  # spans when the server process has OpenTelemetry set up
            # a stored session runs only within a profile the operator allowed, by content
            allowed_profiles=allowed_profiles,
            allowed_roots=allowed_roots,
            **ports,
        )
        self.handles: dict[str, AgentHandle] = {}
        self._pumps: set[asyncio.Task[None]] = set()
        self._turns: dict[str, tuple[asyncio.Lock, int]] = {}  # id -> (lock, users)

    def active(self, session_id: str) -> bool:
        """A run of this session is queued or in progress here."""
        handle = self.handles.get(session_id)
        return handle is not None and handle.status in ACTIVE

    @property
    def in_progress(self) -> int:
        """Runs queued or in progress here."""
        return sum(1 for h in self.handles.values() if h.status in ACTIVE)

    def check_capacity(self) -> None:
        """Raise ``Busy`` (429) when every run slot is taken."""
        if self.in_progress >= self.max_runs:
            raise Busy(
                f"all {self.max_runs} run slots are busy; retry later",
                retry_after=self.retry_after,
            )

    @contextlib.asynccontextmanager
    async def turn(self, session_id: str) -> AsyncIterator[None]:
        """Hold ``session_id``'s turn: one answer or message (a chat, a resume) at a time per
        session. Two answers at once (a double click, a retry) both found a released session
        and both reopened it: the second was refused by the runtime, in its words for library
        callers; a message and an answer at once raced the same way, the loser a 409 'taken
        by another request meanwhile' to retry. One after the other, the second finds what
        the first left: the handle it reopened, the run it started, the call it superseded."""
        lock, users = self._turns.get(session_id, (asyncio.Lock(), 0))
        self._turns[session_id] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._turns[session_id]
            if users == 1:
                del self._turns[session_id]
            else:
                self._turns[session_id] = (lock, users - 1)

    async def dispatch(
        self,
        session_id: str,
        prompt: str | None,
        feed: TraceFeed,
        *,
        done: Callable[[], None],
    ) -> AgentHandle:
        """Dispatch a run (``prompt`` None: reopen waiting approvals) and pump its events."""
        from rho_entry.runtime import dispatch_prompt, start_runtime

        if self.runtime.state == "created":
            await start_runtime(self.runtime)
        try:
            handle = await dispatch_prompt(self.runtime, prompt, session_id=session_id)
        except RuntimeFull as exc:
            raise Busy(str(exc), retry_after=self.retry_after) from exc
        except SessionStateError as exc:  # its words name the runtime's API, not a route
            raise Conflict(
                f"session {session_id} was taken by another request to this server meanwhile "
                f"(a message, or an answer that reopened it): read it again (GET "
                f"/api/sessions/{session_id}) and retry"
            ) from exc
        self.handles[session_id] = handle
        self._keep(asyncio.ensure_future(self._pump(session_id, handle, feed, done)))
        return handle

    def hold(self, handle: AgentHandle, feed: TraceFeed) -> None:
        """Release ``handle`` once it has waited for approval ``approval_hold`` seconds, as
        a run that stopped for approval is (for a session reopened to take an answer, which
        ends no run)."""
        self._keep(asyncio.ensure_future(self._settled(handle, feed)))

    async def _settled(self, handle: AgentHandle, feed: TraceFeed) -> None:
        """Once the handle has settled, wake the streams; if it waits for approval longer
        than ``approval_hold``, release it (its calls stay pending in the trace)."""
        with contextlib.suppress(Exception):
            await handle.wait()
        feed.wake()
        if handle.status is not HandleStatus.AWAITING_APPROVAL:
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(handle.wait_done()), self.approval_hold)
        if handle.status is HandleStatus.AWAITING_APPROVAL:
            handle.cancel()

    def _keep(self, task: asyncio.Task[None]) -> None:
        self._pumps.add(task)
        task.add_done_callback(self._pumps.discard)

    async def _pump(
        self, session_id: str, handle: AgentHandle, feed: TraceFeed, done: Callable[[], None]
    ) -> None:
        started = False
        try:
            async for event in handle.events():
                started = True
                feed.on_event(event)
                if event.kind == "run_end":  # wake streams once the handle has settled
                    self._keep(asyncio.ensure_future(self._settled(handle, feed)))
        except Exception:  # the feed must never take the run down; the trace has it all
            log.exception("streaming the events of session %s failed", session_id)
        finally:
            with contextlib.suppress(Exception):
                await handle.wait_done()
            if not started:
                _unstarted(session_id, handle, feed)
            if self.handles.get(session_id) is handle:
                del self.handles[session_id]
            done()

    async def settle(self, handle: AgentHandle, grace: float) -> None:
        """Wait up to ``grace`` seconds for a run to stop or wait for approval; 409 if not."""
        try:
            await asyncio.wait_for(asyncio.shield(handle.wait()), grace)
        except TimeoutError:
            raise Conflict(
                f"session {handle.session_id} is running; wait for it or cancel it"
            ) from None

    async def closed(self, handle: AgentHandle, grace: float) -> None:
        """Wait up to ``grace`` seconds for a handle let go while it awaited approval (the
        hold, a cancel) to close its session; 409 if it does not. Closing, it takes no
        answer, though its calls still wait in the trace for the next one to reopen it."""
        try:
            await asyncio.wait_for(asyncio.shield(handle.wait_done()), grace)
        except TimeoutError:
            raise Conflict(
                f"session {handle.session_id} is closing; answer again in a moment"
            ) from None

    def cancel_here(self, session_id: str) -> bool:
        """Cancel the session's run in this server: True when one runs here, False when no
        handle of it is open here. One held here waiting for approval runs nothing: 409,
        naming what to do (the cancel let the hold go and said ``cancelling``, yet the
        session stayed ``awaiting_approval``, never ``cancelled``; a durable server said 409)."""
        handle = self.handles.get(session_id)
        if handle is None or handle.done:
            return False
        if handle.status is HandleStatus.AWAITING_APPROVAL:
            raise Conflict(
                f"session {session_id} has no run in progress: it waits for approval "
                f"(GET /api/sessions/{session_id}: pending_approvals); answer its calls, or "
                "deny them, which runs nothing"
            )
        handle.cancel()
        return True

    async def stop(self, session_id: str, grace: float) -> None:
        """Cancel a session's handle and wait until it is done (its session closed)."""
        handle = self.handles.get(session_id)
        if handle is None:
            return
        handle.cancel()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(handle.wait_done()), grace)
        if not handle.done:
            await handle.abort()

    async def aclose(self, grace: float) -> None:
        """Close the runtime: every handle cancelled, every session left resumable."""
        from rho_entry.runtime import close_runtime

        await close_runtime(self.runtime, deadline=grace)
        if self._pumps:
            await asyncio.wait(tuple(self._pumps), timeout=grace)


def _unstarted(session_id: str, handle: AgentHandle, feed: TraceFeed) -> None:
    """A run that ended before its first event (its session could not be opened: a working
    directory gone, a lock, a refused profile) wrote nothing to the trace: say why in the log
    and on the session's streams, rather than leave a 202 without a trace."""
    result = handle.result
    if result is None or result.status is not RunStatus.ERROR:
        return
    kind = result.error_type or "RhoError"
    log.warning("session %s: the run could not start: %s: %s", session_id, kind, result.error)
    feed.announce(ErrorOccurred(at=time.time(), error_type=kind, message=result.error or kind))
