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
import uuid
from collections.abc import AsyncIterator, Mapping

import attrs

from rho_domain import events as ev
from rho_domain.agent import Agent
from rho_domain.compaction import CompactResult, should_compact
from rho_domain.compaction_run import compact_after_overflow, compact_history
from rho_domain.context_fit import context_full, measure
from rho_domain.control import RunControl
from rho_domain.errors import (
    ContextLengthExceeded,
    ModelError,
    ModelProtocolError,
    SessionStateError,
)
from rho_domain.journal import Journal, Listener
from rho_domain.messages import AssistantMessage, Message, Usage, UserMessage
from rho_domain.ports.approver import Approver
from rho_domain.ports.clock import Clock
from rho_domain.ports.database import Database
from rho_domain.ports.executor import Executor
from rho_domain.ports.model import ChatModel
from rho_domain.ports.signals import SignalSource
from rho_domain.ports.store import SessionRecord, SessionStore
from rho_domain.run import PendingApproval, RunResult, RunStatus, budget_exceeded
from rho_domain.state import State
from rho_domain.streaming import Assembly, consume_stream
from rho_domain.tool_batch import CANCELLED_RESULT, ToolBatch
from rho_domain.tools.delegate import ChildOutcome

SUPERSEDED = "[not run: the user sent a new message instead of approving this call.]"
DIED = "[interrupted: the previous process stopped while this ran; effects are unknown.]"


def new_id() -> str:
    return uuid.uuid4().hex[:12]


