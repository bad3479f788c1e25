"""Session: drives the agent loop and owns the conversation State.

One run, top to bottom: add the user message → (pause, cancel, compaction, directives) →
stream the model call → assemble the assistant message → for each tool call: policy →
approval → execute → append the result → loop until a turn has no tool calls.

Every state change is an event, applied to State, persisted and announced by the Journal.
Replaying the persisted events rebuilds the session exactly.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Mapping, Sequence

from rho_domain import events as ev
from rho_domain.agent import Agent
from rho_domain.compaction import CompactResult, CompactTrigger
from rho_domain.errors import CompactionRejected, SessionStateError
from rho_domain.fork import fork_labels, history_until
from rho_domain.loop.compaction_run import auto_compact, compact_history
from rho_domain.loop.context_fit import check_window
from rho_domain.loop.control import RunControl
from rho_domain.loop.journal import EndsWithSession, Journal, Listener
from rho_domain.loop.model_turn import call_model
from rho_domain.loop.run_boundaries import begin_run, end_run
from rho_domain.loop.sub_agents import SubAgents
from rho_domain.loop.tally import RunTally, budget_exceeded
from rho_domain.loop.tool_batch import ToolBatch
from rho_domain.messages import UserMessage
from rho_domain.ports.approver import Approver
from rho_domain.ports.clock import Clock
from rho_domain.ports.database import Database
from rho_domain.ports.durable import DurableSteps
from rho_domain.ports.executor import Executor
from rho_domain.ports.model import ChatModel
from rho_domain.ports.signals import SignalSource
from rho_domain.ports.store import SessionRecord, SessionStore
from rho_domain.run import RunResult, RunStatus, new_id
from rho_domain.state import State


class Session:
    """The execution context of an agent: runs prompts, keeps State, obeys signals.

    All ports are passed in (``rho_entry.Session`` wires defaults). ``state`` with
    ``created=True`` resumes a stored session. One run at a time.
    """

    def __init__(
        self,
        agent: Agent,
        *,
        model: ChatModel,
        executor: Executor,
        clock: Clock,
        store: SessionStore | None = None,
        signals: SignalSource | None = None,
        approver: Approver | None = None,
        databases: Mapping[str, Database] | None = None,
        session_id: str | None = None,
        state: State | None = None,
        created: bool = False,
        on_event: Listener | None = None,
        parent_id: str | None = None,
        labels: Mapping[str, str] | None = None,
        delegation: bool = True,
        steps: DurableSteps | None = None,
        replay: Sequence[ev.Event] = (),
    ) -> None:
        self.agent = agent
        self.model = model
        self.executor = executor
        self.clock = clock
        self.store = store
        self.signals = signals
        self.approver = approver
        self.databases = dict(databases or {})
        self.id = session_id or new_id()
        self.state = state if state is not None else State()
        self.parent_id = parent_id
        self.labels = dict(labels or {})
        self.steps = steps
        self.journal = Journal(self.id, self.state, clock, store, created=created, replay=replay)
        if on_event is not None:
            self.journal.listeners.append(on_event)
        self.control = RunControl(self.id, signals, self.journal)
        can_delegate = delegation and "delegate" in agent.registry
        self._sub_agents = SubAgents(self)
        self.tools = ToolBatch(
            self.id,
            agent,
            self.journal,
            self.control,
            executor,
            approver,
            self.databases,
            self._sub_agents.run if can_delegate else None,
            self._sub_agents.resume if can_delegate else None,
        )
        self.tools.steps = steps
        self._running = False
        self._tally: RunTally | None = None
        self.last_result: RunResult | None = None

    # ------------------------------------------------------------------ public API

    def cancel(self) -> None:
        """Stop the current run at its next checkpoint; a running tool is killed."""
        self.control.cancel()

    def resolve_approval(
        self, call_id: str, approved: bool, *, always: bool = False, reason: str = ""
    ) -> None:
        """Answer a pending approval; the next ``run()`` (without a prompt) continues.
        ``reason`` (for a rejection) reaches the model in the call's result."""
        pending = {c.id: c for c in self.state.pending_calls}
        if call_id not in pending:
            known = ", ".join(pending) or "none"
            raise SessionStateError(f"no pending tool call {call_id!r} (pending: {known})")
        self.journal.record(
            ev.ApprovalResolved(
                at=self.clock.now(),
                call_id=call_id,
                tool_name=pending[call_id].name,
                approved=approved,
                always=always,
                reason=reason,
            )
        )

    async def run(
        self,
        prompt: str | None = None,
        *,
        max_turns: int | None = None,
        on_event: Listener | None = None,
        run_id: str | None = None,
    ) -> RunResult:
        """Run until the model answers without tool calls, or a limit, signal or error.

        ``max_turns`` None takes the config's; 0 means no limit. ``run_id`` names the run (a
        durable run's is its queue's; otherwise a new id). Model, tool and store failures,
        and a context window too small for the system prompt and tools (``ConfigError``), end
        the run with status ``error`` (never raised).
        Raises ``SessionStateError`` if a run is already in progress.
        """
        if self._running:
            raise SessionStateError("this session is already running; wait or cancel it")
        self._running = True
        if on_event is not None:
            self.journal.listeners.append(on_event)
        tally = self._tally = RunTally(id=run_id or new_id(), started=self.clock.monotonic())
        status, error = RunStatus.ERROR, None
        try:
            await begin_run(self.control, self.journal, self._record, tally, prompt)
            limit = self.agent.config.max_turns if max_turns is None else max_turns
            status = await self._drive(prompt, tally, limit or None)
        except asyncio.CancelledError:
            status = RunStatus.CANCELLED
            raise
        except Exception as exc:  # noqa: BLE001 - every failure must still end the run cleanly
            error = exc
        finally:
            result = self.last_result = await end_run(
                self.control, self.journal, tally, status, error
            )
            if on_event is not None:
                self.journal.listeners.remove(on_event)
            self._running = False
        return result

    async def stream(
        self, prompt: str | None = None, *, max_turns: int | None = None
    ) -> AsyncIterator[ev.Event]:
        """Run and yield every event as it happens; ``last_result`` then holds the result.
        Leaving the loop early cancels the run."""
        queue: asyncio.Queue[ev.Event | None] = asyncio.Queue()
        task = asyncio.create_task(self.run(prompt, max_turns=max_turns, on_event=queue.put_nowait))
        task.add_done_callback(lambda _: queue.put_nowait(None))
        try:
            while (item := await queue.get()) is not None:
                yield item
            await task
        finally:
            if not task.done():
                self.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task

    async def compact(
        self, custom_instructions: str = "", *, trigger: CompactTrigger = "manual"
    ) -> CompactResult:
        """Summarise old history through the model and replace it.

        When nothing was compacted (too little history, or a summary that would not make the
        context smaller) the result says so: empty ``summary``, the reason in ``note``.
        Raises ``ModelError`` when the summary fails; history is then left untouched."""
        if self.state.pending_calls:
            raise SessionStateError("cannot compact while tool calls wait for approval")
        try:
            return await compact_history(
                self.agent, self.model, self.journal, custom_instructions, trigger
            )
        except CompactionRejected as rejected:
            return CompactResult(
                summary="",
                tokens_before=rejected.tokens_before,
                tokens_after=rejected.tokens_before,
                trigger=trigger,
                note=str(rejected),
            )

    async def fork(self, *, at: int, agent: Agent | None = None) -> Session:
        """A new session whose history is this one's turns 1..``at`` (``fork.turns`` numbers
        them), sharing this session's ports, with ``agent`` (another model, say) or this one's.

        The new session records this one as its parent (``parent_id``, and the labels
        ``forked_from`` and ``fork_at``) and, with a store, is saved at once. This session is
        not changed. Raises SessionStateError for a turn that is not in the history or falls
        inside a tool batch (refused, naming the batch's boundaries; see ``rho_domain.fork``).
        """
        history = history_until(self.state.messages, at)
        child = self._related(
            agent if agent is not None else self.agent,
            signals=self.signals,
            labels=fork_labels(self.id, at, self.labels),
        )
        for message in history:
            child.journal.record(ev.MessageAdded(at=self.clock.now(), message=message))
        await child.save()
        return child

    async def save(self) -> None:
        """Create the stored session now (otherwise its first run does) and write its events.
        Without a store, does nothing."""
        await self.journal.create(self._record())
        await self.journal.flush()

    async def close(self) -> None:
        """Persist anything pending and release the store's lock; tell listeners that end with
        the session (``EndsWithSession``). Idempotent."""
        if self.store is not None and self.journal.created:
            await self.journal.flush()
            await self.store.release(self.id)
        for listener in tuple(self.journal.listeners):
            if isinstance(listener, EndsWithSession):
                listener.session_closed()

    async def __aenter__(self) -> Session:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    # ------------------------------------------------------------------ the loop

    async def _drive(self, prompt: str | None, tally: RunTally, max_turns: int | None) -> RunStatus:
        await check_window(self.agent, self.model)
        if self.state.pending_calls:
            outcome = await self.tools.resume(superseded=prompt is not None)
            if outcome is not None:
                return outcome
        if prompt is not None:
            await self.journal.message(UserMessage(prompt))
        elif not self.state.messages:
            raise SessionStateError("nothing to run: pass a prompt")
        turns = 0
        while True:
            if max_turns is not None and turns >= max_turns:
                return RunStatus.MAX_TURNS
            elapsed = self.clock.monotonic() - tally.started
            spent = tally.usage + tally.child_usage
            if reason := budget_exceeded(self.agent.config.budget, spent, elapsed):
                await self.journal.emit(
                    ev.ErrorOccurred(
                        at=self.clock.now(), error_type="BudgetExceeded", message=reason
                    )
                )
                return RunStatus.BUDGET_EXCEEDED
            if await self.control.checkpoint("before model call"):
                return RunStatus.CANCELLED
            await auto_compact(self.agent, self.model, self.journal)
            await self.control.apply_directives(after=self.state.directive_offset)
            turns += 1
            message = await call_model(
                self.agent, self.model, self.journal, self.control, tally, self.steps
            )
            if message is None:
                return RunStatus.CANCELLED
            if not message.tool_calls:
                tally.text = message.text or message.refusal
                return RunStatus.COMPLETED
            if (outcome := await self.tools.run(message.tool_calls)) is not None:
                return outcome

    def _record(self) -> SessionRecord:
        """The stored session's record, as it is created (on the first run)."""
        return SessionRecord(
            id=self.id,
            created_at=self.clock.now(),
            config=self.agent.config,
            parent_id=self.parent_id,
            labels=self.labels,
        )

    def _related(
        self,
        agent: Agent,
        *,
        signals: SignalSource | None = None,
        session_id: str | None = None,
        state: State | None = None,
        labels: Mapping[str, str] | None = None,
        delegation: bool = True,
    ) -> Session:
        """A session on this one's ports with this one as its parent (a child or a fork);
        ``state`` given means it is already stored."""
        return Session(
            agent,
            model=self.model,
            executor=self.executor,
            clock=self.clock,
            store=self.store,
            signals=signals,
            approver=self.approver,
            databases=self.databases,
            session_id=session_id,
            state=state,
            created=state is not None,
            parent_id=self.id,
            labels=labels,
            delegation=delegation,
        )
