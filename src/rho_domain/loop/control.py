"""RunControl: cancellation, pause and operator directives for one session.

In-process ``cancel()`` and the SignalSource (another process) feed one asyncio.Event; work
that can take long (a model stream, a tool, a human) is raced against it, and the loser is
cancelled — which is how a running tool's process group gets killed by the executor. A model
stream and a tool run in the caller's task (``within``), which is cancelled while inside
them; a human's answer, in a task of its own (``race``). The
run's wall-time ``deadline`` (``budgets.BudgetWatch``), when it has one, is raced the same way,
on the Clock port: work still running then is stopped and ``out_of_time`` is set.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Coroutine
from typing import Any, Literal, TypeVar

from rho_domain import events as ev
from rho_domain.errors import RhoError
from rho_domain.loop.cancel_watch import DEAF, watch_for_cancel
from rho_domain.loop.guarded_ports import GuardedSignals
from rho_domain.loop.journal import Journal
from rho_domain.messages import UserMessage
from rho_domain.not_run import CANCELLED_BEFORE, CANCELLED_RESULT, OUT_OF_TIME, OUT_OF_TIME_BEFORE
from rho_domain.ports.signals import SignalSource

T = TypeVar("T")
PAUSE_POLL_SECONDS = 0.25
EXPORTS_PER_CHECKPOINT = 8


class RunControl:
    """Checkpoints of the loop: pause waits there, cancellation stops there."""

    def __init__(self, session_id: str, signals: SignalSource | None, journal: Journal) -> None:
        self.session_id = session_id
        # their unasked CancelledError is their failure, named (``guarded_ports``)
        self.signals = GuardedSignals(signals) if signals is not None else None
        self.journal = journal
        self._cancel = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None  # the current run's
        self._watcher: asyncio.Task[str | None] | None = None  # ``cancel_watch``
        # What wakes each ``race`` in progress: one callback per race instead of a task
        # waiting on the event (a race runs for every model call and tool call).
        self._wakers: set[Callable[[], None]] = set()
        self.deadline: float | None = None  # monotonic; set by the session for each run
        self.out_of_time = False

    @property
    def cancelled(self) -> bool:
        """True once cancellation was requested for this run, or a retrace reached where its
        trace was cancelled (``Journal.cancel_next``: it is stopped there too)."""
        if not self._cancel.is_set() and self.journal.cancel_next():
            self._cancel_here()
        return self._cancel.is_set()

    @property
    def stopped(self) -> bool:
        """True once raced work is being stopped: cancelled, or the deadline passed."""
        return self.cancelled or self.out_of_time

    @property
    def why_stopped(self) -> str:
        """Why raced work was stopped, in words for history and events."""
        return "the run's time budget ran out" if self._timed_out() else "cancelled by the user"

    @property
    def interrupted_result(self) -> str:
        """The result of a tool call stopped by ``race`` (``not_run``)."""
        return OUT_OF_TIME if self._timed_out() else CANCELLED_RESULT

    @property
    def not_started_result(self) -> str:
        """The result of a call of the batch that never started because ``race`` stopped an
        earlier one: not run, so it had no effect (the stopped call's effects are unknown)."""
        return OUT_OF_TIME_BEFORE if self._timed_out() else CANCELLED_BEFORE

    def _timed_out(self) -> bool:
        return self.out_of_time and not self.cancelled

    def cancel(self) -> None:
        """Request cancellation (from this process, on any thread); raced work stops at once.
        From another thread than the run's loop (a UI, a watchdog), the request is handed to
        that loop: set there, the event and the wakers had touched asyncio objects off their
        thread, and nothing woke the loop, so a running tool ran on to its end."""
        loop = self._loop
        if loop is not None and not _running_on(loop):
            with contextlib.suppress(RuntimeError):  # closed: no run to stop, set it here
                loop.call_soon_threadsafe(self._cancel_here)
                return
        self._cancel_here()

    def _cancel_here(self) -> None:
        if not self.journal.after_replay(self._cancel_here):  # a retrace: at its end
            self._cancel.set()
            for wake in tuple(self._wakers):
                wake()

    async def start(self) -> None:
        """Forget earlier requests (a stale cancel must not stop this run) and listen.
        A new Event, not ``clear()``: an asyncio.Event belongs to the loop that first waited
        on it, and each ``run_sync`` runs in a new loop."""
        self._cancel = asyncio.Event()
        self._loop = asyncio.get_running_loop()
        self.deadline, self.out_of_time = None, False
        if self.signals is not None:
            await self.signals.clear_cancel(self.session_id)
            watching = watch_for_cancel(self.signals, self.session_id, self.cancel)
            self._watcher = asyncio.ensure_future(watching)

    async def stop(self) -> None:
        """Stop listening and clear what was signalled to this run, whatever ended it: a
        context export asked for is answered (its asker must not wait for a run that is
        over), and a cancel or a pause is removed (left behind, a pause would hold the next
        ``--resume`` before its first step, and a cancel would stop it)."""
        if self._watcher is not None:
            self._watcher.cancel()
            self._watcher = None
        self.deadline = None  # ``out_of_time`` stays: the session reads it after the run
        if self.signals is None:
            return
        await self.answer_exports()
        with contextlib.suppress(RhoError):
            await self.signals.clear_cancel(self.session_id)
        with contextlib.suppress(RhoError):
            await self.signals.clear_pause(self.session_id)

    async def _say_deaf(self) -> None:
        """Record, once, that the signal source stopped listening (``cancel_watch``)."""
        watcher = self._watcher
        if watcher is None or not watcher.done() or watcher.cancelled():
            return
        self._watcher = None
        if (said := watcher.result()) is not None:
            at = self.journal.clock.now()
            await self.journal.emit(ev.ErrorOccurred(at=at, error_type=DEAF, message=said))

    async def checkpoint(self, where: str) -> bool:
        """Answer export requests, wait while paused; return True if the run must stop
        (cancelled)."""
        clock = self.journal.clock
        await self.answer_exports()
        await self._say_deaf()  # after the signal source was asked (its I/O let the watcher run)
        paused = self.signals is not None and not self.cancelled
        if paused and self.signals is not None and await self.signals.is_paused(self.session_id):
            await self.journal.emit(ev.Interrupted(at=clock.now(), reason="paused", detail=where))
            while await self.signals.is_paused(self.session_id) and not self.cancelled:
                await clock.sleep(PAUSE_POLL_SECONDS)  # the journal's GuardedClock
                await self.answer_exports()
            await self.journal.emit(ev.Interrupted(at=clock.now(), reason="resumed", detail=where))
        if self.cancelled:
            await self.journal.emit(
                ev.Interrupted(at=clock.now(), reason="cancelled", detail=where)
            )
        return self.cancelled

    async def answer_exports(self) -> None:
        """Write the context export (``context_export``) for the pending requests, at most
        ``EXPORTS_PER_CHECKPOINT`` (the rest at the next checkpoints), made once for them. A
        peer's million requests were each made and written at one checkpoint: the run stalled.
        A failure to write one is not the run's failure: the asker falls back to the trace."""
        if self.signals is None:
            return
        with contextlib.suppress(RhoError):
            asked = await self.signals.export_requests(self.session_id)
            for n, request_id in enumerate(asked[:EXPORTS_PER_CHECKPOINT]):
                if n == 0:  # loaded with the first export asked for (``rho-agent connect``)
                    from rho_domain.context_export import export_context

                    text = export_context(self.session_id, self.journal.state)
                # one request's failure leaves the others answered: it stopped them all
                with contextlib.suppress(RhoError):
                    await self.signals.answer_export(self.session_id, request_id, text)

    async def race(self, task: asyncio.Future[T]) -> bool:
        """Wait for ``task`` unless cancellation comes first (then cancel it): True if done.
        The task's own exception, if any, is raised."""
        woken: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def wake(_: object = None) -> None:
            if not woken.done():
                woken.set_result(None)

        task.add_done_callback(wake)
        self._wakers.add(wake)
        if self.cancelled:
            wake()
        timer = None if self.deadline is None else asyncio.ensure_future(self._expire(wake))
        try:
            await woken
        except asyncio.CancelledError:
            # Our own caller was cancelled (a parent agent, or the task running the
            # session): the raced work must stop too, or a tool process would outlive us.
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
            raise
        finally:
            task.remove_done_callback(wake)
            self._wakers.discard(wake)
            if timer is not None:
                timer.cancel()
        if task.done():
            task.result()
            return True
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task
        return False

    async def within(
        self, work: Coroutine[Any, Any, T]
    ) -> tuple[Literal[True], T] | tuple[Literal[False], None]:
        """``race`` for work that need not run in a task of its own: ``work`` runs in the
        caller's task, and cancellation (or the deadline) cancels that task while it is inside
        ``work``. ``(True, its result)`` when it finished, ``(False, None)`` when it was
        stopped (it never starts when cancellation came first); its own exception is raised.

        The same contract as ``race`` (the work sees a ``CancelledError`` where it waits, so a
        tool's process group is killed), without a task to create, schedule and wait for: two
        turns of the event loop fewer for each model call and tool call. A cancellation of
        the caller's task from outside (a parent, a second Ctrl+C) is told apart from ours by
        the task's count of cancellation requests, and propagates.
        """
        task = asyncio.current_task()
        if task is None or self.cancelled:
            work.close()
            if task is None:
                raise RuntimeError("RunControl.within must run inside a task")
            return False, None
        loop = task.get_loop()
        base = task.cancelling()
        inside, issued = True, False

        def stop() -> None:
            # Only while the task is inside ``work`` (suspended there, or about to resume
            # there): the CancelledError is then delivered inside ``work``, never after it.
            nonlocal issued
            if inside and not issued:
                issued = True
                task.cancel()

        def wake(_: object = None) -> None:
            if asyncio.current_task(loop) is task:
                loop.call_soon(stop)  # cancelled from inside the work (a listener): after it
            else:
                stop()

        self._wakers.add(wake)
        timer = None if self.deadline is None else asyncio.ensure_future(self._expire(wake))
        try:
            result = await work
        except asyncio.CancelledError:
            if issued and task.uncancel() <= base:
                return False, None  # ours: the work was stopped
            raise
        except BaseException:
            if issued:  # the work turned ours into an error of its own: that is raised, and
                task.uncancel()  # our request is not left counted (asyncio.timeout reads it)
            raise
        finally:
            inside = False
            self._wakers.discard(wake)
            if timer is not None:
                timer.cancel()
        if issued:  # the work swallowed our CancelledError: stopped all the same
            task.uncancel()
            return False, None
        return True, result

    async def _expire(self, wake: Callable[[], None]) -> None:
        """Wake the race when the deadline passes (on the Clock port, so tests control it;
        the journal's ``GuardedClock``: a clock failing there must not leave the run without
        its deadline)."""
        assert self.deadline is not None
        clock = self.journal.clock
        await clock.sleep(max(self.deadline - clock.monotonic(), 0.0))
        self.out_of_time = True
        wake()

    async def apply_directives(self, after: int) -> None:
        """Inject directives not applied yet as user messages, recording each offset."""
        if self.signals is None:
            return
        clock = self.journal.clock
        for directive in await self.signals.directives(self.session_id, after=after):
            await self.journal.emit(
                ev.DirectiveApplied(at=clock.now(), offset=directive.offset, text=directive.text)
            )
            text = f"[Directive from the operator]\n{directive.text}"
            await self.journal.message(UserMessage(text, origin="directive"))


def _running_on(loop: asyncio.AbstractEventLoop) -> bool:
    """True when called on ``loop``'s thread while it runs."""
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False
