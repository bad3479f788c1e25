"""Asking about one tool call: the answer State holds, else the approver's, raced against
cancellation.

``ask_approval`` returns True (approved), False (rejected) or None: the run stops, awaiting
approval (no approver wired, or an answer given out of band: ``ApprovalInterrupt``) or
cancelled. It records ``ApprovalRequested`` the first time a call is asked about and
``ApprovalResolved`` with the approver's answer. ``ToolBatch`` (``tool_batch.py``) imports it
with the first call that needs an approval: a plain run's calls are allowed.
``record_answer`` records an answer given between runs (``Session.resolve_approval``).
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from rho_domain import events as ev
from rho_domain.errors import ApproverFailed, ConfigError, RhoError, SessionStateError
from rho_domain.messages import ToolCall
from rho_domain.plugged import contained, described, plugged_name
from rho_domain.tools.prepared import decode_arguments

if TYPE_CHECKING:
    from rho_domain.loop.control import RunControl
    from rho_domain.loop.journal import Journal
    from rho_domain.ports.approver import ApprovalAnswer, ApprovalRequest, Approver
    from rho_domain.ports.clock import Clock
    from rho_domain.ports.executor import Executor
    from rho_domain.state import State


def record_answer(
    journal: Journal,
    call_id: str,
    approved: bool,
    *,
    always: bool,
    reason: str,
    digest: str | None,
    place: str | None = None,
) -> None:
    """Record the answer to the pending call ``call_id`` (``Session.resolve_approval``'s
    contract). Raises ``SessionStateError`` for a call not pending (naming those that are) and
    ``CallChanged`` for a ``digest`` that is not the held call's run in ``place`` (the
    session's working directory now); then nothing is recorded."""
    pending = {c.id: c for c in journal.state.pending_calls}
    if call_id not in pending:
        known = ", ".join(pending) or "none"
        raise SessionStateError(f"no pending tool call {call_id!r} (pending: {known})")
    if digest is not None:
        journal.state.check_digest(pending[call_id], digest, place=place)
    journal.record(
        ev.ApprovalResolved(
            at=journal.clock.now(),
            call_id=call_id,
            tool_name=pending[call_id].name,
            approved=approved,
            always=always,
            reason=reason,
            digest=digest,
        )
    )


class Asking(Protocol):
    """What asking reads of the batch (``ToolBatch``), when it asks: ``Session.set_approver``
    replaces the approver between calls."""

    session_id: str
    approver: Approver | None
    state: State
    journal: Journal
    clock: Clock
    control: RunControl
    executor: Executor


async def ask_approval(
    tools: Asking,
    call: ToolCall,
    reason: str,
    batch: Sequence[ToolCall],
    *,
    arguments: Mapping[str, Any] | None = None,
    shown: tuple[str, ToolCall] | None = None,
    shape: str = "",
    reviews: tuple[str, ...] = (),
) -> bool | None:
    """The decision for ``call``: from State if resolved, else from the approver.
    None means the run stops (no approver: awaiting approval; or cancelled).
    ``arguments`` are the call's decoded arguments (its ``PreparedCall``'s); ``shown`` (a
    sub-agent's session and call, parsed here) is what the approver is asked about;
    ``shape`` the tool as the approver is shown it (``tool_refresh.shown_shape``): an answer
    recorded for the call asked about under another shape does not hold, and it is asked
    again (the new request, recorded, takes the answer back: ``State``); ``reviews`` the
    earlier writing calls whose files ``reason`` names (``ApprovalRequested.reviews``)."""
    state = tools.state
    place = tools.executor.working_dir
    # an answer holds for the call run where it was asked about: elsewhere, it is asked again
    same = state.asked_shapes.get(call.id, shape) == shape
    same = same and state.asked_places.get(call.id, place) in (place, "")
    if (known := state.approvals.get(call.id)) is not None and same:
        return known
    if call.id not in state.approvals or not same:
        await tools.journal.emit(
            ev.ApprovalRequested(
                at=tools.clock.now(),
                call=call,
                reason=reason,
                pending=tuple(batch),
                shown=shape,
                place=place,
                reviews=reviews,
            )
        )
        # a listener may answer in the event itself (resolve_approval): that answer holds,
        # nobody else is asked; before, the run ended awaiting the decision it had
        if (known := tools.state.approvals.get(call.id)) is not None:
            return known
    if tools.approver is None:
        return None
    # the port's values with the first approver asked (a run nobody asks never builds them)
    from rho_domain.ports.approver import ApprovalInterrupt, ApprovalRequest

    session_id, asked = shown if shown is not None else (tools.session_id, call)
    if shown is not None:
        try:
            arguments = decode_arguments(asked)
        except RhoError:
            arguments = None
    request = ApprovalRequest(
        session_id=session_id, call=asked, arguments=arguments or {}, reason=reason
    )
    # contained: a SystemExit raised in this task of its own left the event loop itself
    by = f"the approver {plugged_name(tools.approver)}"
    asking = asyncio.ensure_future(contained(_decided(tools.approver, request, by), by))
    try:
        if not await tools.control.race(asking):
            return None
    except ApprovalInterrupt:
        return None  # answered out of band: the call stays pending (awaiting approval)
    answer = asking.result()
    if (known := tools.state.approvals.get(call.id)) is not None:
        # answered meanwhile (resolve_approval while the approver decided): the first answer
        # holds; the approver's later one overrode it, the call's two answers both recorded
        return known
    await tools.journal.emit(
        ev.ApprovalResolved(
            at=tools.clock.now(),
            call_id=call.id,
            tool_name=asked.name,
            approved=answer.approved,
            always=answer.always and shown is None,  # "always" is the parent's own
        )
    )
    return answer.approved


async def _decided(approver: Approver, request: ApprovalRequest, by: str) -> ApprovalAnswer:
    """``approver``'s answer to ``request``, awaited when it is awaitable (a ``decide`` written
    without ``async`` answered a TypeError). What it raises is an ``ApproverFailed`` naming it
    and the call (the run ended on its bare "ValueError: ..."). Anything but an
    ``ApprovalAnswer`` (None, True) is a ``ConfigError`` naming the approver: it ended the run
    with "AttributeError: 'NoneType' object has no attribute 'approved'", which named nobody.
    The call is not run."""
    from rho_domain.ports.approver import ApprovalAnswer, ApprovalInterrupt

    call = request.call
    try:
        answer: object = approver.decide(request)
        if inspect.isawaitable(answer):
            answer = await answer
    except ApprovalInterrupt:
        raise
    except Exception as exc:  # the approver's bug: named, and the call keeps waiting
        raise ApproverFailed(
            f"{by} raised {described(exc)} deciding on call {call.id} ({call.name}); the call "
            "was not run and waits for a decision: fix the approver and resume the session, "
            "or answer the call (resolve_approval)"
        ) from exc
    if not isinstance(answer, ApprovalAnswer):
        raise ConfigError(
            f"{by} answered {type(answer).__name__}, not an ApprovalAnswer: its decide must "
            "return ApprovalAnswer(approved=True or False), or raise ApprovalInterrupt to "
            "leave the call pending"
        )
    return answer
