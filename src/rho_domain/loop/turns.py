"""The run's turns: from its first model call to the status that ends it.

``Turns.drive`` is the loop ``Session.run`` runs between ``begin_run`` and ``end_run``, and
reads top to bottom: the tools taken, the window checked, calls left pending decided, the
prompt added; then, turn after turn, the checks before a model call (budgets, cancel or
pause, auto-compaction, directives, the tools again), the model call, and either the final
answer (checked against the output schema) or the tool batch, watched for repetition. It returns the
run's status; failures propagate to ``Session.run``, which ends the run with them.

What it reads of the session is ``TurnSession`` (its public members); the one thing it
changes, the agent a tool source refreshes, goes through the ``refresh_tools`` it is given.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rho_domain import events as ev
from rho_domain.errors import SessionStateError, ToolArgumentsError
from rho_domain.loop import output_check
from rho_domain.loop.compaction_run import auto_compact
from rho_domain.loop.context_fit import check_window
from rho_domain.loop.model_turn import call_model
from rho_domain.loop.tally import RunTally
from rho_domain.messages import Message, ToolCall, ToolResultMessage, UserMessage
from rho_domain.not_run import CUT_AT_LIMIT
from rho_domain.run import RunStatus
from rho_domain.tools.prepared import decode_arguments

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable
    from typing import Protocol

    from rho_domain.agent import Agent
    from rho_domain.config import Budget
    from rho_domain.loop.budgets import BudgetWatch
    from rho_domain.loop.control import RunControl
    from rho_domain.loop.journal import Journal
    from rho_domain.loop.tool_batch import ToolBatch
    from rho_domain.ports.clock import Clock
    from rho_domain.ports.durable import DurableSteps
    from rho_domain.ports.line_search import LineSearcher
    from rho_domain.ports.model import ChatModel
    from rho_domain.state import State

    class TurnSession(Protocol):
        """What the turns use of their session (``rho_domain.loop.session.Session``)."""

        model: ChatModel
        clock: Clock
        state: State
        journal: Journal
        control: RunControl
        tools: ToolBatch
        steps: DurableSteps | None
        line_searcher: LineSearcher | None

        @property
        def agent(self) -> Agent:
            """The agent, with the tools its tool source served when last asked."""
            ...

    # takes the tool source's current tools into the session; False when the run was
    # cancelled meanwhile (``Session``'s, through ``tool_refresh.take_tools``)
    RefreshTools = Callable[[], Awaitable[bool]]


def budget_watch(budget: Budget, state: State, started: float) -> BudgetWatch | None:
    """The run's budget watch; None for an agent whose budget limits nothing (the default):
    ``budgets`` loads with the first run that has one."""
    if not budget.limits_anything:
        return None
    from rho_domain.loop.budgets import BudgetWatch

    return BudgetWatch.start(budget, state, started)


class Turns:
    """One run's turns on ``session``: ``drive`` runs them; the run's ``tally`` and budget
    ``watch`` are the ones ``Session.run`` started, ``refresh_tools`` its tool refresh."""

    __slots__ = ("_refresh_tools", "_session", "_tally", "_watch")

    def __init__(
        self,
        session: TurnSession,
        refresh_tools: RefreshTools,
        tally: RunTally,
        watch: BudgetWatch | None,
    ) -> None:
        self._session = session
        self._refresh_tools = refresh_tools
        self._tally = tally
        self._watch = watch

    async def drive(self, prompt: str | None, max_turns: int | None) -> RunStatus:
        """Run ``prompt`` (None: continue the history) turn by turn until a status ends the
        run; a cancel at the budget's deadline ends it ``BUDGET_EXCEEDED``, not ``CANCELLED``."""
        session, tally, watch = self._session, self._tally, self._watch
        status = await self._turns(prompt, max_turns)
        if status is RunStatus.CANCELLED and session.control.out_of_time and watch is not None:
            # stopped at the deadline, not by the user: the run ends on its budget
            reason = watch.reached(
                own=tally.usage,
                children=tally.child_usage,
                state=session.state,
                now=max(session.clock.monotonic(), session.control.deadline or 0.0),
                child_calls=tally.child_calls,
                child_tools=tally.child_tools,
            )
            await self._over_budget(reason or "budget reached: the run's time ran out")
            return RunStatus.BUDGET_EXCEEDED
        return status

    async def _over_budget(self, reason: str) -> None:
        session = self._session
        await session.journal.emit(
            ev.ErrorOccurred(at=session.clock.now(), error_type="BudgetExceeded", message=reason)
        )

    async def _turns(self, prompt: str | None, max_turns: int | None) -> RunStatus:
        session, tally = self._session, self._tally
        if not await self._refresh_tools() or not await self._window_checked():
            return RunStatus.CANCELLED
        # the agent the tools were refreshed into: its schema is the one answers meet
        await output_check.check_before_run(
            session.agent.config.output_schema, session.line_searcher
        )
        if session.state.pending_calls:
            outcome = await session.tools.resume(superseded=prompt is not None)
            if outcome is not None:
                return outcome
        if prompt is not None:
            await session.journal.message(UserMessage(prompt))
        elif not session.state.messages:
            raise SessionStateError("nothing to run: pass a prompt")
        turns = 0
        while True:
            # the sub-agents' model calls count: a child gets what is left of max_turns
            if max_turns is not None and turns + tally.child_calls >= max_turns:
                return RunStatus.MAX_TURNS
            if (stop := await self._before_model_call()) is not None:
                return stop
            turns += 1
            message = await call_model(
                session.agent, session.model, session.journal, session.control, tally, session.steps
            )
            if message is None:
                return RunStatus.CANCELLED
            if not message.tool_calls:
                tally.text = message.text or message.refusal
                schema = session.agent.config.output_schema
                searcher = session.line_searcher
                if await output_check.accepted(schema, session.journal, tally, searcher):
                    return RunStatus.COMPLETED
                continue
            if (outcome := await self._tool_turn(message.tool_calls)) is not None:
                return outcome

    async def _tool_turn(self, calls: Sequence[ToolCall]) -> RunStatus | None:
        """Run an answer's tool ``calls``; a status ends the run, None goes on. An answer cut
        at the output limit inside its last call runs none of them (``CUT_AT_LIMIT``)."""
        session = self._session
        if self._tally.cut_at_limit and _cut(calls[-1]):
            await session.journal.answer_all(calls, CUT_AT_LIMIT)
            return None
        if await self._repeating(calls):
            return RunStatus.STUCK
        if (outcome := await session.tools.run(calls)) is not None:
            return outcome
        if await self._repeating():
            return RunStatus.STUCK
        return None

    async def _window_checked(self) -> bool:
        """``check_window``, raced with a cancel and the run's deadline: the first check
        waits for the server's window (a probe of up to ``--timeout``, or the meter's
        question already out), and a cancel was seen only once it was answered. False when
        stopped, with the ``interrupted`` event saying where (before the run's first step
        when the cancel came with its start)."""
        session = self._session
        control = session.control
        early = control.cancelled  # a service's cancel given as the run started (a handle's)
        finished, _ = await control.within(check_window(session.agent, session.model))
        if finished:
            return True
        detail = "waiting for the context window" + ("" if control.cancelled else ": out of time")
        if early:
            detail = "before the run's first step"
        await session.journal.emit(
            ev.Interrupted(at=session.clock.now(), reason="cancelled", detail=detail)
        )
        return False

    async def _repeating(self, calls: Sequence[ToolCall] = ()) -> bool:
        """``stuck.before_batch`` (given the batch's ``calls``) or ``stuck.after_batch``: True
        when the run ends stuck. ``stuck`` is imported once the history holds two tool results,
        the fewest a streak needs: a run of one call never loads it."""
        session = self._session
        limit = session.agent.config.repeat_limit
        if not limit or not _two_results(session.state.messages):
            return False
        from rho_domain.loop import stuck

        if calls:
            return await stuck.before_batch(session.journal, self._tally, calls, limit)
        return await stuck.after_batch(session.journal, self._tally, limit)

    async def _before_model_call(self) -> RunStatus | None:
        """The checks and upkeep before each model call: the budgets, a cancel or a pause,
        auto-compaction, the directives, the tool source's tools. A status ends the run."""
        session, watch = self._session, self._watch
        now = session.clock.monotonic()
        tally = self._tally
        if watch is not None and (
            reason := watch.reached(
                own=tally.usage,
                children=tally.child_usage,
                state=session.state,
                now=now,
                child_calls=tally.child_calls,
                child_tools=tally.child_tools,
            )
        ):
            await self._over_budget(reason)
            return RunStatus.BUDGET_EXCEEDED
        if await session.control.checkpoint("before model call"):
            return RunStatus.CANCELLED
        await auto_compact(session.agent, session.model, session.journal)
        await session.control.apply_directives(after=session.state.directive_offset)
        if not await self._refresh_tools():
            return RunStatus.CANCELLED
        return None


def _cut(call: ToolCall) -> bool:
    """Whether ``call``'s arguments are not whole JSON: in an answer that stopped at the
    output limit, its last call was cut there."""
    try:
        decode_arguments(call)
    except ToolArgumentsError:
        return True
    return False


def _two_results(messages: Sequence[Message]) -> bool:
    """Whether ``messages`` hold two tool results: ``stuck`` finds no streak in fewer (a
    repetition is a call, or a cycle of calls, answered alike twice at least)."""
    seen = 0
    for message in reversed(messages):
        if isinstance(message, ToolResultMessage):
            seen += 1
            if seen == 2:
                return True
    return False
