"""A pending call as its answerer is shown it, and the digest its answer must carry back.

``State`` keeps, for each call asked about, the shape of the tool the answerer saw
(``asked_shapes``), the directory it was to run in (``asked_places``), the reason it waits
(``approval_reasons``) and a waiting sub-agent's own call (``waiting_children``). These views
read that bookkeeping, never change it; ``State``'s methods of the same names call them (the
surfaces that show a pending call go through the ``State``). Each view covers the same three
things, so that what a human approved is what runs (``rho_domain.call_digest``): the call, where
it runs, and a waiting sub-agent's call, which an answer to its parent approves too.

Loaded with the first pending call shown or answered: a run that goes as planned never loads
it (nor ``call_digest``, ``pending``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from rho_domain.messages import ToolCall
    from rho_domain.pending import PendingApproval


class AskedCalls(Protocol):
    """What the views read of a session's state (``State`` is one)."""

    @property
    def approval_reasons(self) -> Mapping[str, str]:
        """Why each call waits, by call id."""
        ...

    @property
    def asked_shapes(self) -> Mapping[str, str]:
        """The tool's shape each call was asked about under, by call id."""
        ...

    @property
    def asked_places(self) -> Mapping[str, str]:
        """Where each call was asked about to run, by call id."""
        ...

    @property
    def waiting_children(self) -> Mapping[str, tuple[str, ToolCall]]:
        """A waiting sub-agent's session id and call, by its parent's call id."""
        ...

    def awaiting_decision(self) -> tuple[ToolCall, ...]:
        """Pending calls that nobody has approved or rejected yet."""
        ...


def approval_digest(state: AskedCalls, call: ToolCall) -> str:
    """The digest an answer about the pending ``call`` carries (``call_digest``)."""
    from rho_domain.call_digest import call_digest

    child, shown = _child_of(state, call.id), state.asked_shapes.get(call.id, "")
    place = state.asked_places.get(call.id, "")
    return call_digest(call.name, call.arguments, child=child, shown=shown, place=place)


def shown_call(state: AskedCalls, call: ToolCall) -> str:
    """The pending ``call`` as an answerer is to be shown it: the call, where it runs, and a
    waiting sub-agent's call (``approval_digest`` covers all three)."""
    place = state.asked_places.get(call.id, "")
    shown = f"{call.name} {call.arguments}" + (f" in {place}" if place else "")
    child = _child_of(state, call.id)
    return shown if child is None else f"{shown} (its sub-agent asks to run {' '.join(child)})"


def check_digest(state: AskedCalls, call: ToolCall, digest: str, *, place: str | None) -> None:
    """``CallChanged`` unless ``digest`` is ``approval_digest(state, call)``, run in ``place``
    when given (where the session runs it now; one asked about elsewhere: refused, naming
    both)."""
    from rho_domain.call_digest import check

    child, shown = _child_of(state, call.id), state.asked_shapes.get(call.id, "")
    asked = state.asked_places.get(call.id, "")
    now = asked if place is None or not asked else place  # old traces: none recorded
    held = (call.id, call.name, call.arguments, digest)
    check(*held, child=child, shown=shown, place=now, asked=asked)


def waiting_approvals(state: AskedCalls) -> tuple[PendingApproval, ...]:
    """The calls nobody has answered yet, each with why it waits (a run's ``pending``)."""
    from rho_domain.pending import PendingApproval

    reasons = state.approval_reasons
    return tuple(
        PendingApproval(
            call=c,
            reason=reasons.get(c.id, "waiting for approval"),
            digest=approval_digest(state, c),
            working_dir=state.asked_places.get(c.id, ""),
        )
        for c in state.awaiting_decision()
    )


def _child_of(state: AskedCalls, call_id: str) -> tuple[str, str] | None:
    waiting = state.waiting_children.get(call_id)
    return None if waiting is None else (waiting[1].name, waiting[1].arguments)
