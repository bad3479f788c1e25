"""How a session's listeners are called with its events (``Announcer``), bounded and kept apart
from the run: the journal persists an event, then hands it here.

A listener is the user's code (a UI, a logger), not part of the agent's work: one that raises
does not end the run, nor one that blocks (an async listener that has not taken an event in
``listener_seconds`` is stopped and no longer called). A sync listener is called on the event
loop, where it cannot be bounded while it runs (a thread per event would cost each streamed
delta a hop, and the CLI's and the server's listeners touch loop objects): one found to have
held the loop longer than ``listener_seconds`` is stopped the same way after it returns.
Only a listener's first failure in the session is returned to be reported (the journal emits
it as a ``listener_error`` event, ``failure_event``); it is still called for later events.
Only a cancel of the run's task (delivered inside an async listener) and ``KeyboardInterrupt``
propagate; a ``CancelledError`` a listener raises unasked, and ``SystemExit`` and the like,
are its failures (``plugged.failure_of``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable

from rho_domain import events as ev
from rho_domain.loop.listeners import LISTENER_SECONDS, Listener
from rho_domain.plugged import failure_of, message_of, plugged_name
from rho_domain.ports.clock import Clock

# the journal's logger: a listener's failures are the journal's to report
log = logging.getLogger("rho_domain.loop.journal")

Failures = list[tuple[Listener, Exception]]


class Announcer:
    """A session's listeners, called in order with each event (see the module docstring)."""

    def __init__(self, clock: Clock) -> None:
        self.listeners: list[Listener] = []
        self.listener_seconds = LISTENER_SECONDS
        self._clock = clock
        # Listeners whose failure was reported (kept, so an id is never reused for another).
        self._failed: list[Listener] = []
        self._dropped: list[Listener] = []  # too slow once: no longer called

    async def announce(self, event: ev.Event) -> Failures:
        """Call every listener with ``event`` (awaiting the async ones), in order; the first
        failures of listeners that failed now, for the caller to report once each."""
        failures: Failures = []
        for listener in tuple(self.listeners):
            if self._dropped and any(listener is gone for gone in self._dropped):
                continue
            try:
                began = self._clock.monotonic()
                outcome = listener(event)
                if outcome is not None:
                    await self._taken(listener, outcome, event)
                else:
                    self._held(listener, self._clock.monotonic() - began, event)
            except BaseException as exc:  # a UI bug must not end the agent's run
                failure = failure_of(exc, f"the listener {plugged_name(listener)}")
                if not isinstance(failure, Exception):
                    raise  # a cancel, a second Ctrl+C
                if not any(listener is known for known in self._failed):
                    self._failed.append(listener)
                    failures.append((listener, failure))
        return failures

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


def failure_event(listener: Listener, event: ev.Event, exc: Exception, at: float) -> ev.Event:
    """The ``listener_error`` event saying ``listener`` failed on ``event``; logged as a
    warning on the ``rho_domain.loop.journal`` logger as well."""
    name = plugged_name(listener)
    log.warning(
        "event listener %s failed on a %s event and is ignored for it; the run goes on "
        "(later failures of this listener are not reported)",
        name,
        event.kind,
        exc_info=exc,
    )
    return ev.ListenerFailed(
        at=at,
        listener=name,
        event_kind=event.kind,
        error_type=type(exc).__name__,
        message=message_of(exc),
    )
