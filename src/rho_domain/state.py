"""State: the conversation and its bookkeeping, rebuilt by folding events.

Every change to State happens through ``apply(event)``, and every such event is persisted, so
replaying a trace with ``State.from_events`` gives back exactly the same state: messages
(compaction included), usage totals, status, pending approvals and the directive offset.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

import attrs

from rho_domain import events as ev
from rho_domain.earlier_writes import may_write, narrowed
from rho_domain.messages import (
    AssistantMessage,
    Message,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
    estimate_tokens,
    message_chars,
)
from rho_domain.shown_numbers import shown
from rho_domain.value_methods import value_eq, value_repr

if TYPE_CHECKING:
    from rho_domain.pending import PendingApproval


@attrs.define
class State:
    """Mutable conversation state. Mutate only through ``apply``."""

    __repr__ = value_repr
    __eq__ = value_eq

    messages: list[Message] = attrs.field(factory=list)
    usage: Usage = Usage()
    status: str = "created"
    run_count: int = 0
    last_prompt_tokens: int | None = None
    chars_since_prompt: int = 0
    pending_calls: tuple[ToolCall, ...] = ()
    approvals: dict[str, bool | None] = attrs.field(factory=dict)
    rejection_reasons: dict[str, str] = attrs.field(factory=dict)
    approval_reasons: dict[str, str] = attrs.field(factory=dict)
    waiting_children: dict[str, tuple[str, ToolCall]] = attrs.field(factory=dict)
    always_allowed: set[str] = attrs.field(factory=set)
    # the shape (``call_digest.tool_digest``) each call was asked about under, and each
    # "always" was given to: empty for the agent's own tools (``always_holds``)
    asked_shapes: dict[str, str] = attrs.field(factory=dict)
    always_shapes: dict[str, str] = attrs.field(factory=dict)
    asked_places: dict[str, str] = attrs.field(factory=dict)  # where each call was to run
    started_calls: set[str] = attrs.field(factory=set)
    # the calls of the tools that may write (``earlier_writes.may_write``) run since a human
    # approved a call asked about for what they wrote: a later bash line that may run it asks
    unreviewed_writes: list[ToolCall] = attrs.field(factory=list)
    # the writing calls each waiting call's question named every file of: reviewed once the
    # human approves it (``ApprovalRequested.reviews``)
    asked_reviews: dict[str, tuple[str, ...]] = attrs.field(factory=dict)
    # every tool call id the model used, compacted ones too (``model_turn`` renames repeats)
    call_ids: set[str] = attrs.field(factory=set)
    directive_offset: int = 0
    compactions: int = 0
    # what the session's budget counts across runs (``rho_domain.loop.budgets``)
    model_calls: int = 0
    tool_calls: int = 0
    run_seconds: float = 0.0  # the ended runs' durations, by their events' times
    run_started_at: float | None = None
    open_run: str | None = None  # the id of the run started and not ended (``run_edge``)
    last_at: float | None = None  # the last event's time: where an open run was last seen
    # the sub-agents' model calls, tool calls and cost as delegate results record them, and
    # the three when the current run started: the session's limits count the earlier runs'
    # from here, the current run's from its tally (``rho_domain.loop.budgets``)
    child_calls: int = 0
    child_tools: int = 0
    child_cost: float = 0.0
    earlier_children: tuple[int, int, float] = (0, 0, 0.0)

    @classmethod
    def from_events(cls, events: Iterable[ev.Event], *, repair: bool = True) -> State:
        """Replay events. With ``repair``, tool calls left without a result (the process died
        mid-tool) get a synthetic interrupted result so the next model request is valid."""
        state = cls()
        for event in events:
            state.apply(event)
        if repair:
            state.repair()
        return state

    def apply(self, event: ev.Event) -> None:
        """Fold one event into the state. Events that change nothing are ignored."""
        if event.kind in ev.EPHEMERAL_KINDS:
            return  # streaming deltas: the message they make up arrives whole
        self.last_at = event.at
        match event:
            case ev.MessageAdded(message=message):
                self._add_message(message)
            case ev.RunStarted() | ev.RunEnded():
                self._run_edge(event)
            case ev.LLMStarted():
                self.model_calls += 1
            case ev.UsageRecorded(usage=usage, prompt_tokens=prompt_tokens):
                self.usage = self.usage + usage
                self.last_prompt_tokens = prompt_tokens
                self.chars_since_prompt = 0
            case ev.ToolStarted(call=call):
                self.started_calls.add(call.id)
                self.tool_calls += 1
                if may_write(call.name):
                    self.unreviewed_writes.append(call)
            # a delegate's only: another tool's metadata would unlist its own writes
            case ev.ToolEnded(tool_name="delegate", metadata=metadata) if (
                "child_model_calls" in metadata
            ):
                self._child_spent(metadata)
                written = metadata.get("child_written")
                self.unreviewed_writes = narrowed(self.unreviewed_writes, event.call_id, written)
            case ev.LLMEnded() | ev.ToolEnded():
                pass  # nothing to fold
            case _:
                self._fold_off_plan(event)

    def _fold_off_plan(self, event: ev.Event) -> None:
        """The kinds a run that goes as planned never emits: approvals, compaction,
        directives, hooks. Only their events come here, so a plain run's events never ask for their
        classes (``rho_domain.events`` imports them with the first one emitted or read)."""
        match event:
            case ev.ApprovalRequested(call=call, pending=pending):
                self.pending_calls = pending or (call,)
                # asked again: the tool is shown otherwise, or the call runs elsewhere
                moved = self.asked_places.get(call.id, event.place) != event.place
                if moved or self.asked_shapes.setdefault(call.id, event.shown) != event.shown:
                    self.approvals[call.id] = None
                    self.asked_shapes[call.id] = event.shown
                self.approvals.setdefault(call.id, None)
                self.asked_places[call.id] = event.place
                self.approval_reasons[call.id] = event.reason
                self.asked_reviews[call.id] = event.reviews
                self.started_calls.discard(call.id)  # waiting, not running
                if event.child_session_id is not None and event.child_call is not None:
                    # a new question from the sub-agent: an earlier answer was for another call
                    self.approvals[call.id] = None
                    self.rejection_reasons.pop(call.id, None)
                    self.waiting_children[call.id] = (event.child_session_id, event.child_call)
            case ev.ApprovalResolved(call_id=call_id, approved=approved, always=always):
                self.approvals[call_id] = approved
                if approved and (told := set(self.asked_reviews.get(call_id, ()))):
                    # the human was told of their files, and ran it: not of the others', and
                    # never by the reason's text (a .git path named 'an earlier call...')
                    self.unreviewed_writes = [c for c in self.unreviewed_writes if c.id not in told]
                if not approved and event.reason:
                    self.rejection_reasons[call_id] = event.reason
                if always and approved:
                    self.always_allowed.add(event.tool_name)
                    self.always_shapes[event.tool_name] = self.asked_shapes.get(call_id, "")
            case ev.Compacted(messages=messages):
                self.messages = list(messages)
                self.last_prompt_tokens = None
                self.chars_since_prompt = sum(message_chars(m) for m in messages)
                self.compactions += 1
            case ev.DirectiveApplied(offset=offset):
                self.directive_offset = max(self.directive_offset, offset + 1)
            case ev.HookActed(messages=messages) if messages is not None:
                # a before-model hook's messages are the history from then on
                self.messages = list(messages)
                self.last_prompt_tokens = None
                self.chars_since_prompt = sum(message_chars(m) for m in messages)

    def _run_edge(self, event: ev.RunStarted | ev.RunEnded) -> None:
        """A run starts or ends: the status, the run count and the runs' time."""
        if isinstance(event, ev.RunStarted):
            self.run_count += 1
            self.status = "running"
            self.run_started_at, self.open_run = event.at, event.run_id
            self.earlier_children = (self.child_calls, self.child_tools, self.child_cost)
            return
        self.status = event.status
        if self.run_started_at is not None:
            self.run_seconds += max(event.at - self.run_started_at, 0.0)
        self.run_started_at = self.open_run = None

    def _child_spent(self, metadata: Mapping[str, object]) -> None:
        """Count what a delegate result says its sub-agent spent (a value that is not a
        number, in a trace written by hand, counts nothing)."""

        def number(key: str) -> float:
            value = metadata.get(key)  # Infinity failed int() below: every fold of the state
            return float(value) if shown(value) and value >= 0 else 0.0  # type: ignore[arg-type,operator]

        self.child_calls += int(number("child_model_calls"))
        self.child_tools += int(number("child_tool_calls"))
        self.child_cost += number("child_cost_usd")

    def _add_message(self, message: Message) -> None:
        self.messages.append(message)
        self.chars_since_prompt += message_chars(message)
        if isinstance(message, AssistantMessage) and message.tool_calls:
            self.call_ids.update(call.id for call in message.tool_calls)
        elif isinstance(message, ToolResultMessage):
            self.started_calls.discard(message.call_id)
            self.approvals.pop(message.call_id, None)
            self.rejection_reasons.pop(message.call_id, None)
            self.approval_reasons.pop(message.call_id, None)
            self.asked_reviews.pop(message.call_id, None)
            self.waiting_children.pop(message.call_id, None)
            self.pending_calls = tuple(c for c in self.pending_calls if c.id != message.call_id)

    def estimated_context_tokens(self, system_prompt: str = "") -> int:
        """Last prompt size the server reported plus ~4 chars/token for what came since."""
        if self.last_prompt_tokens is None:
            chars = len(system_prompt) + sum(message_chars(m) for m in self.messages)
            return estimate_tokens(chars)
        return self.last_prompt_tokens + estimate_tokens(self.chars_since_prompt)

    def unanswered_calls(self) -> tuple[ToolCall, ...]:
        """Tool calls with no result that are not waiting for approval."""
        from rho_domain.interrupted_calls import unanswered

        waiting = {c.id for c in self.pending_calls if c.id not in self.started_calls}
        return unanswered(self.messages, waiting)

    def forget_recorded_approvals(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """Forget the approvals a stored trace records (a session directory is data: whoever
        can write it can write an answer): calls approved but not run wait for an answer
        again, and "always" answers no longer hold. Rejections are kept (they only stop a
        call). Returns (the calls asked again, the tools no longer always approved)."""
        again = tuple(call_id for call_id, answer in self.approvals.items() if answer)
        for call_id in again:
            self.approvals[call_id] = None
        tools = tuple(sorted(self.always_allowed))
        self.always_allowed.clear()
        return again, tools

    def repair(self) -> tuple[ToolResultMessage, ...]:
        """Give every unanswered call an interrupted result, placed after its batch."""
        missing = self.unanswered_calls()
        if not missing:
            return ()
        from rho_domain.interrupted_calls import with_interrupted_results

        self.messages, synthetic = with_interrupted_results(self.messages, missing)
        self.pending_calls = tuple(c for c in self.pending_calls if c.id not in synthetic)
        self.started_calls -= set(synthetic)
        return tuple(synthetic.values())

    def awaiting_decision(self) -> tuple[ToolCall, ...]:
        """Pending calls that nobody has approved or rejected yet."""
        return tuple(c for c in self.pending_calls if self.approvals.get(c.id, False) is None)

    # The views of a pending call live in ``rho_domain.approval_views`` (loaded with the first
    # call shown or answered); these are the names every surface calls them by.

    def approval_digest(self, call: ToolCall) -> str:
        """The digest an answer about the pending ``call`` carries (``approval_views``)."""
        from rho_domain.approval_views import approval_digest

        return approval_digest(self, call)

    def shown_call(self, call: ToolCall) -> str:
        """The pending ``call`` as an answerer is to be shown it (``approval_views``)."""
        from rho_domain.approval_views import shown_call

        return shown_call(self, call)

    def check_digest(self, call: ToolCall, digest: str, *, place: str | None = None) -> None:
        """``CallChanged`` unless ``digest`` is ``approval_digest(call)`` (``approval_views``)."""
        from rho_domain.approval_views import check_digest

        check_digest(self, call, digest, place=place)

    def waiting_approvals(self) -> tuple[PendingApproval, ...]:
        """``awaiting_decision``'s calls, each with why it waits (a run's ``pending``)."""
        if not self.awaiting_decision():
            return ()  # a run that goes as planned loads none of the views
        from rho_domain.approval_views import waiting_approvals

        return waiting_approvals(self)

    def always_holds(self, name: str, shown: str) -> bool:
        """Whether tool ``name``, shown as ``shown`` (its ``tool_digest``; empty for the
        agent's own tools), is approved "always": the answer was given to it so shown."""
        return name in self.always_allowed and self.always_shapes.get(name, "") == shown

    def settled_history(self) -> list[Message]:
        """History without the turn in progress (whose tool calls have no results yet)."""
        messages = list(self.messages)
        for index in range(len(messages) - 1, -1, -1):
            message = messages[index]
            if isinstance(message, AssistantMessage) and message.tool_calls:
                return messages[:index]
        return messages

    def user_messages(self) -> tuple[UserMessage, ...]:
        """The user messages of the history, in order."""
        return tuple(m for m in self.messages if isinstance(m, UserMessage))
