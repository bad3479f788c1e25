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
from rho_domain.run import PendingApproval, RunResult, RunStatus
from rho_entry.facade import Session
from rho_entry.runtime.event_log import EventLog
from rho_entry.runtime.handle_values import (
    FINISHED,
    HandleOwner,
    HandleStatus,
    asked_again,
    cancelled_result,
    empty_result,
    still_pending,
    unclosed_result,
    without_run,
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
        "_waiting",
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
        self._waiting = False  # the task waits for a run slot (``cancel`` ends the wait)

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
        waiting = self._status is HandleStatus.AWAITING_APPROVAL
        return still_pending(self._session, self._result) if waiting else ()

    def events(self) -> AsyncIterator[ev.Event]:
        """Every event of this handle from its start, then live ones, until it is done. Any
        number of readers may join at any time; see ``EventLog`` for what is kept."""
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
        """Stop the handle: a running one stops at its next checkpoint (a running tool's
        process group is killed), one awaiting approval ends with its calls left pending in
        the store (``--resume`` can still answer them); a prompt whose run had not begun is
        recorded, as a run cancelled before its first step (``_heard``)."""
        if self.done or self._cancelled:
            return
        self._cancelled = True
        if self._status is HandleStatus.AWAITING_APPROVAL:
            self._status = HandleStatus.RUNNING  # closing; no approvals are taken any more
            self._task = asyncio.ensure_future(self._finish(self._cancelled_result()))
        elif self._status is HandleStatus.QUEUED and self._waiting and self._task is not None:
            # not one before its first step: its body never ran, ``await handle`` hung
            self._waiting = False  # ended by ``cancel``, not by ``abort``
            self._task.cancel()
        elif self._session is not None:
            self._session.cancel()  # forgotten if the run has not started: ``_heard``
        # Opening: cancelled, the open (in a thread) leaked the store's lock; see ``_heard``

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
        slot = False
        try:
            # acquire/release here: ``async with`` or a coroutine are objects to collect (#33)
            if not self._cancelled:  # else cancelled before its task began: no slot taken
                self._waiting = True
                try:
                    await self._slots.acquire()
                    slot = True
                except asyncio.CancelledError:
                    if self._waiting or asked_again():
                        raise  # ``abort``'s: not ``cancel``'s alone
                finally:
                    self._waiting = False
            try:  # a prompt cancelled as it waited is recorded without a slot: it runs nothing
                self._status = HandleStatus.RUNNING
                if self._session is None and not (self._cancelled and prompt is None):
                    self._session = await self._owner.open_session(self._heard)
                session = self._session  # a method, not a lambda: a closure made ``self`` a cell
                result = await without_run(
                    self.session_id, session, prompt, self._result, self._asked_to_cancel
                )
                if result is None:
                    assert session is not None  # ``without_run`` runs nothing without one
                    result = await session.run(
                        prompt, max_turns=self._max_turns, record_events=self._record_events
                    )
            finally:
                if slot:
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

    def _heard(self, event: ev.Event) -> None:
        """Each event into the log; at ``run_start`` a cancel from before, which ``RunControl``
        forgets (the prompt was lost), is given again: the run ends before any model call."""
        self._log.append(event)
        if self._cancelled and event.kind == "run_start" and self._session is not None:
            self._session.cancel()

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
            # A service keeps finished handles as long as it likes: the runtime's closures,
            # their cells and the finished task were objects for the collector (issue 33: ~12)
            self._owner = FINISHED
            self._task = None

    def _settle(self) -> None:
        self._settled = True
        if self._settled_event is not None:
            self._settled_event.set()

    def _asked_to_cancel(self) -> bool:
        return self._cancelled

    def _cancelled_result(self) -> RunResult:
        return cancelled_result(self._result, self.session_id, self._session)
