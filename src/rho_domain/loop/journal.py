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

A listener is the user's code (a UI, a logger), not part of the agent's work: the journal hands
each event to its ``Announcer`` (``announcer.py``: listeners bounded, their failures kept from
the run); a listener's first failure in the session is emitted once, as a ``listener_error``
event (persisted and announced like any other), with a warning on the
``rho_domain.loop.journal`` logger.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Callable, Sequence

from rho_domain import events as ev
from rho_domain.errors import ReplayDiverged, StoreError
from rho_domain.loop.announcer import Announcer, failure_event
from rho_domain.loop.guarded_clock import CLOCK_FAILED, GuardedClock
from rho_domain.loop.listeners import EndsWithSession as EndsWithSession
from rho_domain.loop.listeners import FollowsChildren as FollowsChildren
from rho_domain.loop.listeners import Listener as Listener
from rho_domain.loop.listeners import ends_with_session, tell_closed
from rho_domain.loop.retraced import clock_failed, identity
from rho_domain.loop.unstored import Written, claim_again, not_stored, written, written_since
from rho_domain.messages import Message, ToolCall, ToolResultMessage
from rho_domain.plugged import contained, plugged_name
from rho_domain.ports.clock import Clock
from rho_domain.ports.store import SessionRecord, SessionStore
from rho_domain.state import State


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
        self.bell = Announcer(self.clock)
        self._unpersisted: list[ev.Event] = []
        # A durable run executed again retraces events its trace already holds: each one the
        # run emits is checked against the next of these, and the recorded one is applied
        # (the trace is the truth, times included) instead of being written a second time.
        self._replay: deque[ev.Event] = deque(e for e in replay if ev.is_persistent(e))
        self.replayed_last = False  # the last event recorded was one the trace held already
        # Nothing more is written (``seal``): a replay diverged from a trace which already
        # ends the run (it has ended, once), or another execution owns the run now.
        self._sealed = False
        self._after_replay: list[Callable[[], None]] = []  # ``after_replay``
        self._written: Written | None = None  # the last event stored (``unstored``)
        self._let_go = False  # a close let the lock go with events not stored

    async def create(self, record: SessionRecord) -> None:
        """Create the stored session on first use (a session that never runs leaves no trace)."""
        if not self.created and self.store is not None:
            await contained(self.store.create(record), self._store_name, StoreError)
            self.created = True

    def _store_name(self) -> str:
        """How a failure of the store port is named: ``the store module.Class`` (passed to
        ``contained`` uncalled: only a failure works it out)."""
        return f"the store {plugged_name(self.store)}"

    @property
    def replaying(self) -> bool:
        """True while a re-executed durable run retraces events its trace already holds."""
        return bool(self._replay)

    def after_replay(self, then: Callable[[], None]) -> bool:
        """True when ``then`` must wait for the replay under way: it is called once the trace
        is retraced to its end, or left, or up to the run's cancel (``Interrupted``
        ``cancelled``: the retrace is stopped where the run it retraces was); False (``then``
        not kept) when no replay is under way or the trace holds that cancel next.

        A cancel heard while a re-executed durable run retraces its trace (the queue's
        record of one asked of the run, read as it starts) waits so: taken at once, it
        stopped the run at its first checkpoint, where the trace holds what the dead
        execution did, and the run ended ``ReplayDiverged``."""
        if not self._replay or self.cancel_next():
            return False
        self._after_replay.append(then)
        return True

    def cancel_next(self) -> bool:
        """True when the event the trace holds next is the run's cancel: a retrace stops
        where the run it retraces was stopped, whether it heard a cancel or not."""
        if not self._replay:  # checked first: a run that retraces nothing loads no event kind
            return False
        recorded = self._replay[0]
        return isinstance(recorded, ev.Interrupted) and recorded.reason == "cancelled"

    def _replay_ended(self) -> None:
        """Call what waited for the replay (``after_replay``), once."""
        waiting, self._after_replay = self._after_replay, []
        for then in waiting:
            then()

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
            self._pass_clock_failures(event)
        if self._replay and ev.is_persistent(event):
            recorded = self._replay[0]
            if identity(recorded) != identity(event):
                # Retraced no further: the events this execution emits from here on (its
                # error, its run_end) are never matched against what the trace holds after
                # this place, which would consume it and write them after all.
                if any(isinstance(e, ev.RunEnded) for e in self._replay):
                    self.seal()
                self._replay.clear()
                self._replay_ended()
                raise ReplayDiverged(
                    f"session {self.session_id}: the run executed again emitted "
                    f"{identity(event)} where its trace holds {identity(recorded)}; it "
                    "stops here (continue it with `rho-agent --resume`)"
                )
            self._replay.popleft()
            self.state.apply(recorded)
            self.replayed_last = True
            if not self._replay or self.cancel_next():
                self._replay_ended()
            return recorded
        self.replayed_last = False
        self.state.apply(event)
        if self.store is not None and ev.is_persistent(event) and not self._sealed:
            self._unpersisted.append(event)
        return event

    def _pass_clock_failures(self, event: ev.Event) -> None:
        """Apply the failures of the clock the trace holds next (the original execution's
        clock failed there) unless ``event`` is one: whether a clock fails is no step of the
        run, and a replay expecting it again diverged wherever the clock did not."""
        while self._replay and clock_failed(self._replay[0]) and not clock_failed(event):
            self.state.apply(self._replay.popleft())

    def seal(self) -> None:
        """Write nothing more (events are still applied and announced): the trace belongs to
        another execution of the run, or already ends it. Events queued and not yet written
        are dropped; a replay still under way stops."""
        self._sealed = True
        self._unpersisted.clear()
        self._replay.clear()
        self._replay_ended()

    def adopt(self, events: Sequence[ev.Event]) -> None:
        """Persist at the next flush events already applied to State (a State written by
        hand before the session existed)."""
        if self.store is not None:
            self._unpersisted.extend(e for e in events if ev.is_persistent(e))

    async def emit(self, event: ev.Event) -> None:
        """Apply, persist, then notify. A store failure propagates (the run ends in error).
        A clock that failed since the last event is said first (``guarded_clock``), once
        the run no longer retraces a trace (said while replaying, the event would be matched
        against the recorded one at that place and the replay diverge)."""
        if self.clock.failure is not None and not self.clock_said and not self._replay:
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
        """Call every listener with ``event`` (``announcer.Announcer``); each listener's first
        failure is emitted once, after every listener had the event."""
        for listener, error in await self.bell.announce(event):
            await self.emit(failure_event(listener, event, error, self.clock.now()))

    @property
    def listeners(self) -> list[Listener]:
        """The session's listeners, called in order with each event."""
        return self.bell.listeners

    @property
    def listener_seconds(self) -> float:
        """How long a listener may take one event (``listeners.LISTENER_SECONDS``)."""
        return self.bell.listener_seconds

    @listener_seconds.setter
    def listener_seconds(self, seconds: float) -> None:
        self.bell.listener_seconds = seconds

    async def flush(self) -> None:
        """Persist queued events; on failure they stay queued and the error propagates."""
        if self.store is None or not self.created or not self._unpersisted:
            return
        batch, self._unpersisted = self._unpersisted, []
        try:
            await contained(self.store.append(self.session_id, batch), self._store_name, StoreError)
            self._written = written(batch[-1])
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
        to be told is logged, never raised (``_tell_closed``). Events a close could not
        store are kept, and written by the next close once the store answers
        (``unstored``)."""
        try:
            if self.store is not None and self.created:
                release = self.store.release
                try:
                    if self._let_go and self._unpersisted:
                        last = self._written
                        if not await claim_again(self.store, self.session_id, last):
                            kept, self._unpersisted = self._unpersisted, []
                            raise written_since(self.session_id, kept)
                    await self.flush()
                except BaseException as exc:
                    with contextlib.suppress(Exception):
                        await contained(release(self.session_id), self._store_name, StoreError)
                    if type(exc) is StoreError and self._unpersisted:
                        self._let_go = True
                        raise not_stored(self.session_id, self._unpersisted, exc) from exc
                    raise
                self._let_go = False
                await contained(release(self.session_id), self._store_name, StoreError)
        finally:
            for listener in tuple(self.listeners):
                if ends_with_session(listener):
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
