"""AgentHandle: one prompt dispatched in the background, as a service holds it.

A handle owns one session while it lives: it waits for a run slot (``queued``), runs
(``running``), may stop for a human (``awaiting_approval``: no slot is held; ``approve`` /
``deny`` continue it), and ends in a final status, when its session is closed (the store's
lock released). ``await handle`` returns the ``RunResult`` once the handle is settled: finished,
or awaiting approval (then, after ``approve``, awaiting it again gives the next result).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Generator

from rho_domain import events as ev
from rho_domain.errors import SessionStateError
from rho_domain.messages import ToolCall
from rho_domain.run import PendingApproval, RunResult, RunStatus
from rho_entry.facade import Session
from rho_entry.runtime.event_log import EventLog
from rho_entry.runtime.handle_values import (
    FINISHED,
    HandleOwner,
    HandleStatus,
    cancelled_result,
    empty_result,
    finished,
    unclosed_result,
    waiting_result,
)

__all__ = ["AgentHandle", "HandleOwner", "HandleStatus"]


class AgentHandle:
    """A dispatched prompt. Create with ``dispatch_prompt``; never directly."""

    __slots__ = (
        "_cancelled",
        "_finished",
        "_finished_event",
        "_log",
        "_max_turns",
        "_owner",
        "_record_events",
        "_result",
        "_session",
        "_settled",
        "_settled_event",
        "_slots",
        "_status",
        "_task",
        "session_id",
    )

    def __init__(
        self,
        *,
        session_id: str,
        owner: HandleOwner,
        slots: asyncio.Semaphore,
        max_turns: int | None = None,
        record_events: bool = False,
    ) -> None:
        self.session_id = session_id
        self._owner = owner
        self._slots = slots
        self._max_turns = max_turns
        self._record_events = record_events
        self._log = EventLog()
        self._status = HandleStatus.QUEUED
        self._session: Session | None = None
        self._result: RunResult | None = None
        # Flags, and the events a waiter makes only when it has to wait: most handles of a
        # burst are awaited once or never, and an idle ``asyncio.Event`` is two objects
        # (itself and its deque of waiters) for each full collection to walk (issue 33).
        self._settled = False
        self._finished = False
        self._settled_event: asyncio.Event | None = None
        self._finished_event: asyncio.Event | None = None
        self._cancelled = False
        self._task: asyncio.Task[None] | None = None

    def __repr__(self) -> str:
        return f"<AgentHandle session={self.session_id} status={self._status.value}>"

    # ------------------------------------------------------------------ what a service reads

    @property
    def status(self) -> HandleStatus:
        """queued, running, awaiting_approval, or a final status (see ``HandleStatus``)."""
        return self._status

    @property
    def done(self) -> bool:
        """True once the handle reached a final status (its session is closed)."""
        return self._log.closed

    @property
    def closing(self) -> bool:
        """True while a handle cancelled as it awaited approval closes its session (status
        ``running``, no run in progress, no answer taken; its calls still wait in the store)."""
        return self._cancelled and self._settled and not self.done

    @property
    def result(self) -> RunResult | None:
        """The last ``RunResult`` (None until the first run settles)."""
        return self._result

    @property
    def pending_approvals(self) -> tuple[PendingApproval, ...]:
        """The calls waiting for ``approve``/``deny`` (empty unless awaiting approval)."""
        if self._status is not HandleStatus.AWAITING_APPROVAL or self._session is None:
            return ()
        waiting = {call.id for call in self._session.state.awaiting_decision()}
        pending = self._result.pending if self._result is not None else ()
        return tuple(p for p in pending if p.call.id in waiting)

    def events(self) -> AsyncIterator[ev.Event]:
        """Every event of this handle from its start, then live ones, until it is done.

        Any number of readers may join at any time; see ``EventLog`` for what is kept.
        """
        return self._log.follow()

    async def wait(self) -> RunResult:
        """The ``RunResult`` once settled (finished, or awaiting approval)."""
        if not self._settled:
            if self._settled_event is None:
                self._settled_event = asyncio.Event()
            await self._settled_event.wait()
        assert self._result is not None  # set before _settled
        return self._result

    async def wait_done(self) -> RunResult:
        """The final ``RunResult``, once the handle is done (not merely awaiting approval)."""
        if not self._finished:
            if self._finished_event is None:
                self._finished_event = asyncio.Event()
            await self._finished_event.wait()
        assert self._result is not None  # set before _finished
        return self._result

    def __await__(self) -> Generator[object, None, RunResult]:
        return self.wait().__await__()

    # ------------------------------------------------------------------ what a service does

    def cancel(self) -> None:
        """Stop the handle: a queued one never runs, a running one stops at its next
        checkpoint (a running tool's process group is killed), one awaiting approval ends
        with its calls left pending in the store (``--resume`` can still answer them)."""
        if self.done or self._cancelled:
            return
        self._cancelled = True
        if self._status is HandleStatus.AWAITING_APPROVAL:
            self._status = HandleStatus.RUNNING  # closing; no approvals are taken any more
            self._task = asyncio.ensure_future(self._finish(self._cancelled_result()))
        elif self._status is HandleStatus.QUEUED and self._task is not None:
            self._task.cancel()  # waiting for a slot (first run, or continuing after approval)
        elif self._session is not None:
            self._session.cancel()
        # Opening its session: cancelling the open would leak the store's lock (the open runs
        # in a worker thread and takes the lock anyway); ``_cancelled`` stops it right after.

    def approve(
        self,
        call_id: str,
        approved: bool = True,
        *,
        always: bool = False,
        digest: str | None = None,
    ) -> None:
        """Answer a pending call; once none is left, the run continues (queued for a slot).
        Raises ``SessionStateError`` when nothing waits, or for an unknown ``call_id``.

        ``digest`` (``rho_domain.call_digest``) binds the answer to the call its answerer was
        shown: a caller that showed the call from stored data (a trace, a feed, a server's
        page) must give it, and a call held under ``call_id`` with another digest raises
        ``CallChanged`` (nothing answered; it still waits). Without it, the answer is taken
        as about the call this handle holds (``pending_approvals``), read in this process."""
        session = self._session
        if self._status is not HandleStatus.AWAITING_APPROVAL or session is None:
            raise SessionStateError(
                f"handle of session {self.session_id} is {self._status.value}; "
                "only a handle awaiting approval takes answers"
            )
        session.resolve_approval(call_id, approved, always=always, digest=digest)
        if not session.state.awaiting_decision():
            self._settled = False
            if self._settled_event is not None:
                self._settled_event.clear()
            self._status = HandleStatus.QUEUED
            self._task = asyncio.ensure_future(self._segment(None))

    def deny(self, call_id: str) -> None:
        """Reject a pending call (``approve(call_id, False)``)."""
        self.approve(call_id, False)

    # ------------------------------------------------------------------ for the runtime

    def start(self, prompt: str | None) -> None:
        """Schedule the first run (called once, by the runtime)."""
        self._task = asyncio.ensure_future(self._segment(prompt))

    async def abort(self) -> None:
        """Cancel the handle's task outright (a deadline passed) and wait for it to end."""
        self._cancelled = True
        task = self._task
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _segment(self, prompt: str | None) -> None:
        try:
            # acquire/release rather than ``async with``: a running handle would hold the
            # bound ``__aexit__`` for its whole run, one more object per running session
            # for each full collection to walk (issue 33)
            await self._slots.acquire()
            try:
                self._status = HandleStatus.RUNNING
                if self._session is None:
                    self._session = await self._owner.open_session(self._log.append)
                if self._cancelled:
                    result = self._cancelled_result()
                elif prompt is None and self._result is None and self._waiting_calls():
                    result = waiting_result(
                        self.session_id, self._session
                    )  # reopened with calls still undecided
                elif prompt is None and self._result is None and await finished(self._session):
                    result = empty_result(  # reopened on a finished conversation: no run
                        self.session_id, self._session, RunStatus.COMPLETED, None, None
                    )
                else:
                    result = await self._session.run(
                        prompt, max_turns=self._max_turns, record_events=self._record_events
                    )
            finally:
                self._slots.release()
        except asyncio.CancelledError:
            result = self._cancelled_result()
        except Exception as exc:  # noqa: BLE001 - opening failed: the handle ends in error
            result = empty_result(
                self.session_id, self._session, RunStatus.ERROR, str(exc), type(exc).__name__
            )
        if result.status is RunStatus.AWAITING_APPROVAL and not self._cancelled:
            self._result = result
            self._status = HandleStatus.AWAITING_APPROVAL
            self._settle()
            self._owner.leave_queue()
            return
        await self._finish(result)

    async def _finish(self, result: RunResult) -> None:
        session, self._session = self._session, None
        try:
            if session is not None:
                try:
                    await asyncio.shield(session.close())
                except Exception as exc:  # noqa: BLE001 - said in the result (unclosed_result)
                    result = unclosed_result(result, exc)
        finally:
            self._result = result
            self._status = HandleStatus(result.status.value)
            self._log.close()
            self._settle()
            self._finished = True
            if self._finished_event is not None:
                self._finished_event.set()
            self._owner.on_done(self)
            self._let_go()

    def _settle(self) -> None:
        self._settled = True
        if self._settled_event is not None:
            self._settled_event.set()

    def _let_go(self) -> None:
        """Drop what only a run needed. A service keeps finished handles (their status,
        result and events) as long as it likes; the runtime's closures, their cells and the
        finished task would stay with each, objects the garbage collector walks at every
        full pass (issue 33: ~12 of them per kept handle)."""
        self._owner = FINISHED
        self._task = None

    def _cancelled_result(self) -> RunResult:
        return cancelled_result(self._result, self.session_id, self._session)

    def _waiting_calls(self) -> tuple[ToolCall, ...]:
        return self._session.state.awaiting_decision() if self._session is not None else ()
