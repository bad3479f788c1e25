"""What a session's listeners are (``Listener``, and the two kinds that want more:
``FollowsChildren``, ``EndsWithSession``) and how long one may take an event
(``LISTENER_SECONDS``); the journal announces each event to them (``journal.Journal``)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Protocol, TypeAlias, TypeGuard, runtime_checkable

from rho_domain.plugged import described, failure_of, plugged_name

if TYPE_CHECKING:
    from rho_domain import events as ev

LISTENER_SECONDS = 30.0
"""How long a run waits for an async listener to take one event. One that never returned
held the run forever: ``cancel()`` and the time budget stop raced work, not this wait. A sync
listener found to have held the event loop longer is stopped as well, once it returns."""

# A string, so that importing the loop does not join every kind of event (events.py).
Listener: TypeAlias = "Callable[[ev.Event], Awaitable[None] | None]"

# the journal's logger: a listener's failures are the journal's to report
log = logging.getLogger("rho_domain.loop.journal")


@runtime_checkable
class FollowsChildren(Protocol):
    """A listener that also wants the events of the child sessions this session delegates to
    (telemetry that nests a child's spans under the parent's ``delegate`` call)."""

    def for_child(self, child_session_id: str) -> Listener:
        """The listener to give the child session ``child_session_id``, created just before
        the child's first run (while the parent's ``delegate`` call is running)."""
        ...


@runtime_checkable
class EndsWithSession(Protocol):
    """A listener that wants to know when its session closes (telemetry ends the session's
    span, so that it is exported without the caller having to end it)."""

    def session_closed(self) -> None:
        """Called by ``Session.close()`` (each time), after the session's events are
        persisted."""
        ...


def ends_with_session(listener: object) -> TypeGuard[EndsWithSession]:
    """``isinstance(listener, EndsWithSession)``, a listener without a ``session_closed``
    (a function, as most are) told apart by one ``getattr`` first: the protocol's
    ``isinstance`` walks its attributes and the ABC's hooks (20-70 µs), once per listener at
    every session's close, a Session per request in a service. The same answer: the
    protocol itself counts a member that is missing or None as absent."""
    found = getattr(listener, "session_closed", None) is not None
    return found and isinstance(listener, EndsWithSession)


def tell_closed(listener: EndsWithSession) -> None:
    """``listener.session_closed()``, a failure logged, not raised: one that raised left the
    listeners after it untold (a tracer's session span never ended) and came out of
    ``Session.close`` as its error, the session closed all the same."""
    try:
        listener.session_closed()
    except BaseException as exc:  # a UI bug must not stand for the close
        failure = failure_of(exc, f"the listener {plugged_name(listener)}")
        if not isinstance(failure, Exception):
            raise  # a cancel, a second Ctrl+C
        log.warning(
            "event listener %s failed when its session closed (ignored; the others were told): %s",
            plugged_name(listener),
            described(failure),
        )


def child_listener(listener: object, child_session_id: str) -> Listener | None:
    """``listener.for_child(child_session_id)`` of a listener that ``FollowsChildren``; None
    for another, or (logged, naming the listener) when it raises: the child then runs
    without it. Before, a tracer's failure there failed the
    ``delegate`` call itself ("Tool 'delegate' failed unexpectedly: RuntimeError: ..."),
    naming no listener, and the sub-agent never ran."""
    if not isinstance(listener, FollowsChildren):
        return None
    try:
        return listener.for_child(child_session_id)
    except BaseException as exc:  # a UI bug must not stand for the delegation
        failure = failure_of(exc, f"the listener {plugged_name(listener)}")
        if not isinstance(failure, Exception):
            raise  # a cancel, a second Ctrl+C
        log.warning(
            "event listener %s failed to follow the child session %s (ignored; the child runs "
            "without it): %s",
            plugged_name(listener),
            child_session_id,
            described(failure),
        )
        return None


def refuse_non_listener(on_event: object, where: str) -> None:
    """Raise ``TypeError`` naming ``where`` (``Session(...)``, ``Session.run``) when
    ``on_event`` is neither None nor callable. Accepted, a number or a name given there was
    called on the first event, failed, and was reported once as a listener that raised,
    while the run went on without the listener the caller meant."""
    if on_event is None or callable(on_event):
        return
    raise TypeError(
        f"{where}: on_event must be a function called with each event (sync or async, "
        f"e.g. on_event=print), not {type(on_event).__name__} {on_event!r:.80}; nothing was run"
    )
