"""The watcher of a run's signal source: an outside cancel (``rho-agent cancel``, the
server's) heard while the run works, or, when the source fails, why it is no longer heard;
and ``kept_sleep``, the Clock's sleep that a failing clock cannot turn into a run that never
ends.

A source whose ``wait_for_cancel`` failed (a LISTEN connection lost, a control file
unreadable) ended the watcher in silence (a ``RhoError``) or with its exception never
retrieved (any other): outside cancels went unheard for the rest of the run and nothing said
so. ``watch_for_cancel`` returns what to say; ``RunControl`` says it at its next checkpoint,
in the run's own task (the watcher must not write to the journal beside the run).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from rho_domain.loop.guarded_ports import GuardedSignals
from rho_domain.plugged import described, failure_of, plugged_name
from rho_domain.ports.clock import Clock

DEAF = "SignalSourceError"  # the ``error_type`` of a signal source that stopped listening


async def watch_for_cancel(
    signals: GuardedSignals, session_id: str, cancel: Callable[[], None]
) -> str | None:
    """Call ``cancel`` when ``signals`` says ``session_id`` was cancelled (then None); when
    its ``wait_for_cancel`` fails, the warning to record instead."""
    try:
        await signals.wait_for_cancel(session_id)
    except Exception as exc:  # noqa: BLE001 - the run goes on; told, not raised
        return (
            f"the signal source {plugged_name(signals.signals)} stopped listening for "
            f"cancels ({described(exc)}): a cancel from outside this process (rho-agent "
            "cancel, the server's) is not heard for the rest of this run; one in this "
            "process (Ctrl+C, Session.cancel) still is"
        )
    cancel()
    return None


async def kept_sleep(clock: Clock, seconds: float) -> None:
    """``clock.sleep(seconds)``; when the clock fails there (an ``Exception``, or a
    ``CancelledError`` nothing asked for), the rest is slept on the event loop's own time.

    The pause loop let a clock's unasked ``CancelledError`` out of ``Session.run`` (as if its
    caller had been cancelled: no result), and the deadline timer died with it, or with any
    exception, in silence: work that never ends ran on past the run's wall-time budget. A
    cancel of the sleeper (the timer cancelled, the run cancelled) still cancels."""
    started = clock.monotonic()
    try:
        await clock.sleep(seconds)
    except BaseException as exc:
        if failure_of(exc, "the clock") is exc and not isinstance(exc, Exception):
            raise  # asked for (the sleeper is being cancelled), or KeyboardInterrupt
        await asyncio.sleep(max(seconds - (clock.monotonic() - started), 0.0))
