"""A trace recorded before approvals were bound to the MCP tool as shown: its
``approval_requested`` events carry no ``shown``. Resumed (a worker restarted, ``--resume ID
--approve CALL@DIGEST``, a durable queue's answer), its call is asked about again once, said
as an old trace's, not as a tool that changed; then it runs."""

from __future__ import annotations

import asyncio

import attrs
from test_mcp_lookalikes import EXPORT, restarted, session_on

from rho_adapters.fakes import ScriptedApprover
from rho_adapters.fakes import call as wire_call
from rho_adapters.fakes import text as text_turn
from rho_adapters.fakes import tools as tools_turn
from rho_domain import events as ev
from rho_domain.messages import ToolResultMessage
from rho_domain.ports.approver import ApprovalAnswer
from rho_domain.run import RunStatus
from rho_domain.state import State

UNSHAPED = (
    "'mcp__h__export' was approved in a trace that recorded no shape of it (written before "
    "approvals were bound to the tool as shown), so it is asked about as it is shown now: "
)


def _recorded(approver: ScriptedApprover | None, calls: int) -> list[ev.Event]:
    """The events of a session calling export ``calls`` times, with ``shown`` dropped from
    each question, as an older version wrote them."""
    turns = [tools_turn(wire_call("mcp__h__export", id=f"c{n}")) for n in range(calls)]
    session = session_on([[EXPORT]], approver, [*turns, text_turn("done")])
    events: list[ev.Event] = []
    session.journal.listeners.append(events.append)
    asyncio.run(session.run("go"))
    old = [attrs.evolve(e, shown="") if isinstance(e, ev.ApprovalRequested) else e for e in events]
    assert any(isinstance(e, ev.ApprovalRequested) and e.shown for e in events)
    return old


def test_an_old_traces_waiting_call_is_asked_again_once_then_runs() -> None:
    # before: the same re-ask, said as "'mcp__h__export' changed its description or input
    # schema since it was approved", of a tool that had not changed
    old = _recorded(None, 1)
    given = State.from_events(old).waiting_approvals()[0].digest  # what the old CLI or queue
    session, errors = restarted(old, [EXPORT], None, [text_turn("done")])
    session.resolve_approval("c0", True, digest=given)  # the digest of the old trace holds
    assert asyncio.run(session.run()).status is RunStatus.AWAITING_APPROVAL
    assert errors == [UNSHAPED + "the approval of call c0 is asked for again"]
    now = session.state.waiting_approvals()[0].digest
    assert now != given
    session.resolve_approval("c0", True, digest=now)
    assert asyncio.run(session.run()).status is RunStatus.COMPLETED
    assert len(errors) == 1  # asked again once
    results = [m for m in session.state.messages if isinstance(m, ToolResultMessage)]
    assert [r.content for r in results] == ["export ran"]


def test_an_old_traces_always_given_back_by_a_queue_asks_once() -> None:
    old = _recorded(ScriptedApprover([ApprovalAnswer(approved=True, always=True)]), 1)
    turns = [
        tools_turn(wire_call("mcp__h__export", id="c1")),
        tools_turn(wire_call("mcp__h__export", id="c2")),
        text_turn("done"),
    ]
    approver = ScriptedApprover([ApprovalAnswer(approved=True, always=True)])
    session, errors = restarted(old, [EXPORT], approver, turns)
    session.state.always_allowed.add("mcp__h__export")  # as the durable queue gives it back
    assert asyncio.run(session.run("again")).status is RunStatus.COMPLETED
    assert [r.call.id for r in approver.requests] == ["c1"]  # c2 held by the new "always"
    assert errors == [
        UNSHAPED + "its 'always' no longer holds (answer 'always' again to approve it as it is)"
    ]
