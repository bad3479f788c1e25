"""Sub-agents: the child sessions a session's ``delegate`` tool runs.

A child shares its parent's ports, has no ``delegate`` tool of its own and the budget left in
the parent's run; its usage counts against that run, and listeners that follow children
(``FollowsChildren``, e.g. tracing) follow it. A child that stops to wait for an approval is
continued with the answer (``resume``): reopened from the store, so any process can continue
it, or, without a store, kept in this process until then.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from typing import TYPE_CHECKING, Protocol

import attrs

from rho_domain import events as ev
from rho_domain.agent import Agent
from rho_domain.config import Budget
from rho_domain.errors import SessionStateError, StoreError
from rho_domain.loop.journal import Journal, Listener
from rho_domain.loop.listeners import child_listener
from rho_domain.loop.tally import RunTally, child_budget
from rho_domain.messages import ToolCall, Usage
from rho_domain.plugged import contained, plugged_name
from rho_domain.ports.clock import Clock
from rho_domain.ports.store import SessionStore
from rho_domain.run import RunResult, RunStatus, is_plain_id
from rho_domain.state import State

if TYPE_CHECKING:
    from rho_domain.loop.tool_batch import ToolBatch
    from rho_domain.tools.children import ChildAnswer, ChildOutcome


class ChildSession(Protocol):
    """What this module uses of a child session (``rho_domain.loop.session.Session``)."""

    id: str
    state: State
    journal: Journal
    tools: ToolBatch

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
        self,
        call_id: str,
        approved: bool,
        *,
        always: bool = False,
        reason: str = "",
        digest: str | None = None,
    ) -> None:
        """Answer the child's pending approval (see ``Session.resolve_approval``)."""
        ...