@attrs.define
class _Run:
    id: str
    started: float
    usage: Usage = Usage()
    text: str = ""
    calls: int = 0


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
    ) -> None:
        self.agent, self.model, self.executor, self.clock = agent, model, executor, clock
        self.store, self.signals, self.approver = store, signals, approver
        self.databases = dict(databases or {})
        self.id = session_id or new_id()
        self.state = state if state is not None else State()
        self.parent_id, self.labels = parent_id, dict(labels or {})
        self.journal = Journal(self.id, self.state, clock, store, created=created)
        if on_event is not None:
            self.journal.listeners.append(on_event)
        self.control = RunControl(self.id, signals, self.journal)
        can_delegate = delegation and "delegate" in agent.registry
        self.tools = ToolBatch(
            self.id,
            agent,
            self.journal,
            self.control,
            executor,
            approver,
            self.databases,
            self._run_child if can_delegate else None,
        )
        self._running = False
        self.last_result: RunResult | None = None

    # ------------------------------------------------------------------ public API

    def cancel(self) -> None:
        """Stop the current run at its next checkpoint; a running tool is killed."""
        self.control.cancel()

    def resolve_approval(self, call_id: str, approved: bool, *, always: bool = False) -> None:
        """Answer a pending approval; the next ``run()`` (without a prompt) continues."""
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
            )
        )

    async def run(
        self,
        prompt: str | None = None,
        *,
        max_turns: int | None = None,
        on_event: Listener | None = None,
    ) -> RunResult:
        """Run until the model answers without tool calls, or a limit, signal or error.

        Model, tool and store failures end the run with status ``error`` (never raised).
        Raises ``SessionStateError`` if a run is already in progress.
        """
        if self._running:
            raise SessionStateError("this session is already running; wait or cancel it")
        self._running = True
        if on_event is not None:
            self.journal.listeners.append(on_event)
        run = _Run(id=new_id(), started=self.clock.monotonic())
        status, error = RunStatus.ERROR, None
        try:
            await self._start(prompt, run)
            status = await self._drive(prompt, run, max_turns or self.agent.config.max_turns)
        except asyncio.CancelledError:
            status = RunStatus.CANCELLED
            raise
        except Exception as exc:  # noqa: BLE001 - every failure must still end the run cleanly
            error = exc
        finally:
            result = await self._finish(run, status, error)
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
        self, custom_instructions: str = "", *, trigger: str = "manual"
    ) -> CompactResult:
        """Summarise old history through the model and replace it.
        Raises ``ModelError`` when the summary fails; history is then left untouched."""
        if self.state.pending_calls:
            raise SessionStateError("cannot compact while tool calls wait for approval")
        return await compact_history(
            self.agent, self.model, self.journal, custom_instructions, trigger
        )

    async def close(self) -> None:
        """Persist anything pending and release the store's lock. Idempotent."""
        if self.store is not None and self.journal.created:
            await self.journal.flush()
            await self.store.release(self.id)

    async def __aenter__(self) -> Session:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    # ------------------------------------------------------------------ the loop

    async def _drive(self, prompt: str | None, run: _Run, max_turns: int | None) -> RunStatus:
        if self.state.pending_calls:
            outcome = await self._resume_pending(superseded=prompt is not None)
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
            elapsed = self.clock.monotonic() - run.started
            if reason := budget_exceeded(self.agent.config.budget, run.usage, elapsed):
                await self.journal.emit(
                    ev.ErrorOccurred(
                        at=self.clock.now(), error_type="BudgetExceeded", message=reason
                    )
                )
                return RunStatus.BUDGET_EXCEEDED
            if await self.control.checkpoint("before model call"):
                return RunStatus.CANCELLED
            await self._maybe_auto_compact()
            await self.control.apply_directives(after=self.state.directive_offset)
            turns += 1
            try:
                message = await self._call_model(run)
            except ContextLengthExceeded as overflow:
                message = await self._call_after_overflow(run, overflow)
            if message is None:
                return RunStatus.CANCELLED
            if not message.tool_calls:
                run.text = message.text or message.refusal
                return RunStatus.COMPLETED
            if (outcome := await self.tools.run(message.tool_calls)) is not None:
                return outcome

    async def _call_model(self, run: _Run) -> AssistantMessage | None:
        """One streamed model call; None when cancelled during streaming."""
        request = self.agent.request(self.state.messages)
        run.calls += 1
        context = self.state.estimated_context_tokens(self.agent.system_prompt)
        await self.journal.emit(
            ev.LLMStarted(
                at=self.clock.now(),
                model=request.model,
                call_index=run.calls,
                context_tokens=context,
            )
        )
        started, assembly = self.clock.monotonic(), Assembly()
        consumer = asyncio.ensure_future(
            consume_stream(self.model, request, assembly, self.journal.emit, self.clock)
        )
        try:
            finished = await self.control.race(consumer)
            if finished and not assembly.finished:
                raise ModelProtocolError("the model stream ended without finishing")
        except ModelError as exc:
            exc.partial_text = exc.partial_text or assembly.partial_text
            await self._keep_partial(assembly, "the response broke off")
            raise
        usage = assembly.usage_or_estimate(request)
        run.usage = run.usage + usage
        await self.journal.emit(
            ev.UsageRecorded(at=self.clock.now(), usage=usage, prompt_tokens=usage.input_tokens)
        )
        await self.journal.emit(
            ev.LLMEnded(
                at=self.clock.now(),
                model=request.model,
                call_index=run.calls,
                usage=usage,
                finish_reason=assembly.finish_reason,
                duration=self.clock.monotonic() - started,
            )
        )
        if not finished:
            await self._keep_partial(assembly, "cancelled by the user")
            await self.journal.emit(
                ev.Interrupted(
                    at=self.clock.now(), reason="cancelled", detail="during model response"
                )
            )
            return None
        message = assembly.message()
        if message.text or message.tool_calls or message.refusal or message.reasoning:
            await self.journal.message(message)
        return message

    # ------------------------------------------------------------------ run boundaries

    async def _start(self, prompt: str | None, run: _Run) -> None:
        await self.control.start()
        await self.journal.create(
            SessionRecord(
                id=self.id,
                created_at=self.clock.now(),
                config=self.agent.config,
                parent_id=self.parent_id,
                labels=self.labels,
            )
        )
        await self.journal.flush()
        await self.journal.emit(ev.RunStarted(at=self.clock.now(), run_id=run.id, prompt=prompt))
        await self.journal.answer_all(self.state.unanswered_calls(), DIED)

    async def _finish(self, run: _Run, status: RunStatus, error: BaseException | None) -> RunResult:
        message = f"{type(error).__name__}: {error}" if error is not None else None
        with contextlib.suppress(Exception):
            await self.journal.answer_all(self.state.unanswered_calls(), CANCELLED_RESULT)
            if error is not None:
                await self.journal.emit(
                    ev.ErrorOccurred(
                        at=self.clock.now(), error_type=type(error).__name__, message=str(error)
                    )
                )
        try:
            await self.journal.emit(
                ev.RunEnded(
                    at=self.clock.now(),
                    run_id=run.id,
                    status=status.value,
                    text=run.text,
                    usage=run.usage,
                    session_usage=self.state.usage,
                    error=message,
                )
            )
        except Exception as exc:  # noqa: BLE001 - the result must still reach the caller
            message = message or f"{type(exc).__name__}: {exc}"
        await self.control.stop(consume_cancel=status is RunStatus.CANCELLED)
        pending = tuple(
            PendingApproval(call=c, reason="waiting for approval")
            for c in self.state.pending_calls
            if self.state.approvals.get(c.id, False) is None
        )
        self.last_result = RunResult(
            session_id=self.id,
            run_id=run.id,
            status=status,
            text=run.text,
            usage=run.usage,
            session_usage=self.state.usage,
            error=message,
            error_type=type(error).__name__ if error is not None else None,
            pending=pending if status is RunStatus.AWAITING_APPROVAL else (),
        )
        return self.last_result

    async def _resume_pending(self, *, superseded: bool) -> RunStatus | None:
        calls = self.state.pending_calls
        if not superseded:
            return await self.tools.run(calls)
        approved = [c for c in calls if self.state.approvals.get(c.id) is True]
        outcome = await self.tools.run(approved)
        await self.journal.answer_all([c for c in calls if c not in approved], SUPERSEDED)
        return outcome if outcome is RunStatus.CANCELLED else None

    async def _call_after_overflow(
        self, run: _Run, overflow: ContextLengthExceeded
    ) -> AssistantMessage | None:
        """Compact once and call again; a second overflow ends the run (never a loop)."""
        await compact_after_overflow(self.agent, self.model, self.journal, overflow)
        try:
            return await self._call_model(run)
        except ContextLengthExceeded as again:
            size = await measure(self.agent, self.model, self.state)
            window, tokens = again.window or size.window, again.prompt_tokens or size.tokens
            raise context_full(window, tokens, "it still does not fit after compaction") from again

    async def _maybe_auto_compact(self) -> None:
        config = self.agent.config
        if not config.auto_compact or self.state.pending_calls:
            return
        size = await measure(self.agent, self.model, self.state)
        if not should_compact(size.tokens, size.window, config.compact_threshold):
            return
        try:
            await self.compact(trigger="auto")
        except ModelError as exc:  # history is intact; the next call may still fit
            await self.journal.emit(
                ev.ErrorOccurred(
                    at=self.clock.now(),
                    error_type=type(exc).__name__,
                    message=f"auto-compaction failed: {exc}",
                )
            )

    async def _run_child(self, instruction: str, *, full_context: bool) -> ChildOutcome:
        """Run a child agent (the ``delegate`` tool) sharing this session's ports."""
        agent = Agent(
            config=self.agent.config,
            profile=self.agent.profile,
            registry=self.agent.registry.without("delegate"),
            system_prompt=self.agent.system_prompt,
        )
        child = Session(
            agent,
            model=self.model,
            executor=self.executor,
            clock=self.clock,
            store=self.store,
            approver=self.approver,
            databases=self.databases,
            parent_id=self.id,
            delegation=False,
        )
        if full_context:
            for message in self._settled_history():
                child.journal.record(ev.MessageAdded(at=self.clock.now(), message=message))
        try:
            result = await child.run(instruction)
        finally:
            await child.close()
        return ChildOutcome(
            session_id=child.id,
            status=result.status.value,
            text=result.text,
            usage=result.usage,
            error=result.error,
        )

    def _settled_history(self) -> list[Message]:
        """History without the turn in progress (whose tool calls have no results yet)."""
        messages = list(self.state.messages)
        for index in range(len(messages) - 1, -1, -1):
            message = messages[index]
            if isinstance(message, AssistantMessage) and message.tool_calls:
                return messages[:index]
        return messages

    async def _keep_partial(self, assembly: Assembly, why: str) -> None:
        if assembly.partial_text:
            text = f"{assembly.partial_text}\n[response interrupted: {why}]"
            await self.journal.message(AssistantMessage(text=text))
