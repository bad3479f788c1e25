"""The watcher of a run's signal source: an outside cancel (``rho-agent cancel``, the
server's) heard while the run works, or, when the source fails, why it is no longer heard.

A source whose ``wait_for_cancel`` failed (a LISTEN connection lost, a control file
unreadable) ended the watcher in silence (a ``RhoError``) or with its exception never
retrieved (any other): outside cancels went unheard for the rest of the run and nothing said
so. ``watch_for_cancel`` returns what to say; ``RunControl`` says it at its next checkpoint,
in the run's own task (the watcher must not write to the journal beside the run).
"""

from __future__ import annotations

from collections.abc import Callable

from rho_domain.loop.guarded_ports import GuardedSignals
from rho_domain.plugged import described, plugged_name

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
