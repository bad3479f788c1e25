"""What a tool call's result says when the call did not run, or its outcome is unknown.

Every call the model makes ends with a result in history. These are the texts (all sent as
error results) for the calls that did not run to the end, written for the model, in one place.
"""

from __future__ import annotations

REJECTED_PREFIX = "[rejected by the user"  # every rejection's result begins so
REJECTED = "[rejected by the user; not run. Wait for the user's instructions.]"
SKIPPED = "[not run: the user rejected an earlier call of this batch.]"
SUPERSEDED = "[not run: the user sent a new message instead of approving this call.]"
CANCELLED_RESULT = "[cancelled by the user; if it was running, its effects are unknown.]"
OUT_OF_TIME = (
    "[stopped: the run's time budget ran out while this ran; its effects, if any, are unknown.]"
)
CHANGED_SINCE_ASKED = (
    "a hook changed this call after it waited for approval, so it would not run as asked "
    "about; make the call again if it is still needed"
)
# the calls of a batch after the one that was stopped: they never started, so they did nothing
CANCELLED_BEFORE = "[not run: cancelled by the user before this call started.]"
OUT_OF_TIME_BEFORE = "[not run: the run's time budget ran out before this call started.]"
# an answer stopped at the model's output limit inside its last call's arguments: told
# "not valid JSON, fix them", the model sent the same call again, cut at the same place
CUT_AT_LIMIT = (
    "[not run: your answer stopped at its output limit (finish_reason length) inside the "
    "arguments of its last tool call, which are cut; no call of it ran. Make smaller calls "
    "(write a long file in parts), or ask the user to raise max_output_tokens.]"
)
DIED = "[interrupted: the previous process stopped while this ran; effects are unknown.]"
# the ``run_end`` error of a run whose end no one recorded (``run_boundaries``)
ENDED_UNRECORDED = (
    "ended unrecorded: the process that ran it stopped, or its store refused its run_end, "
    "before its end was written; how it ended is not known (its events above are all that "
    "was stored); ended when the session was next opened"
)
INTERRUPTED_RESULT = (
    "[interrupted: this tool call did not finish (the session was cancelled or its process "
    "stopped). Its effects, if any, are unknown; check before repeating it.]"
)


def ended_by(error: str) -> str:
    """The result of a call left without one when the run ended on ``error`` (``Type: message``),
    not a cancel: it was answered "cancelled by the user", which nobody had done."""
    if len(error) > 300:
        error = error[:300] + "..."
    return (
        f"[stopped: the run ended on an error ({error}) before this call's result was "
        "recorded; its effects, if any, are unknown.]"
    )


def rejected(reason: str = "") -> str:
    """The result of a call the user rejected, with their reason when they gave one."""
    if not reason:
        return REJECTED
    return f"[rejected by the user: {reason}. Not run. Wait for the user's instructions.]"


def denied(reason: str) -> str:
    """The result of a call the profile's policy denied."""
    return f"[denied: {reason}; not run.]"
