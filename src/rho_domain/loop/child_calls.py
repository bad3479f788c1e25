"""A delegate call whose sub-agent waits, from the parent's side: the answer it gets, the wait
recorded as the parent's own approval request, and the delegate's result once the sub-agent
ran on.

``child_answer`` is the answer for the sub-agent's waiting call (recorded in State, or the
parent's approver's, asked about the child's call), None when the run stops;
``record_child_waiting`` records the sub-agent's first waiting call as an ``ApprovalRequested``
on the parent's delegate call (with ``child_session_id`` and ``child_call``);
``continued_child`` gives the sub-agent the answer through the ``ChildResumer`` and returns the
delegate call's result (an error result when it cannot go on); ``answered_elsewhere`` the
sub-agent's outcome when its waiting call was answered in the sub-agent itself. ``ToolBatch``
(``tool_batch.py``) imports this module with the first sub-agent that waits; ``SubAgents``
(``sub_agents.py``) runs the children themselves.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rho_domain import events as ev
from rho_domain.errors import RhoError
from rho_domain.loop.tool_approval import Asking, ask_approval
from rho_domain.messages import AssistantMessage, ToolCall, ToolResultMessage, Usage
from rho_domain.not_run import REJECTED_PREFIX
from rho_domain.tools.base import ToolOutput, error_output

if TYPE_CHECKING:
    from rho_domain.loop.journal import Journal
    from rho_domain.pending import PendingApproval
    from rho_domain.ports.clock import Clock
    from rho_domain.state import State
    from rho_domain.tools.children import ChildAnswer, ChildOutcome, ChildResumer


async def child_answer(
    tools: Asking, call: ToolCall, batch: Sequence[ToolCall]
) -> ChildAnswer | None:
    """The answer for the sub-agent waiting under the delegate ``call``: recorded, or from the
    approver; None when the run stops (no approver, or cancelled)."""
    child_id, child_call = tools.state.waiting_children[call.id]
    reason = tools.state.approval_reasons.get(call.id, "the sub-agent waits for approval")
    approved = await ask_approval(tools, call, reason, batch, shown=(child_id, child_call))
    if approved is None:
        return None
    from rho_domain.call_digest import call_digest
    from rho_domain.tools.children import ChildAnswer  # with the first child continued

    return ChildAnswer(
        session_id=child_id,
        call_id=child_call.id,
        approved=approved,
        reason=tools.state.rejection_reasons.get(call.id, ""),
        digest=call_digest(child_call.name, child_call.arguments),
    )


async def continued_child(resume_child: ChildResumer | None, answer: ChildAnswer) -> ToolOutput:
    """The delegate result once a waiting sub-agent has the answer and ran on."""
    if resume_child is None:
        return error_output("the sub-agent cannot be continued here (no delegation)")
    # delegate's module loads with the first child continued, as it does with the tool
    from rho_domain.tools.delegate import outcome_output

    try:
        return outcome_output(await resume_child(answer))
    except RhoError as exc:
        return error_output(f"the sub-agent could not continue: {exc}")


async def record_child_waiting(
    journal: Journal,
    clock: Clock,
    call: ToolCall,
    batch: Sequence[ToolCall],
    child_id: str,
    pending: Sequence[PendingApproval],
    *,
    place: str,
) -> None:
    """Record the sub-agent's first waiting call as this delegate call's approval, asked
    about to run in ``place`` (the parent's executor's working directory, which the sub-agent
    shares): the answer's digest covers it, as it covers any call's."""
    waiting = pending[0]
    reason = (
        f"the sub-agent {child_id} asks to run {waiting.call.name} "
        f"{waiting.call.arguments}: {waiting.reason}"
    )
    await journal.emit(
        ev.ApprovalRequested(
            at=clock.now(),
            call=call,
            reason=reason,
            pending=tuple(batch),
            child_session_id=child_id,
            child_call=waiting.call,
            place=place,
        )
    )


def answered_elsewhere(child_id: str, state: State, call_id: str) -> ChildOutcome | None:
    """The child's outcome when its waiting call ``call_id`` was answered in the child itself
    (resumed on its own): its last answer and status, or the calls it waits for now; None when
    the call has no result there (it is not known to that child). The usage is none: it was
    spent in that other run, not in the parent's."""
    results = {m.call_id: m for m in state.messages if isinstance(m, ToolResultMessage)}
    if call_id not in results:
        return None
    last = state.messages[-1] if state.messages else None
    text = last.text if isinstance(last, AssistantMessage) and not last.tool_calls else ""
    waiting = state.waiting_approvals()
    rejected = ""
    if results[call_id].content.startswith(REJECTED_PREFIX):
        calls = {c.id: c for m in state.messages if isinstance(m, AssistantMessage)
                 for c in m.tool_calls}  # fmt: skip
        call = calls.get(call_id)  # a compaction may have summarised the call away
        rejected = (
            f"{call.name} {call.arguments}" if call is not None else results[call_id].tool_name
        )
    from rho_domain.tools.children import ChildOutcome  # with the first child answered elsewhere

    return ChildOutcome(
        session_id=child_id,
        status="awaiting_approval" if waiting else state.status,
        text=text,
        usage=Usage(),
        pending=waiting,
        rejected=rejected,
    )
