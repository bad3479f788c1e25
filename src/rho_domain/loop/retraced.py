"""What a retraced event must share with the event its trace holds at that place.

A durable run executed again retraces its trace (``Journal(replay=...)``): each event it emits
is matched against the recorded one by ``identity``; times, durations and texts may differ.
A failure of the clock is no step of the run (``clock_failed``): the journal passes over the
recorded ones a retrace does not meet again.
"""

from __future__ import annotations

from rho_domain import events as ev
from rho_domain.loop.guarded_clock import CLOCK_FAILED


def identity(event: ev.Event) -> tuple[str, str]:
    """What a replayed event must share with the recorded one: its kind, and the message's
    role or the tool call it is about (times, durations and texts may differ)."""
    if isinstance(event, ev.MessageAdded):
        return event.kind, type(event.message).__name__
    call_id = getattr(event, "call_id", None) or getattr(getattr(event, "call", None), "id", "")
    return event.kind, str(call_id or "")


def clock_failed(event: ev.Event) -> bool:
    """Whether ``event`` says the session's clock failed (``guarded_clock``)."""
    return isinstance(event, ev.ErrorOccurred) and event.error_type == CLOCK_FAILED
