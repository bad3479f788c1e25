"""ToolBatch: one batch of tool calls — policy, approval, execution, result — in order.

Every call of a batch ends with a result in history, whatever happens: run, denied by
policy, rejected by the user, skipped after a rejection, or cancelled. The only exception is a
call waiting for approval with no approver wired: it stays pending in State (fail closed).

What a plain run's calls do not need loads with the first call that does: asking about a call
(``tool_approval.py``), a sub-agent that waits (``child_calls.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal, cast

from rho_domain import events as ev
from rho_domain.approval import Allowed
from rho_domain.loop.call_judgment import judge
from rho_domain.loop.guarded_ports import GuardedExecutor
from rho_domain.loop.session_ports import RunContext
from rho_domain.loop.tool_refresh import bind_to_shown, shown_shape
from rho_domain.messages import ToolCall
from rho_domain.not_run import (
    CANCELLED_BEFORE,
    SKIPPED,
    SUPERSEDED,
    denied,
    rejected,
)
from rho_domain.run import RunStatus
from rho_domain.tools.base import ToolContext, ToolOutput, WriteTally
from rho_domain.tools.prepared import PreparedCall

if TYPE_CHECKING:
    from rho_domain.ports.approver import Approver
    from rho_domain.ports.clock import Clock
    from rho_domain.ports.durable import DurableSteps
    from rho_domain.tools.children import ChildAnswer, ChildResumer, Delegator


class ToolBatch:
    """Runs tool calls for one session, on what its ``RunContext`` gives it."""

    def __init__(
        self,
        context: RunContext,
        delegate: Delegator | None = None,
        resume_child: ChildResumer | None = None,
    ) -> None:
        self.session_id = context.session_id
        self.agent = context.agent
        self.journal = context.journal
        self.control = context.control
        self.executor = context.ports.executor
        # the one port that changes: ``Session.set_approver`` replaces it between calls
        self.approver: Approver | None = context.ports.approver
        self.databases = context.ports.databases
        self.delegate = delegate
        self.resume_child = resume_child
        self.clock: Clock = context.journal.clock
        self.state = context.journal.state
        # read-only calls run at once at most (None: ``parallel_reads.MAX_PARALLEL_READS``)
        self.parallel_limit: int | None = None
        self.steps: DurableSteps | None = context.ports.steps  # durable: each call one step
        # the run's write/edit bytes (new each run; a sub-agent's: its parent's, ``counted_in``)
        self.written, self.counted_in = WriteTally(), cast("WriteTally | None", None)
        self.unplaced: str | None = None  # this run's last call failed for want of a place

    async def run(self, calls: Sequence[ToolCall], *, resumed: bool = False) -> RunStatus | None:
        """Run a batch in order; a status ends the run, None continues the loop.

        The before-tool hooks see the batch first: a call they refuse is answered at once, and
        a call they rewrite is judged, approved and run as rewritten. ``resumed`` calls (left
        pending by an earlier run, perhaps in a process without these hooks) meet the hooks
        too, but one they would change again is refused: what runs is what was asked about.
        A batch of read-only calls that need no approval runs concurrently
        (``parallel_reads``); its results are still recorded in the model's order. Each call
        is parsed and validated once (``registry.prepare_all``: off the event loop when the
        batch is long); the policy, the approval, the registry and the handler read that
        ``PreparedCall``.
        """
        if self.agent.hooks.before_tool or resumed:  # hooks_applied loads with the first
            from rho_domain.loop.hooks_applied import let_through

            calls = await let_through(self.agent.hooks, self.journal, calls, resumed=resumed)
        prepared = await self.agent.registry.prepare_all(calls)
        if len(prepared) > 1:  # one call runs as below: parallel_reads loads with a batch
            from rho_domain.loop.parallel_reads import (
                MAX_PARALLEL_READS,
                run_parallel,
                runs_in_parallel,
            )

            if runs_in_parallel(self.agent, self.state, prepared):
                if await self.control.checkpoint("before tool"):
                    await self.journal.answer_all(calls, CANCELLED_BEFORE)
                    return RunStatus.CANCELLED
                limit = self.parallel_limit
                finished = await run_parallel(
                    prepared,
                    agent=self.agent,
                    journal=self.journal,
                    control=self.control,
                    context_for=self._context,
                    limit=MAX_PARALLEL_READS if limit is None else limit,
                    steps=self.steps,
                )
                return None if finished else RunStatus.CANCELLED
        for index, ready in enumerate(prepared):
            call = ready.call
            if await self.control.checkpoint("before tool"):
                await self.journal.answer_all(calls[index:], CANCELLED_BEFORE)
                return RunStatus.CANCELLED
            if call.id in self.state.waiting_children:
                if (outcome := await self._continue_child(ready, calls[index:])) is not None:
                    return outcome
                continue
            shown = shown_shape(self.agent, ready.handler)
            await bind_to_shown(self.journal, call, shown)
            decision, reviews = judge(self.agent, self.state, ready)
            # A plain run's calls are allowed: the other outcomes load with the first one.
            if not isinstance(decision, Allowed):
                from rho_domain.approval_asks import Denied

                if isinstance(decision, Denied):
                    await self.journal.emit(
                        ev.ToolBlocked(
                            at=self.clock.now(), call=call, by="policy", reason=decision.reason
                        )
                    )
                    await self.journal.result(call, denied(decision.reason), True)
                    continue
                from rho_domain.loop.tool_approval import ask_approval

                approved = await ask_approval(
                    self,
                    call,
                    decision.reason,
                    calls[index:],
                    arguments=ready.decoded,
                    shape=shown,
                    reviews=reviews,
                )
                if approved is None:
                    return (
                        RunStatus.CANCELLED if self.control.stopped else RunStatus.AWAITING_APPROVAL
                    )
                if not approved:
                    why = self.state.rejection_reasons.get(call.id, "")
                    await self.journal.emit(
                        ev.ToolBlocked(
                            at=self.clock.now(), call=call, by="user", reason=why or "rejected"
                        )
                    )
                    await self.journal.result(call, rejected(why), True)
                    await self.journal.answer_all(calls[index + 1 :], SKIPPED)
                    return RunStatus.COMPLETED
            if (ended := await self._execute(ready, calls[index:])) != "done":
                return await self._stopped(ended, calls[index + 1 :])
        return None

    async def _stopped(self, ended: str, rest: Sequence[ToolCall]) -> RunStatus:
        """The run's status after a call that did not end with a result."""
        if ended == "waiting":  # a sub-agent waits for approval: so does this batch
            return RunStatus.AWAITING_APPROVAL
        await self.journal.answer_all(rest, self.control.not_started_result)
        return RunStatus.CANCELLED

    async def _continue_child(
        self, ready: PreparedCall, batch: Sequence[ToolCall]
    ) -> RunStatus | None:
        """A delegate call whose sub-agent waited: get the answer (recorded, or from the
        approver), pass it to the sub-agent and let it run on; a status ends the run."""
        from rho_domain.loop.child_calls import child_answer  # with the first child continued

        answer = await child_answer(self, ready.call, batch)
        if answer is None:
            return RunStatus.CANCELLED if self.control.stopped else RunStatus.AWAITING_APPROVAL
        if (ended := await self._execute(ready, batch, answer=answer)) != "done":
            return await self._stopped(ended, batch[1:])
        return None

    async def resume(self, *, superseded: bool) -> RunStatus | None:
        """Continue the calls an earlier run left pending; a status ends the run.

        ``superseded`` (the user sent a new prompt instead of deciding): only the approved
        calls run, the others are answered ``SUPERSEDED``, and only a cancellation ends the run.
        """
        calls = self.state.pending_calls
        if not superseded:
            return await self.run(calls, resumed=True)
        approved = [c for c in calls if self.state.approvals.get(c.id) is True]
        outcome = await self.run(approved, resumed=True)
        await self.journal.answer_all([c for c in calls if c not in approved], SUPERSEDED)
        return outcome if outcome is RunStatus.CANCELLED else None

    async def _execute(
        self,
        ready: PreparedCall,
        batch: Sequence[ToolCall],
        *,
        answer: ChildAnswer | None = None,
    ) -> Literal["done", "cancelled", "waiting"]:
        """Run one call (or, with ``answer``, continue its waiting sub-agent): ``cancelled``
        when cancelled (its task is cancelled, so the executor kills its process group),
        ``waiting`` when its sub-agent now waits for approval (recorded as this call's)."""
        call = ready.call
        await self.journal.emit(ev.ToolStarted(at=self.clock.now(), call=call))
        began_before = self.journal.replayed_last  # a dead worker's trace holds it already
        started = self.clock.monotonic()
        finished, output = await self.control.within(
            self._continue(answer) if answer is not None else self._dispatch(ready, began_before)
        )
        if output is not None:
            if pending := output.metadata.get("child_pending"):
                from rho_domain.loop.child_calls import record_child_waiting

                child = str(output.metadata["child_session_id"])
                place = self.executor.working_dir
                await record_child_waiting(
                    self.journal, self.clock, call, batch, child, pending, place=place
                )
                return "waiting"
            if self.agent.hooks.after_tool:
                from rho_domain.loop.hooks_applied import after_tool

                output = await after_tool(self.agent.hooks, self.journal, call, output)
            content, is_error, metadata = output.content, output.is_error, dict(output.metadata)
            if isinstance(unplaced := metadata.get("unplaced"), str):
                self.unplaced = unplaced
        else:
            content, is_error = self.control.interrupted_result, True
            metadata = {"cancelled": True}
        await self.journal.emit(
            ev.ToolEnded(
                at=self.clock.now(),
                call_id=call.id,
                tool_name=call.name,
                content=content,
                is_error=is_error,
                duration=self.clock.monotonic() - started,
                metadata=metadata,
            )
        )
        await self.journal.result(call, content, is_error)
        if not finished:
            await self.journal.emit(
                ev.Interrupted(
                    at=self.clock.now(),
                    reason="cancelled",
                    detail=f"during tool {call.name}"
                    + ("" if self.control.cancelled else ": out of time"),
                )
            )
            return "cancelled"
        return "done"

    async def _continue(self, answer: ChildAnswer) -> ToolOutput:
        """The delegate result once a waiting sub-agent has the answer and ran on."""
        from rho_domain.loop.child_calls import continued_child  # with the first child continued

        return await continued_child(self.resume_child, answer)

    async def _dispatch(self, ready: PreparedCall, began_before: bool) -> ToolOutput:
        """Run ``ready``'s handler; in a durable run, as one step (``durable_steps``), and
        not again when an earlier execution ``began_before`` and the call writes."""
        registry, call = self.agent.registry, ready.call
        timeout = self.agent.config.tool_timeout
        if self.steps is None:
            return await registry.dispatch(ready, self._context(call), timeout=timeout)
        from rho_domain.loop.durable_steps import tool_step  # durable runs only

        return await tool_step(
            self.steps,
            lambda: registry.dispatch(ready, self._context(call), timeout=timeout),
            policy=ready.policy,
            began_before=began_before,
        )

    def _context(self, call: ToolCall) -> ToolContext:
        """What the handler of ``call`` may use."""
        return ToolContext(
            session_id=self.session_id,
            call_id=call.id,
            # its unasked CancelledError is its failure, named (``guarded_ports``); made per
            # call, not held: a waiting runtime handle holds no more objects
            executor=GuardedExecutor(self.executor),
            profile=self.agent.profile,
            clock=self.clock,
            databases=self.databases,
            delegate=self.delegate,
            written=self.written,
        )
