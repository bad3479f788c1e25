"""Journal: the one way a session changes — apply an event to State, persist it, announce it.

Persistence comes before announcement, so a listener never sees an event the store refused.
Events the store could not take stay queued and are written by the next flush: a full disk
ends the run in error but loses nothing. An append cancelled while it writes has taken its
events (the store port's contract), so they are never queued again: a run cancelled while its
``run_end`` was being synced (a worker stopping) would otherwise end twice.

A durable run executed again retraces its trace (``replay``): each event it emits is checked
against the recorded one at that place. Once it emits another, it stops retracing for good; if
the trace already holds the run's ``run_end`` (the run ended once), nothing more is written
(``seal``), as when another execution of the run owns it now (``RunSuperseded``).

A listener is the user's code (a UI, a logger), not part of the agent's work: one that raises
does not end the run, nor one that blocks (an async listener that has not taken an event in
``LISTENER_SECONDS`` is stopped and no longer called). A sync listener is called on the event
loop, where it cannot be bounded while it runs (a thread per event would cost each streamed
delta a hop, and the CLI's and the server's listeners touch loop objects): one found to have
held the loop longer than ``LISTENER_SECONDS`` is stopped the same way after it returns.
Its first failure in the session is reported once, as a ``listener_error`` event (persisted
and announced like any other) and a warning on the ``rho_domain.loop.journal`` logger; it is
still called for later events, whose failures are not reported again. Only a cancel of
the run's task (delivered inside an async listener) and ``KeyboardInterrupt`` propagate; a
``CancelledError`` a listener raises unasked, and ``SystemExit`` and the like, are its
failures (``plugged.failure_of``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Awaitable, Sequence

from rho_domain import events as ev
from rho_domain.errors import ReplayDiverged, StoreError
from rho_domain.loop.guarded_clock import CLOCK_FAILED, GuardedClock
from rho_domain.loop.listeners import LISTENER_SECONDS, tell_closed
from rho_domain.loop.listeners import EndsWithSession as EndsWithSession
from rho_domain.loop.listeners import FollowsChildren as FollowsChildren
from rho_domain.loop.listeners import Listener as Listener
from rho_domain.messages import Message, ToolCall, ToolResultMessage
from rho_domain.plugged import contained, failure_of, message_of, plugged_name
from rho_domain.ports.clock import Clock
from rho_domain.ports.store import SessionRecord, SessionStore
from rho_domain.state import State

log = logging.getLogger("rho_domain.loop.journal")


class Journal:
    """Applies, persists and announces a session's events."""

    def __init__(
        self,
        session_id: str,
        state: State,
        clock: Clock,
        store: SessionStore | None,
        *,
        created: bool,
        replay: Sequence[ev.Event] = (),
    ) -> None:
        self.session_id = session_id
        self.state = state
        # a failing clock keeps the run's times and is said once (``guarded_clock``)
        self.clock = GuardedClock.of(clock)
        self.clock_said = False  # its failure, once in this session's trace
        self.store = store
        self.created = created or store is None
        self.listeners: list[Listener] = []
        self._unpersisted: list[ev.Event] = []
        # A durable run executed again retraces events its trace already holds: each one the
        # run emits is checked against the next of these, and the recorded one is applied
        # (the trace is the truth, times included) instead of being written a second time.
        self._replay: deque[ev.Event] = deque(e for e in replay if ev.is_persistent(e))
        self.replayed_last = False  # the last event recorded was one the trace held already
        # Nothing more is written (``seal``): a replay diverged from a trace which already
        # ends the run (it has ended, once), or another execution owns the run now.
        self._sealed = False
        # Listeners whose failure was reported (kept, so an id is never reused for another).
        self._failed: list[Listener] = []
        self.listener_seconds = LISTENER_SECONDS
        self._dropped: list[Listener] = []  # async listeners too slow once: no longer called

    async def create(self, record: SessionRecord) -> None:
        """Create the stored session on first use (a session that never runs leaves no trace)."""
        if not self.created and self.store is not None:
            await contained(self.store.create(record), self._store_name, StoreError)
            self.created = True

    @property
    def _store_name(self) -> str:
        """How a failure of the store port is named: ``the store module.Class``."""
        return f"the store {plugged_name(self.store)}"

    @property
    def replaying(self) -> bool:
        """True while a re-executed durable run retraces events its trace already holds."""
        return bool(self._replay)

    def heard(self) -> bool:
        """True when a streamed delta (an ``EPHEMERAL_KINDS`` event: it goes to listeners,
        never to the trace or State) would reach anyone: a listener is attached. A stream
        builds its delta events only then (two values and a coroutine a delta otherwise)."""
        return bool(self.listeners)

    def record(self, event: ev.Event) -> ev.Event:
        """Apply now, persist at the next flush (for synchronous callers); the event applied
        (while replaying, the recorded one). Raises ``ReplayDiverged`` when a replayed run
        emits another kind of event than its trace holds at that place."""
        if self._replay and ev.is_persistent(event):
            recorded = self._replay[0]
            if _identity(recorded) != _identity(event):
                # Retraced no further: the events this execution emits from here on (its
                # error, its run_end) are never matched against what the trace holds after
                # this place, which would consume it and write them after all.
                if any(isinstance(e, ev.RunEnded) for e in self._replay):
                    self.seal()
                self._replay.clear()
                raise ReplayDiverged(
                    f"session {self.session_id}: the run executed again emitted "
                    f"{_identity(event)} where its trace holds {_identity(recorded)}; it "
                    "stops here (continue it with `rho-agent --resume`)"
                )
            self._replay.popleft()
            self.state.apply(recorded)
            self.replayed_last = True
            return recorded
        self.replayed_last = False
        self.state.apply(event)
        if self.store is not None and ev.is_persistent(event) and not self._sealed:
            self._unpersisted.append(event)
        return event

    def seal(self) -> None:
        """Write nothing more (events are still applied and announced): the trace belongs to
        another execution of the run, or already ends it. Events queued and not yet written
        are dropped; a replay still under way stops."""
        self._sealed = True
        self._unpersisted.clear()
        self._replay.clear()

    def adopt(self, events: Sequence[ev.Event]) -> None:
        """Persist at the next flush events already applied to State (a State written by
        hand before the session existed)."""
        if self.store is not None:
            self._unpersisted.extend(e for e in events if ev.is_persistent(e))

    async def emit(self, event: ev.Event) -> None:
        """Apply, persist, then notify. A store failure propagates (the run ends in error).
        A clock that failed since the last event is said first (``guarded_clock``)."""
        if self.clock.failure is not None and not self.clock_said:
            self.clock_said = True
            failure = self.clock.failure
            await self.emit(ev.ErrorOccurred(at=event.at, error_type=CLOCK_FAILED, message=failure))
        event = self.record(event)
        # Checked here, not only inside: a model stream emits an event per delta, and a
        # coroutine call that has nothing to do is most of such an event's cost.
        if self._unpersisted:
            await self.flush()
        if self.listeners:
            await self.announce(event)

    async def announce(self, event: ev.Event) -> None:
        """Call every listener with ``event`` (awaiting the async ones), in order. A listener
        that raises does not stop the others or the run (see the module docstring); its first
        failure is reported after every listener had the event."""
        failures: list[tuple[Listener, Exception]] = []
        for listener in tuple(self.listeners):
            if self._dropped and any(listener is gone for gone in self._dropped):
                continue
            try:
                began = self.clock.monotonic()
                outcome = listener(event)
                if outcome is not None:
                    await self._taken(listener, outcome, event)
                else:
                    self._held(listener, self.clock.monotonic() - began, event)
            except BaseException as exc:  # a UI bug must not end the agent's run
                failure = failure_of(exc, f"the listener {plugged_name(listener)}")
                if not isinstance(failure, Exception):
                    raise  # a cancel, a second Ctrl+C
                if not any(listener is known for known in self._failed):
                    self._failed.append(listener)
                    failures.append((listener, failure))
        for listener, error in failures:
            await self._report(listener, event, error)

    async def _taken(self, listener: Listener, outcome: Awaitable[None], event: ev.Event) -> None:
        """Await ``outcome`` for ``listener_seconds``; past them the listener is stopped, no
        longer called (each event would wait as long) and ``TimeoutError`` is raised."""
        scope = asyncio.timeout(self.listener_seconds)
        try:
            async with scope:
                await outcome
        except TimeoutError:
            if not scope.expired():
                raise  # the listener's own
            self._dropped.append(listener)
            raise TimeoutError(
                f"it took a {event.kind} event for more than {self.listener_seconds:g} s and "
                "was stopped; it is no longer called in this session"
            ) from None

    def _held(self, listener: Listener, seconds: float, event: ev.Event) -> None:
        """A sync listener runs on the event loop, which nothing else (``cancel()``, pause,
        the time budget, other sessions) reaches while it is called: one that held it for
        more than ``listener_seconds`` is stopped, as a slow async one is, so that a
        listener that blocks does not freeze the run again at each event."""
        if seconds <= self.listener_seconds:
            return
        self._dropped.append(listener)
        raise TimeoutError(
            f"it held the event loop for {seconds:.0f} s on a {event.kind} event (more than "
            f"{self.listener_seconds:g} s; cancel(), pause and time budgets waited for it) and "
            "was stopped; it is no longer called in this session. A listener that waits must "
            "be async, or hand its work to a thread"
        )

    async def _report(self, listener: Listener, event: ev.Event, exc: Exception) -> None:
        """Log and emit the first failure of ``listener``."""
        name = plugged_name(listener)
        log.warning(
            "event listener %s failed on a %s event and is ignored for it; the run goes on "
            "(later failures of this listener are not reported)",
            name,
            event.kind,
            exc_info=exc,
        )
        await self.emit(
            ev.ListenerFailed(
                at=self.clock.now(),
                listener=name,
                event_kind=event.kind,
                error_type=type(exc).__name__,
                message=message_of(exc),
            )
        )

    async def flush(self) -> None:
        """Persist queued events; on failure they stay queued and the error propagates."""
        if self.store is None or not self.created or not self._unpersisted:
            return
        batch, self._unpersisted = self._unpersisted, []
        try:
            await contained(self.store.append(self.session_id, batch), self._store_name, StoreError)
        except asyncio.CancelledError:
            raise  # taken (see the module docstring): queued again, they would be written twice
        except BaseException:  # an unasked CancelledError too: a failure, none taken
            self._unpersisted[:0] = batch  # keep them for the next attempt
            raise

    async def release(self) -> None:
        """The session closes: a stored session's queued events are persisted and the store's
        lock released, then every listener that ends with the session (``EndsWithSession``)
        is told. Each step runs even when the one before failed (a store whose directory was
        removed fails both writes): the lock is released and the listeners told before the
        first error (the flush's, which names what went) is raised. A listener that fails
        to be told is logged, never raised (``_tell_closed``)."""
        try:
            if self.store is not None and self.created:
                release = self.store.release
                try:
                    await self.flush()
                except BaseException:
                    with contextlib.suppress(Exception):
                        await contained(release(self.session_id), self._store_name, StoreError)
                    raise
                await contained(release(self.session_id), self._store_name, StoreError)
        finally:
            for listener in tuple(self.listeners):
                if isinstance(listener, EndsWithSession):
                    tell_closed(listener)

    async def message(self, message: Message) -> None:
        """Emit ``MessageAdded`` for ``message``."""
        await self.emit(ev.MessageAdded(at=self.clock.now(), message=message))

    async def result(self, call: ToolCall, content: str, is_error: bool) -> None:
        """Add the result message of ``call``."""
        await self.message(
            ToolResultMessage(
                call_id=call.id, tool_name=call.name, content=content, is_error=is_error
            )
        )

    async def answer_all(self, calls: Sequence[ToolCall], content: str) -> None:
        """Give each call the same (error) result, so no call is left without one."""
        for call in calls:
            await self.result(call, content, True)


def _identity(event: ev.Event) -> tuple[str, str]:
    """What a replayed event must share with the recorded one: its kind, and the message's
    role or the tool call it is about (times, durations and texts may differ)."""
    if isinstance(event, ev.MessageAdded):
        return event.kind, type(event.message).__name__
    call_id = getattr(event, "call_id", None) or getattr(getattr(event, "call", None), "id", "")
    return event.kind, str(call_id or "")
