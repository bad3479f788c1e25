"""Sub-agents: the child sessions a session's ``delegate`` tool runs.

A child shares its parent's ports, has no ``delegate`` tool of its own and the budget left in
the parent's run; its usage counts against that run, and listeners that follow children
(``FollowsChildren``, e.g. tracing) follow it. A child that stops to wait for an approval is
continued with the answer (``resume``): reopened from the store, so any process can continue
it, or, without a store, kept in this process until then.
"""

from __future__ import annotations

from typing import Protocol

import attrs

from rho_domain import events as ev
from rho_domain.agent import Agent
from rho_domain.errors import SessionStateError
from rho_domain.journal import FollowsChildren, Journal, Listener
from rho_domain.ports.clock import Clock
from rho_domain.ports.store import SessionStore
from rho_domain.run import RunResult, RunStatus, RunTally, remaining_budget
from rho_domain.state import State
from rho_domain.tools.base import ChildAnswer, ChildOutcome


class ChildSession(Protocol):
    """What this module uses of a child session (``rho_domain.session.Session``)."""

    id: str
    state: State
    journal: Journal

    async def run(
        self,
        prompt: str | None = None,
        *,
        max_turns: int | None = None,
        on_event: Listener | None = None,
    ) -> RunResult:
        """Run the child (see ``Session.run``)."""
        ...

    async def close(self) -> None:
        """Persist and release the child (see ``Session.close``)."""
        ...

    def resolve_approval(
        self, call_id: str, approved: bool, *, always: bool = False, reason: str = ""
    ) -> None:
        """Answer the child's pending approval (see ``Session.resolve_approval``)."""
        ...


class ParentSession(Protocol):
    """What this module uses of the parent session: its ports and state, the run in progress
    (``_tally``, None between runs) and how it builds a session on its own ports."""

    @property
    def agent(self) -> Agent:
        """The parent's agent, with the tools its tool source served last."""
        ...

    clock: Clock
    state: State
    store: SessionStore | None
    journal: Journal
    _tally: RunTally | None

    def _related(
        self,
        agent: Agent,
        *,
        session_id: str | None = None,
        state: State | None = None,
        delegation: bool = True,
    ) -> ChildSession:
        """A session on the parent's ports with the parent as its parent."""
        ...


class SubAgents:
    """The children of one parent session (its ``ChildRunner`` and ``ChildResumer``). Part
    of the session: it reads the parent's current run (``_tally``) and builds children on the
    parent's ports (``_related``)."""

    def __init__(self, parent: ParentSession) -> None:
        self._parent = parent
        # Children waiting for an approval, when there is no store to reopen them from.
        self._waiting: dict[str, ChildSession] = {}

    async def run(self, instruction: str, *, full_context: bool) -> ChildOutcome:
        """Run a new child on ``instruction``; with ``full_context`` it first gets the
        parent's settled history."""
        parent = self._parent
        child = self._new()
        if full_context:
            for message in parent.state.settled_history():
                child.journal.record(ev.MessageAdded(at=parent.clock.now(), message=message))
        return await self._drive(child, instruction)

    async def resume(self, answer: ChildAnswer) -> ChildOutcome:
        """Give a waiting child the answer to its call and run it on. Raises
        SessionStateError when the child is not found or no longer waits for that call."""
        child = self._waiting.pop(answer.session_id, None)
        if child is None:
            store = self._parent.store
            if store is None:
                raise SessionStateError(f"sub-agent {answer.session_id} is not in this process")
            if not _is_plain_id(answer.session_id):
                # the id comes from the trace, which is data: a store may read a path or a
                # ``latest`` there, and the child must be a session of this store, by its id
                raise SessionStateError(
                    f"sub-agent {answer.session_id!r} is not a session id; the trace that "
                    "names it was not written by rho-agent"
                )
            record, events = await store.open(answer.session_id)
            child = self._new(record.id, State.from_events(events))
        if answer.call_id not in {c.id for c in child.state.awaiting_decision()}:
            await child.close()
            raise SessionStateError(
                f"sub-agent {child.id} does not wait for call {answer.call_id} any more"
            )
        child.resolve_approval(
            answer.call_id, answer.approved, always=answer.always, reason=answer.reason
        )
        return await self._drive(child, None)

    def _new(self, session_id: str | None = None, state: State | None = None) -> ChildSession:
        """A child session: no ``delegate`` tool, the run's remaining budget, the same ports."""
        parent = self._parent
        agent = parent.agent.without_tools("delegate")
        if (tally := parent._tally) is not None:
            budget = remaining_budget(agent.config.budget, tally.usage + tally.child_usage)
            agent = attrs.evolve(agent, config=attrs.evolve(agent.config, budget=budget))
        child = parent._related(agent, session_id=session_id, state=state, delegation=False)
        for listener in parent.journal.listeners:  # e.g. tracing: the child's spans nest in ours
            if isinstance(listener, FollowsChildren):
                child.journal.listeners.append(listener.for_child(child.id))
        return child

    async def _drive(self, child: ChildSession, prompt: str | None) -> ChildOutcome:
        """Run ``child``; count its usage against the parent's run; note a call the user
        rejected."""
        rejected: list[str] = []

        def on_event(event: ev.Event) -> None:
            if isinstance(event, ev.ToolBlocked) and event.by == "user":
                why = "" if event.reason == "rejected" else f" ({event.reason})"
                rejected.append(f"{event.call.name} {event.call.arguments}{why}")

        try:
            result = await child.run(prompt, on_event=on_event)
        finally:
            await child.close()
        parent = self._parent
        if result.status is RunStatus.AWAITING_APPROVAL and parent.store is None:
            self._waiting[child.id] = child
        if (tally := parent._tally) is not None:
            tally.child_usage = tally.child_usage + result.usage
        return ChildOutcome.from_result(result, rejected=rejected[-1] if rejected else "")


def _is_plain_id(session_id: str) -> bool:
    """True for an id as ``run.new_id`` makes them: letters, digits, ``-`` and ``_`` only."""
    return (
        bool(session_id)
        and session_id != "latest"
        and all(c.isascii() and (c.isalnum() or c in "-_") for c in session_id)
    )
