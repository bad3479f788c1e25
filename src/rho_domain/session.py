"""Session: drives the agent loop and owns the conversation State.

One run, top to bottom: add the user message → (pause, cancel, compaction, directives) →
stream the model call → assemble the assistant message → for each tool call: policy →
approval → execute → append the result → loop until a turn has no tool calls.

Every state change is an event: applied to State, persisted to the SessionStore, then given
to listeners. Replaying the persisted events rebuilds the session exactly.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar

import attrs

from rho_domain import events as ev
from rho_domain.agent import Agent
from rho_domain.approval import Denied, RequiresApproval, decide
from rho_domain.compaction import (
    CompactResult,
    compacted_history,
    compaction_instructions,
    plan_compaction,
    should_compact,
)
from rho_domain.errors import ModelError, ModelProtocolError, RhoError, SessionStateError
from rho_domain.messages import (
    AssistantMessage,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
    message_chars,
)
from rho_domain.model import ModelRequest, ToolChoice
from rho_domain.ports.approver import ApprovalRequest, Approver
from rho_domain.ports.clock import Clock
from rho_domain.ports.database import Database
from rho_domain.ports.executor import Executor
from rho_domain.ports.model import ChatModel
from rho_domain.ports.signals import SignalSource
from rho_domain.ports.store import SessionRecord, SessionStore
from rho_domain.run import PendingApproval, RunResult, RunStatus
from rho_domain.state import State
from rho_domain.streaming import Assembly, consume_stream
from rho_domain.tools.base import ToolContext
from rho_domain.tools.registry import parse_arguments

Listener = Callable[[ev.Event], Awaitable[None] | None]
T = TypeVar("T")
PAUSE_POLL_SECONDS = 0.25
REJECTED = "[rejected by the user; not run. Wait for the user's instructions.]"
SKIPPED = "[not run: the user rejected an earlier call of this batch.]"
CANCELLED_RESULT = "[cancelled by the user while running; effects, if any, are unknown.]"
SUPERSEDED = "[not run: the user sent a new message instead of approving this call.]"


async def _discard(event: ev.Event) -> None:
    """Deltas of a compaction call are not shown: the summary is not an answer."""


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

    All ports are passed in (``rho_entry.Session`` wires defaults). ``state`` and
    ``created=True`` resume a stored session. Not safe for concurrent runs: one at a time.
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
    ) -> None:
        self.agent = agent
        self.model, self.executor, self.clock = model, executor, clock
        self.store, self.signals, self.approver = store, signals, approver
        self.databases = dict(databases or {})
        self.id = session_id or new_id()
        self.state = state if state is not None else State()
        self.parent_id, self.labels = parent_id, dict(labels or {})
        self._created = created or store is None
        self._listeners: list[Listener] = [on_event] if on_event else []
        self._unpersisted: list[ev.Event] = []
        self._cancel = asyncio.Event()
        self._running = False
        self.last_result: RunResult | None = None

    # ------------------------------------------------------------------ public API

    def cancel(self) -> None:
        """Stop the current run at its next checkpoint; a running tool is killed."""
        self._cancel.set()

    def resolve_approval(self, call_id: str, approved: bool, *, always: bool = False) -> None:
        """Answer a pending approval; the next ``run()`` (without a prompt) continues."""
        pending = {c.id: c for c in self.state.pending_calls}
        if call_id not in pending:
            known = ", ".join(pending) or "none"
            raise SessionStateError(f"no pending tool call {call_id!r} (pending: {known})")
        event = ev.ApprovalResolved(
            at=self.clock.now(),
            call_id=call_id,
            tool_name=pending[call_id].name,
            approved=approved,
            always=always,
        )
        self.state.apply(event)
        self._unpersisted.append(event)

    async def run(
        self,
        prompt: str | None = None,
        *,
        max_turns: int | None = None,
        on_event: Listener | None = None,
    ) -> RunResult:
        """Run until the model answers without tool calls, or a limit, signal or error.

        Never raises for model, tool or store failures: they end the run with status
        ``error``. Raises ``SessionStateError`` for misuse (a run already in progress).
        """
        if self._running:
            raise SessionStateError("this session is already running; wait or cancel it")
        self._running = True
        if on_event is not None:
            self._listeners.append(on_event)
        run = _Run(id=new_id(), started=self.clock.monotonic())
        status, error = RunStatus.ERROR, None
        watcher: asyncio.Task[None] | None = None
        try:
            await self._start(prompt, run)
            watcher = asyncio.create_task(self._watch_cancel())
            status = await self._drive(prompt, run, max_turns or self.agent.config.max_turns)
        except asyncio.CancelledError:
            status = RunStatus.CANCELLED
            raise
        except RhoError as exc:
            error = exc
        except Exception as exc:  # noqa: BLE001 - a bug must still end the run cleanly
            error = exc
        finally:
            if watcher is not None:
                watcher.cancel()
            result = await self._finish(run, status, error)
            if on_event is not None:
                self._listeners.remove(on_event)
            self._running = False
        return result

    async def stream(
        self, prompt: str | None = None, *, max_turns: int | None = None
    ) -> AsyncIterator[ev.Event]:
        """Run and yield every event as it happens; ``last_result`` holds the RunResult.

        Leaving the loop early cancels the run.
        """
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

        Raises ``ModelError`` when the summary fails; history is then left untouched.
        """
        config, system = self.agent.config, self.agent.system_prompt
        before = self.state.estimated_context_tokens(system)
        if self.state.pending_calls:
            raise SessionStateError("cannot compact while tool calls wait for approval")
        plan = plan_compaction(
            self.state.messages, tail_budget_chars=int(config.context_window * 4 * 0.25)
        )
        if plan.is_empty:
            return CompactResult(
                summary="", tokens_before=before, tokens_after=before, trigger=trigger
            )
        instruction = UserMessage(content=compaction_instructions(custom_instructions))
        request = self._request((*plan.to_summarize, instruction), tool_choice="none")
        assembly = Assembly()
        await consume_stream(self.model, request, assembly, _discard, self.clock)
        summary = assembly.partial_text.strip()
        if not summary:
            raise ModelProtocolError("the model returned an empty summary; history kept")
        usage = assembly.usage_or_estimate(request)
        await self._emit(
            ev.UsageRecorded(at=self.clock.now(), usage=usage, prompt_tokens=usage.input_tokens)
        )
        messages = compacted_history(plan, summary)
        after = (len(system) + sum(message_chars(m) for m in messages) + 3) // 4
        await self._emit(
            ev.Compacted(
                at=self.clock.now(),
                trigger=trigger,
                summary=summary,
                tokens_before=before,
                tokens_after=after,
                replaced_count=len(plan.to_summarize),
                messages=messages,
            )
        )
        return CompactResult(
            summary=summary, tokens_before=before, tokens_after=after, trigger=trigger
        )

    async def close(self) -> None:
        """Persist anything pending and release the store's lock. Idempotent."""
        if self.store is not None and self._created:
            await self._flush()
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
            await self._emit(ev.MessageAdded(at=self.clock.now(), message=UserMessage(prompt)))
        elif not self.state.messages:
            raise SessionStateError("nothing to run: pass a prompt")
        turns = 0
        while True:
            if max_turns is not None and turns >= max_turns:
                return RunStatus.MAX_TURNS
            if (reason := self._budget_exceeded(run)) is not None:
                await self._emit(
                    ev.ErrorOccurred(
                        at=self.clock.now(), error_type="BudgetExceeded", message=reason
                    )
                )
                return RunStatus.BUDGET_EXCEEDED
            if await self._checkpoint("before model call"):
                return RunStatus.CANCELLED
            await self._maybe_auto_compact()
            await self._apply_directives()
            turns += 1
            message = await self._call_model(run)
            if message is None:
                return RunStatus.CANCELLED
            if not message.tool_calls:
                run.text = message.text or message.refusal
                return RunStatus.COMPLETED
            outcome = await self._run_calls(message.tool_calls)
            if outcome is not None:
                return outcome

    async def _call_model(self, run: _Run) -> AssistantMessage | None:
        """One streamed model call; None when cancelled during streaming."""
        request = self._request(tuple(self.state.messages))
        run.calls += 1
        context = self.state.estimated_context_tokens(self.agent.system_prompt)
        await self._emit(
            ev.LLMStarted(
                at=self.clock.now(),
                model=request.model,
                call_index=run.calls,
                context_tokens=context,
            )
        )
        started, assembly = self.clock.monotonic(), Assembly()
        consumer = asyncio.ensure_future(
            consume_stream(self.model, request, assembly, self._emit, self.clock)
        )
        cancelled = False
        try:
            cancelled = not await self._race(consumer)
            if not cancelled and not assembly.finished:
                raise ModelProtocolError(
                    "the model stream ended without finishing", partial_text=assembly.partial_text
                )
        except ModelError as exc:
            exc.partial_text = exc.partial_text or assembly.partial_text
            await self._keep_partial(assembly, "the response broke off")
            raise
        usage = assembly.usage_or_estimate(request)
        run.usage = run.usage + usage
        await self._emit(
            ev.UsageRecorded(at=self.clock.now(), usage=usage, prompt_tokens=usage.input_tokens)
        )
        await self._emit(
            ev.LLMEnded(
                at=self.clock.now(),
                model=request.model,
                call_index=run.calls,
                usage=usage,
                finish_reason=assembly.finish_reason,
                duration=self.clock.monotonic() - started,
            )
        )
        if cancelled:
            await self._keep_partial(assembly, "cancelled by the user")
            await self._emit(
                ev.Interrupted(
                    at=self.clock.now(), reason="cancelled", detail="during model response"
                )
            )
            return None
        message = assembly.message()
        if message.text or message.tool_calls or message.refusal or message.reasoning:
            await self._emit(ev.MessageAdded(at=self.clock.now(), message=message))
        return message

    async def _run_calls(self, calls: Sequence[ToolCall]) -> RunStatus | None:
        """Run a batch in order; a status ends the run, None continues the loop."""
        for index, call in enumerate(calls):
            if await self._checkpoint("before tool"):
                await self._answer_rest(calls[index:], CANCELLED_RESULT)
                return RunStatus.CANCELLED
            decision = decide(
                self.agent.profile,
                call,
                self.agent.registry.policy_for(call),
                auto_approve=self.agent.config.auto_approve,
                always_allowed=self.state.always_allowed,
            )
            if isinstance(decision, Denied):
                await self._emit(
                    ev.ToolBlocked(
                        at=self.clock.now(), call=call, by="policy", reason=decision.reason
                    )
                )
                await self._add_result(call, f"[denied: {decision.reason}; not run.]", True)
                continue
            if isinstance(decision, RequiresApproval):
                approved = await self._approval(call, decision.reason, calls[index:])
                if approved is None:
                    return (
                        RunStatus.CANCELLED
                        if self._cancel.is_set()
                        else RunStatus.AWAITING_APPROVAL
                    )
                if not approved:
                    await self._emit(
                        ev.ToolBlocked(
                            at=self.clock.now(), call=call, by="user", reason="rejected by the user"
                        )
                    )
                    await self._add_result(call, REJECTED, True)
                    await self._answer_rest(calls[index + 1 :], SKIPPED)
                    return RunStatus.COMPLETED
            if not await self._execute(call):
                await self._answer_rest(calls[index + 1 :], CANCELLED_RESULT)
                return RunStatus.CANCELLED
        return None

    async def _approval(
        self, call: ToolCall, reason: str, batch: Sequence[ToolCall]
    ) -> bool | None:
        """The decision for ``call``: from State if resolved, else from the approver.
        None means the run must stop (no approver: awaiting approval; or cancelled)."""
        known = self.state.approvals.get(call.id)
        if known is not None:
            return known
        if call.id not in self.state.approvals:
            await self._emit(
                ev.ApprovalRequested(
                    at=self.clock.now(), call=call, reason=reason, pending=tuple(batch)
                )
            )
        if self.approver is None:
            return None
        try:
            arguments: Mapping[str, Any] = parse_arguments(call)
        except RhoError:
            arguments = {}
        request = ApprovalRequest(session_id=self.id, call=call, arguments=arguments, reason=reason)
        asking = asyncio.ensure_future(self.approver.decide(request))
        if not await self._race(asking):
            return None
        answer = asking.result()
        await self._emit(
            ev.ApprovalResolved(
                at=self.clock.now(),
                call_id=call.id,
                tool_name=call.name,
                approved=answer.approved,
                always=answer.always,
            )
        )
        return answer.approved

    async def _execute(self, call: ToolCall) -> bool:
        """Run one tool call; False when it was cancelled (the tool's task is cancelled, so
        the executor kills its process group)."""
        await self._emit(ev.ToolStarted(at=self.clock.now(), call=call))
        started = self.clock.monotonic()
        ctx = ToolContext(
            session_id=self.id,
            call_id=call.id,
            executor=self.executor,
            profile=self.agent.profile,
            clock=self.clock,
            databases=self.databases,
        )
        task = asyncio.ensure_future(
            self.agent.registry.dispatch(call, ctx, timeout=self.agent.config.tool_timeout)
        )
        finished = await self._race(task)
        if finished:
            output = task.result()
            content, is_error, metadata = output.content, output.is_error, output.metadata
        else:
            content, is_error, metadata = CANCELLED_RESULT, True, {"cancelled": True}
        await self._emit(
            ev.ToolEnded(
                at=self.clock.now(),
                call_id=call.id,
                tool_name=call.name,
                content=content,
                is_error=is_error,
                duration=self.clock.monotonic() - started,
                metadata=dict(metadata),
            )
        )
        await self._add_result(call, content, is_error)
        if not finished:
            await self._emit(
                ev.Interrupted(
                    at=self.clock.now(), reason="cancelled", detail=f"during tool {call.name}"
                )
            )
        return finished

    # ------------------------------------------------------------------ helpers

    async def _start(self, prompt: str | None, run: _Run) -> None:
        self._cancel.clear()
        if self.signals is not None:
            await self.signals.clear_cancel(self.id)  # a stale request must not stop this run
        if not self._created and self.store is not None:
            record = SessionRecord(
                id=self.id,
                created_at=self.clock.now(),
                config=self.agent.config,
                parent_id=self.parent_id,
                labels=self.labels,
            )
            await self.store.create(record)
            self._created = True
        await self._flush()
        await self._emit(ev.RunStarted(at=self.clock.now(), run_id=run.id, prompt=prompt))
        for call in self.state.unanswered_calls():  # the process died mid-tool last time
            await self._add_result(
                call,
                "[interrupted: the previous process stopped while "
                "this tool ran; effects, if any, are unknown.]",
                True,
            )

    async def _finish(self, run: _Run, status: RunStatus, error: BaseException | None) -> RunResult:
        message = f"{type(error).__name__}: {error}" if error is not None else None
        with contextlib.suppress(Exception):
            for call in self.state.unanswered_calls():
                await self._add_result(call, CANCELLED_RESULT, True)
            if error is not None:
                await self._emit(
                    ev.ErrorOccurred(
                        at=self.clock.now(), error_type=type(error).__name__, message=str(error)
                    )
                )
        end = ev.RunEnded(
            at=self.clock.now(),
            run_id=run.id,
            status=status.value,
            text=run.text,
            usage=run.usage,
            session_usage=self.state.usage,
            error=message,
        )
        try:
            await self._emit(end)
        except Exception as exc:  # noqa: BLE001 - the result must still reach the caller
            message = message or f"{type(exc).__name__}: {exc}"
        if status is RunStatus.CANCELLED and self.signals is not None:
            with contextlib.suppress(Exception):
                await self.signals.clear_cancel(self.id)
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
        if superseded:
            approved = [c for c in calls if self.state.approvals.get(c.id) is True]
            others = [c for c in calls if c not in approved]
            outcome = await self._run_calls(approved)
            await self._answer_rest(others, SUPERSEDED)
            return outcome if outcome is RunStatus.CANCELLED else None
        return await self._run_calls(calls)

    async def _checkpoint(self, where: str) -> bool:
        """Honour pause (wait) and report whether the run must stop (cancelled)."""
        if self.signals is not None and not self._cancel.is_set():
            if await self.signals.is_paused(self.id):
                await self._emit(ev.Interrupted(at=self.clock.now(), reason="paused", detail=where))
                while await self.signals.is_paused(self.id) and not self._cancel.is_set():
                    await self.clock.sleep(PAUSE_POLL_SECONDS)
                await self._emit(
                    ev.Interrupted(at=self.clock.now(), reason="resumed", detail=where)
                )
        if self._cancel.is_set():
            await self._emit(ev.Interrupted(at=self.clock.now(), reason="cancelled", detail=where))
            return True
        return False

    async def _race(self, task: asyncio.Future[T]) -> bool:
        """Wait for ``task`` unless cancellation comes first (then cancel it): True if done."""
        stop = asyncio.ensure_future(self._cancel.wait())
        try:
            await asyncio.wait({task, stop}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stop.cancel()
        if task.done():
            task.result()  # re-raise the task's exception, if any
            return True
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task
        return False

    async def _watch_cancel(self) -> None:
        if self.signals is None:
            return
        with contextlib.suppress(RhoError):
            await self.signals.wait_for_cancel(self.id)
            self._cancel.set()

    async def _maybe_auto_compact(self) -> None:
        config = self.agent.config
        estimate = self.state.estimated_context_tokens(self.agent.system_prompt)
        if (
            not config.auto_compact
            or self.state.pending_calls
            or not should_compact(estimate, config.context_window, config.compact_threshold)
        ):
            return
        try:
            await self.compact(trigger="auto")
        except ModelError as exc:  # history is intact; the model call may still fit
            await self._emit(
                ev.ErrorOccurred(
                    at=self.clock.now(),
                    error_type=type(exc).__name__,
                    message=f"auto-compaction failed: {exc}",
                )
            )

    async def _apply_directives(self) -> None:
        if self.signals is None:
            return
        for directive in await self.signals.directives(self.id, after=self.state.directive_offset):
            await self._emit(
                ev.DirectiveApplied(
                    at=self.clock.now(), offset=directive.offset, text=directive.text
                )
            )
            text = f"[Directive from the operator]\n{directive.text}"
            await self._emit(
                ev.MessageAdded(at=self.clock.now(), message=UserMessage(text, origin="directive"))
            )

    def _budget_exceeded(self, run: _Run) -> str | None:
        budget, usage = self.agent.config.budget, run.usage
        checks = (
            (budget.max_input_tokens, usage.input_tokens, "input tokens"),
            (budget.max_output_tokens, usage.output_tokens, "output tokens"),
            (budget.max_total_tokens, usage.total_tokens, "total tokens"),
            (budget.max_cost_usd, usage.cost_usd or 0.0, "cost in USD"),
            (budget.max_wall_seconds, self.clock.monotonic() - run.started, "seconds"),
        )
        for limit, spent, what in checks:
            if limit is not None and spent >= limit:
                return f"budget reached: {spent:g} {what} of {limit:g} allowed for this run"
        return None

    def _request(
        self, messages: tuple[Any, ...], tool_choice: ToolChoice | None = None
    ) -> ModelRequest:
        config = self.agent.config
        return ModelRequest(
            model=config.model,
            system=self.agent.system_prompt,
            messages=messages,
            tools=self.agent.registry.specs(),
            tool_choice=tool_choice,
            response_format=config.response_format,
            reasoning_effort=config.reasoning_effort,
            service_tier=config.service_tier,
            max_output_tokens=config.max_output_tokens,
            temperature=config.temperature,
        )

    async def _keep_partial(self, assembly: Assembly, why: str) -> None:
        if assembly.partial_text:
            text = f"{assembly.partial_text}\n[response interrupted: {why}]"
            await self._emit(
                ev.MessageAdded(at=self.clock.now(), message=AssistantMessage(text=text))
            )

    async def _add_result(self, call: ToolCall, content: str, is_error: bool) -> None:
        message = ToolResultMessage(
            call_id=call.id, tool_name=call.name, content=content, is_error=is_error
        )
        await self._emit(ev.MessageAdded(at=self.clock.now(), message=message))

    async def _answer_rest(self, calls: Sequence[ToolCall], content: str) -> None:
        for call in calls:
            await self._add_result(call, content, True)

    async def _emit(self, event: ev.Event) -> None:
        """Apply, persist, then notify. A store failure propagates (the run ends in error)."""
        self.state.apply(event)
        if self.store is not None and ev.is_persistent(event):
            self._unpersisted.append(event)
            await self._flush()
        for listener in tuple(self._listeners):
            outcome = listener(event)
            if outcome is not None:
                await outcome

    async def _flush(self) -> None:
        if self.store is None or not self._created or not self._unpersisted:
            return
        batch, self._unpersisted = self._unpersisted, []
        try:
            await self.store.append(self.id, batch)
        except BaseException:
            self._unpersisted[:0] = batch  # keep them for the next attempt: lose nothing
            raise