class ParentSession(Protocol):
    """What this module uses of the parent session (its public API): its ports and state, the
    run in progress (``current_run``, None between runs) and how it builds a session on its
    own ports (``related``)."""

    id: str

    @property
    def agent(self) -> Agent:
        """The parent's agent, with the tools its tool source served last."""
        ...

    clock: Clock
    state: State
    store: SessionStore | None
    journal: Journal
    tools: ToolBatch

    @property
    def current_run(self) -> RunTally | None:
        """The tally of the parent's run in progress."""
        ...

    def related(
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
    """The children of one parent session (its ``ChildRunner`` and ``ChildResumer``): it reads
    the parent's current run (``current_run``) and builds children on the parent's ports
    (``related``)."""

    def __init__(self, parent: ParentSession) -> None:
        # The parent owns this object: a weak reference back, so a finished session is freed
        # by its reference count instead of waiting, with everything it holds, for the
        # garbage collector's full pass (a stall of the loop with many sessions).
        self._parent_ref = weakref.ref(parent)
        # Children waiting for an approval, when there is no store to reopen them from.
        self._waiting: dict[str, ChildSession] = {}

    @property
    def _parent(self) -> ParentSession:
        parent = self._parent_ref()
        if parent is None:  # only reachable through its parent: never while one runs
            raise SessionStateError("the parent session of these sub-agents is gone")
        return parent

    async def run(self, instruction: str, *, full_context: bool) -> ChildOutcome:
        """Run a new child on ``instruction``; with ``full_context`` it first gets the
        parent's settled history."""
        parent = self._parent
        budget, spent = self._budget()
        if spent is not None:
            from rho_domain.tools.children import ChildOutcome  # as in _drive

            status = RunStatus.BUDGET_EXCEEDED.value
            return ChildOutcome(session_id="", status=status, text="", usage=Usage(), error=spent)
        child = self._new(budget=budget)
        if full_context:
            for message in parent.state.settled_history():
                child.journal.record(ev.MessageAdded(at=parent.clock.now(), message=message))
        return await self._drive(child, instruction)

    async def resume(self, answer: ChildAnswer) -> ChildOutcome:
        """Give a waiting child the answer to its call and run it on. Raises
        SessionStateError when the child is not found or no longer waits for that call. One
        opened from the store takes no approval its trace records ("always" asks again)."""
        child = self._waiting.pop(answer.session_id, None)
        if child is None:
            store = self._parent.store
            if store is None:
                raise SessionStateError(f"sub-agent {answer.session_id} is not in this process")
            if not is_plain_id(answer.session_id):
                # the id comes from the trace, which is data: a store may read a path or a
                # ``latest`` there, and the child must be a session of this store, by its id
                raise SessionStateError(
                    f"sub-agent {answer.session_id!r} is not a session id; the trace that "
                    "names it was not written by rho-agent"
                )
            # through ``contained``: the store's unasked CancelledError is its failure, named,
            # not a cancel of the parent's run (``plugged.failure_of``)
            by = f"the store {plugged_name(store)}"
            record, events = await contained(store.open(answer.session_id), by, StoreError)
            if not is_sub_agent(record.parent_id, record.labels) or (
                record.parent_id != self._parent.id
            ):
                # the trace names any session of the store: continuing another's waiting call
                # would run it under this parent's agent, approved by this parent's human (a
                # fork of this parent names it as parent too, but is no sub-agent of it)
                await contained(store.release(record.id), by, StoreError)
                raise SessionStateError(
                    f"session {record.id} is not a sub-agent of session {self._parent.id}; "
                    "the trace that names it as one was changed"
                )
            budget, spent = self._budget()
            if spent is not None:
                await contained(store.release(record.id), by, StoreError)
                raise SessionStateError(f"sub-agent {record.id} was not continued: {spent}")
            state = State.from_events(events)
            state.forget_recorded_approvals()  # the trace is data, as a resumed parent's
            child = self._new(record.id, state, budget=budget)
        if answer.call_id not in {c.id for c in child.state.awaiting_decision()}:
            await child.close()
            from rho_domain.loop.child_calls import answered_elsewhere  # seldom: lazily

            if (settled := answered_elsewhere(child.id, child.state, answer.call_id)) is not None:
                return settled  # resumed on its own and answered there: its answer is ours
            raise SessionStateError(
                f"sub-agent {child.id} does not wait for call {answer.call_id} any more"
            )
        if answer.digest is not None:
            # the parent recorded the call (its tool and arguments), not the shape the child
            # was shown its tool in (an MCP tool's: it was refused as a changed call, and the
            # child never went on); the child compares that shape itself before the call
            # runs (``tool_refresh.bind_to_shown``: changed, it asks again)
            from rho_domain.call_digest import check

            held = {c.id: c for c in child.state.pending_calls}[answer.call_id]
            check(held.id, held.name, held.arguments, answer.digest)
        child.resolve_approval(
            answer.call_id, answer.approved, always=answer.always, reason=answer.reason
        )
        return await self._drive(child, None)

    def _budget(self) -> tuple[Budget, str | None]:
        """The budget a child started now gets: what the parent's run and session have left
        (``tally.child_budget``), and why none is left, when one limit is spent."""
        parent = self._parent
        budget = parent.agent.config.budget
        if (tally := parent.current_run) is None:
            return budget, None
        if tally.max_turns is not None and tally.calls + tally.child_calls >= tally.max_turns:
            return budget, f"no model call is left for a sub-agent (max_turns {tally.max_turns})"
        elapsed = parent.clock.monotonic() - tally.started
        return child_budget(budget, tally, parent.state, elapsed)

    def _new(
        self,
        session_id: str | None = None,
        state: State | None = None,
        *,
        budget: Budget | None = None,
    ) -> ChildSession:
        """A child session: no ``delegate`` tool, ``budget`` (what the parent has left,
        ``_budget``), the same ports, and no output schema (the schema shapes the parent's
        final answer, not the child's report to it)."""
        parent = self._parent
        agent = parent.agent.without_tools("delegate")
        if agent.config.output_schema is not None:
            agent = attrs.evolve(agent, config=attrs.evolve(agent.config, output_schema=None))
        if budget is not None:
            agent = attrs.evolve(agent, config=attrs.evolve(agent.config, budget=budget))
        if (tally := parent.current_run) is not None and tally.max_turns is not None:
            # what is left of the run's model calls (``_budget`` started no child without one)
            left = max(tally.max_turns - tally.calls - tally.child_calls, 1)
            agent = attrs.evolve(agent, config=attrs.evolve(agent.config, max_turns=left))
        child = parent.related(agent, session_id=session_id, state=state, delegation=False)
        if parent.current_run is not None:  # limits.run_written_mib: not N times it for N
            child.tools.counted_in = parent.tools.written
        for listener in parent.journal.listeners:  # e.g. tracing: the child's spans nest in ours
            followed = child_listener(listener, child.id)  # None: it follows no child
            if followed is not None:
                child.journal.listeners.append(followed)
        return child

    async def _drive(self, child: ChildSession, prompt: str | None) -> ChildOutcome:
        """Run ``child``; count its usage against the parent's run; note a call the user
        rejected."""
        rejected: list[str] = []

        def on_event(event: ev.Event) -> None:
            if isinstance(event, ev.ToolBlocked) and event.by == "user":
                why = "" if event.reason == "rejected" else f" ({event.reason})"
                rejected.append(f"{event.call.name} {event.call.arguments}{why}")

        calls, tools = child.state.model_calls, child.state.tool_calls
        # the parent's unreviewed writes are the child's to judge its lines on (a Makefile the
        # parent wrote, then the child's make): given at each drive, a resumed child's too,
        # and kept out of what the child reports it wrote (by identity: ids are the models')
        have = {c.id for c in child.state.unreviewed_writes}
        given = [c for c in self._parent.state.unreviewed_writes if c.name != "delegate"]
        child.state.unreviewed_writes[:0] = [c for c in given if c.id not in have]
        try:
            result = await child.run(prompt, on_event=on_event)
        finally:
            await child.close()
        parent = self._parent
        if result.status is RunStatus.AWAITING_APPROVAL and parent.store is None:
            self._waiting[child.id] = child
        calls, tools = child.state.model_calls - calls, child.state.tool_calls - tools
        if (tally := parent.current_run) is not None:
            tally.child_usage = tally.child_usage + result.usage
            tally.child_calls += calls
            tally.child_tools += tools
        # the delegation's values load with the first child run: a session that delegates
        # nothing (a one-shot's) never builds them
        from rho_domain.shell.destructive_session import session_writes
        from rho_domain.tools.children import ChildOutcome

        return ChildOutcome.from_result(
            result,
            rejected=rejected[-1] if rejected else "",
            model_calls=calls,
            tool_calls=tools,
            written=tuple(sorted(session_writes(_own(child.state.unreviewed_writes, given)))),
        )


def _own(calls: list[ToolCall], given: list[ToolCall]) -> list[ToolCall]:
    """``calls`` but those the parent gave (the same objects)."""
    parents = {id(c) for c in given}
    return [c for c in calls if id(c) not in parents]


def is_sub_agent(parent_id: str | None, labels: Mapping[str, str]) -> bool:
    """True for a session a ``delegate`` call made: it has a parent and is not a fork (a
    fork has the label ``forked_from``). Resumed on its own, such a session still has no
    ``delegate`` tool: delegation is one level deep, whoever continues it."""
    return parent_id is not None and "forked_from" not in labels
