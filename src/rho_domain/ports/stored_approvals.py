"""The calls of a stored session that wait for a human's decision, and the event that answers
one: what every ``SessionControl`` adapter lists (``approvals``) and appends (``answer``), read
from the session's events, so that the memory, file and PostgreSQL stores answer alike.
``answer_through`` answers through a ``SessionStore`` a session no live process holds.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from rho_domain import events as ev
from rho_domain.errors import SessionStateError
from rho_domain.ports.store import SessionStore
from rho_domain.state import State
from rho_domain.value_methods import value_eq, value_hash, value_repr


@attrs.frozen(kw_only=True)
class PendingApproval:
    """A tool call waiting for a human's decision."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    call_id: str
    tool: str
    arguments: str
    reason: str = ""


def pending_approvals(events: Sequence[ev.Event]) -> tuple[PendingApproval, ...]:
    """The calls of a stored session that still wait for a decision, from its events: the
    calls asked about and not answered (``State.awaiting_decision``), not the rest of their
    batch, which no one was asked about yet (and some of which need no approval)."""
    state = State.from_events(events)
    return tuple(
        PendingApproval(
            call_id=c.id,
            tool=c.name,
            arguments=c.arguments,
            reason=state.approval_reasons.get(c.id, ""),
        )
        for c in state.awaiting_decision()
    )


def approval_answer(
    waiting: Sequence[PendingApproval],
    call_id: str,
    *,
    approved: bool,
    always: bool,
    reason: str,
    at: float,
) -> ev.ApprovalResolved:
    """The event that answers ``call_id`` among the ``waiting`` calls (what every adapter's
    ``SessionControl.answer`` appends); ``SessionStateError`` naming the waiting calls when
    ``call_id`` is not one of them."""
    tools = {p.call_id: p.tool for p in waiting}
    if call_id not in tools:
        known = ", ".join(tools) or "none"
        raise SessionStateError(f"no pending tool call {call_id!r} (pending: {known})")
    return ev.ApprovalResolved(
        at=at,
        call_id=call_id,
        tool_name=tools[call_id],
        approved=approved,
        always=always,
        reason=reason,
    )


async def answer_through(
    store: SessionStore,
    session_id: str,
    call_id: str,
    *,
    approved: bool,
    always: bool,
    reason: str,
    at: float,
) -> None:
    """Answer ``call_id`` of a stored session that no live process holds, through ``store``:
    open it (its lock keeps a run from starting meanwhile), append ``approval_answer``'s
    event, release it. ``SessionStateError`` when the call is not waiting; the store's own
    errors (``SessionLocked``...) as they come."""
    _, events = await store.open(session_id)
    try:
        answer = approval_answer(
            pending_approvals(events),
            call_id,
            approved=approved,
            always=always,
            reason=reason,
            at=at,
        )
        await store.append(session_id, [answer])
    finally:
        await store.release(session_id)
