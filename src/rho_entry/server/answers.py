"""Answering a pending approval over HTTP, for ``SessionHost.answer`` once the session is
known to be drivable here.

In this process (``answer_here``): the run holding the call is let settle for the answer
grace; when nothing holds it, the trace must show the call waiting (else 404, and no run is
dispatched just to find out, which would call the model) and a run is dispatched to hold it.
On a durable server (``answer_on_queue``): the session's last run continues on the queue with
the answer and its digest, which the worker checks again against the call it resumes.
Either way a call that is not waiting is a 404 naming the calls that are. A session reopened
for an answer it does not take (``CallChanged``, or the call not waiting there) is let go at
once, so the next answer reopens it from what is stored then; one still opening when the
answer gives up (or whose request is cancelled: the client gone, a shutdown) is released
after ``approval_hold``; one that ends before it takes the answer (another process opened it
meanwhile, a cancel) is a 409 saying why, the call still waiting. An answer that comes while a
session is being released (closing: it takes no answer) waits for it to close, then
reopens it; it was a 404 'pending: none'. Before, a reopened session ended no run, so
nothing released it: reopened with an edited config.yaml (``working_dir`` moved), it stayed
held with that config until the server stopped (config.yaml put back, every answer was still
refused, "now runs it in .../sub"), and a terminal's ``--resume`` found it locked.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from rho_domain.state import State
from rho_domain.value_methods import value_eq, value_hash, value_repr
from rho_entry.runtime.handle_values import HandleStatus
from rho_entry.server.bodies import Decision
from rho_entry.server.errors import Conflict, NotFound
from rho_entry.server.views import pending_approvals

if TYPE_CHECKING:
    from rho_domain.ports.session_control import SessionOperator
    from rho_entry.runtime import AgentHandle
    from rho_entry.server.durable_runs import DurableRuns
    from rho_entry.server.runs import Runs
    from rho_entry.server.session_feeds import SessionFeeds
    from rho_entry.server.settings import ServerSettings


@attrs.frozen(kw_only=True)
class Answer:
    """One answer to a pending call: its id, ``decision``, and the call's digest as the
    answerer was shown it (None only for a denial)."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    call_id: str
    decision: Decision
    digest: str | None


async def answer_here(
    runs: Runs,
    feeds: SessionFeeds,
    sessions: SessionOperator,
    session_id: str,
    answer: Answer,
    settings: ServerSettings,
) -> None:
    """Give ``answer`` to the handle of ``session_id`` in this process (dispatching one when
    none holds the call), one answer or message at a time per session (``Runs.turn``). Raises
    ``NotFound`` for a call that is not waiting, ``Busy`` when no run may start, and
    ``CallChanged`` (through the handle) for a changed call."""
    async with runs.turn(session_id):
        await _answer_here(runs, feeds, sessions, session_id, answer, settings)


async def _answer_here(
    runs: Runs,
    feeds: SessionFeeds,
    sessions: SessionOperator,
    session_id: str,
    answer: Answer,
    settings: ServerSettings,
) -> None:
    call_id = answer.call_id
    handle = runs.handles.get(session_id)
    if handle is not None:
        await runs.settle(handle, settings.answer_grace)
        if not handle.done and handle.status is not HandleStatus.AWAITING_APPROVAL:
            # settled, yet neither waiting nor done: let go (approval_hold, a cancel) and
            # closing its session. It takes no answer, and the call still waits in the
            # trace: this was a 404 'pending: none'. Reopened below once closed.
            await runs.closed(handle, settings.answer_grace)
    if handle is None or handle.done:
        # asked before anything runs: a run dispatched to find out would call the model
        state = State.from_events((await sessions.recording(session_id))[1])
        stored = [p["call_id"] for p in pending_approvals(state)]
        if call_id not in stored:
            raise NotFound(not_waiting(call_id, stored))
        runs.check_capacity()
        feed, done = await feeds.current(session_id), feeds.done(session_id)
        handle = await runs.dispatch(session_id, None, feed, done=done)
        # reopened, it ends no run, so nothing else releases it (it was held, and locked,
        # until the server stopped): still opening, it is released after the hold as a
        # run that stopped for approval is; not taking this answer, it is let go at once
        try:
            await runs.settle(handle, settings.answer_grace)
        except BaseException:  # past the grace, or the request cancelled (client gone, stop)
            runs.hold(handle, feed)
            raise
        if handle.done:
            raise Conflict(_ended(handle, session_id, call_id))
        try:
            _give(handle, answer)
        except Exception:
            await runs.stop(session_id, settings.shutdown_grace)
            raise
        return
    _give(handle, answer)


def _ended(handle: AgentHandle, session_id: str, call_id: str) -> str:
    """The 409's words: the reopened session ended before it took the answer (another
    process opened it meanwhile, a cancel, its working directory gone); it was a 404
    'pending: none' though the call still waits in the trace."""
    result = handle.result
    why = result.error if result is not None and result.error else handle.status.value
    return (
        f"session {session_id} ended before it took the answer ({why}); tool call "
        f"{call_id[:200]!r} still waits: read it again (GET /api/sessions/{session_id}) "
        "and answer it once nothing else holds the session"
    )


def _give(handle: AgentHandle, answer: Answer) -> None:
    waiting = [p.call.id for p in handle.pending_approvals]
    if answer.call_id not in waiting:
        raise NotFound(not_waiting(answer.call_id, waiting))
    decision, digest = answer.decision, answer.digest
    handle.approve(answer.call_id, decision != "deny", always=decision == "always", digest=digest)


async def answer_on_queue(
    durable: DurableRuns,
    sessions: SessionOperator,
    session_id: str,
    answer: Answer,
) -> None:
    """``answer`` on a durable server: the session's last run continues on the queue,
    with the digest, which the worker checks again against the call it resumes. Raises
    ``NotFound`` for a call that is not waiting, ``CallChanged`` for a changed call."""
    call_id, digest = answer.call_id, answer.digest
    _, events = await sessions.recording(session_id)
    state = State.from_events(events)
    stored = {c.id: c for c in state.awaiting_decision()}
    if call_id not in stored:
        raise NotFound(not_waiting(call_id, list(stored)))
    if digest is not None:
        state.check_digest(stored[call_id], digest)
    await durable.answer(session_id, tuple(events), call_id, answer.decision, digest)


def not_waiting(call_id: str, waiting: list[str]) -> str:
    """The 404's words: ``call_id`` awaits no approval, and which calls do. The id is the
    caller's text, cut short: a body's ``call_id`` is as long as the body allows (256 KiB),
    and the answer repeated it whole."""
    known = ", ".join(waiting) or "none"
    return f"no tool call {call_id[:200]!r} awaits approval (pending: {known})"
