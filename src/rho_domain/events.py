"""The event vocabulary: what a session reports, and what its trace records.

Every event has a stable ``kind`` tag (never a class name) used by serialisers. Events marked
``EPHEMERAL_KINDS`` (streaming deltas) go to listeners but not to the trace; all others are
persisted, and replaying them with ``State.apply`` rebuilds the session exactly.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Literal

import attrs

from rho_domain.compaction import CompactTrigger
from rho_domain.event_view import SeedEventView
from rho_domain.hook_events import HookActed as HookActed
from rho_domain.hook_events import ListenerFailed as ListenerFailed
from rho_domain.messages import Message, ToolCall, Usage
from rho_domain.model import TraceName
from rho_domain.run_status import RunStatus

BlockedBy = Literal["policy", "user", "hook"]
InterruptReason = Literal["paused", "resumed", "cancelled"]


@attrs.frozen(kw_only=True)
class RunStarted(SeedEventView):
    """A run began (``Session.run``).

    Attributes:
        at: Wall-clock time (the Clock port's ``now``), as on every event.
        run_id: The run's id, repeated on its ``RunEnded``.
        prompt: The user's prompt, or None when the run continues pending approvals.
    """

    kind: ClassVar[str] = "run_start"
    at: float
    run_id: str
    prompt: str | None


@attrs.frozen(kw_only=True)
class RunEnded(SeedEventView):
    """A run ended; always the last event of a run, whatever happened.

    Attributes:
        at: Wall-clock time.
        run_id: The id from ``RunStarted``.
        status: How it ended (``RunStatus``: completed, cancelled, max_turns, ...).
        text: The final answer (text of the last model turn), empty if there was none.
        usage: Tokens of this run only.
        session_usage: The session's total after this run.
        error: ``"Type: message"`` of the failure that ended the run, if any.
        output: The final answer parsed as JSON, when the agent has an ``output_schema``.
    """

    kind: ClassVar[str] = "run_end"
    at: float
    run_id: str
    status: RunStatus
    text: str = ""
    usage: Usage = Usage()
    session_usage: Usage = Usage()
    error: str | None = None
    output: Any = None


@attrs.frozen(kw_only=True)
class MessageAdded(SeedEventView):
    """A message joined the history.

    Attributes:
        at: Wall-clock time.
        message: The user, assistant or tool-result message, as the model will see it.
    """

    kind: ClassVar[str] = "message"
    at: float
    message: Message


@attrs.frozen(kw_only=True)
class LLMStarted(SeedEventView):
    """A model call began.

    Attributes:
        at: Wall-clock time.
        model: The model id sent (empty: the adapter's configured model).
        call_index: 1 for the run's first model call, then 2, 3, ...
        context_tokens: Estimated prompt size before the call (``State.estimated_context_tokens``).
    """

    kind: ClassVar[str] = "llm_start"
    at: float
    model: str
    call_index: int
    context_tokens: int


@attrs.frozen(kw_only=True)
class LLMEnded(SeedEventView):
    """A model call finished (or was cancelled while streaming).

    Attributes:
        at: Wall-clock time.
        model: The model id sent.
        call_index: The index from ``LLMStarted``.
        usage: Tokens of this call (the server's, or an estimate marked ``estimated``).
        finish_reason: The server's reason (``stop``, ``tool_calls``, ``length``...), or None.
        duration: Seconds on the monotonic clock.
        first_output_after: Seconds from the call's start to the first piece of the answer
            (latency to first token; None: nothing came, or a trace written before it was
            recorded).
        retries: How many times the call was retried before the server answered.
        queue_wait: Seconds of ``duration`` the call queued for a request slot to its endpoint
            (the process's in-flight bound, FIFO), or None when not measured (older traces,
            models that do not gate their requests). Optional and additive in the trace.
    """

    kind: ClassVar[str] = "llm_end"
    at: float
    model: str
    call_index: int
    usage: Usage
    finish_reason: str | None
    duration: float
    first_output_after: float | None = None
    retries: int = 0
    queue_wait: float | None = None


@attrs.frozen(kw_only=True)
class TextDelta(SeedEventView):
    """A fragment of the answer (or of a refusal) as it streams; not persisted.

    Attributes:
        at: Wall-clock time.
        text: The fragment.
    """

    kind: ClassVar[str] = "text_delta"
    at: float
    text: str


@attrs.frozen(kw_only=True)
class ReasoningDelta(SeedEventView):
    """A fragment of the model's reasoning as it streams; not persisted.

    Attributes:
        at: Wall-clock time.
        text: The fragment.
    """

    kind: ClassVar[str] = "reasoning_delta"
    at: float
    text: str


@attrs.frozen(kw_only=True)
class ToolCallDelta(SeedEventView):
    """A fragment of a tool call as it streams; not persisted.

    Attributes:
        at: Wall-clock time.
        index: The call's position in the model's turn.
        call_id: The call's id (may be empty until the server sends it).
        name: The tool's name (may be empty in later fragments).
        arguments_delta: The next piece of the raw JSON arguments.
    """

    kind: ClassVar[str] = "tool_call_delta"
    at: float
    index: int
    call_id: str
    name: str
    arguments_delta: str


@attrs.frozen(kw_only=True)
class ToolStarted(SeedEventView):
    """A tool call passed policy and approval and began to run.

    Attributes:
        at: Wall-clock time.
        call: The call as the model made it.
    """

    kind: ClassVar[str] = "tool_start"
    at: float
    call: ToolCall


@attrs.frozen(kw_only=True)
class ToolEnded(SeedEventView):
    """A tool call finished, failed or was cancelled; its result message follows.

    Attributes:
        at: Wall-clock time.
        call_id: The call's id.
        tool_name: The tool's name.
        content: What the model reads (already truncated).
        is_error: True when the call failed (the model is told so).
        duration: Seconds on the monotonic clock.
        metadata: Details for UIs and traces (exit code, truncation, child session...).
    """

    kind: ClassVar[str] = "tool_end"
    at: float
    call_id: str
    tool_name: str
    content: str
    is_error: bool
    duration: float
    metadata: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class ToolBlocked(SeedEventView):
    """A call that did not run.

    Attributes:
        at: Wall-clock time.
        call: The call.
        by: ``"policy"`` (denied by the profile), ``"user"`` (rejected by a human) or
            ``"hook"`` (denied by a before-tool hook, or its hook failed).
        reason: Why, in words.
    """

    kind: ClassVar[str] = "tool_blocked"
    at: float
    call: ToolCall
    by: BlockedBy
    reason: str


@attrs.frozen(kw_only=True)
class ApprovalRequested(SeedEventView):
    """A call waits for a human.

    With no approver wired, the run ends ``awaiting_approval``.

    Attributes:
        at: Wall-clock time.
        call: The call to approve.
        reason: Why it needs approval (the approval policy's words).
        pending: Every call of the batch that has not run yet, in order.
        child_session_id: Set when ``call`` is a ``delegate`` call whose sub-agent waits:
            the child session, which continues once the parent's call is answered.
        child_call: The sub-agent's call that the answer is really about.
    """

    kind: ClassVar[str] = "approval_requested"
    at: float
    call: ToolCall
    reason: str
    pending: tuple[ToolCall, ...] = ()
    child_session_id: str | None = None
    child_call: ToolCall | None = None


@attrs.frozen(kw_only=True)
class ApprovalResolved(SeedEventView):
    """A human answered an approval (live, or later with ``Session.resolve_approval``).

    Attributes:
        at: Wall-clock time.
        call_id: The call answered.
        tool_name: Its tool (``always`` applies to the tool, not the call).
        approved: True to run it.
        always: Approve this tool for the rest of the session.
        reason: Why the human rejected it (empty when none was given); the model reads it.
    """

    kind: ClassVar[str] = "approval_resolved"
    at: float
    call_id: str
    tool_name: str
    approved: bool
    always: bool = False
    reason: str = ""


@attrs.frozen(kw_only=True)
class CompactStarted(SeedEventView):
    """A compaction began: the model is asked for a summary of the older history.

    ``Compacted`` follows when the summary replaced it; nothing does when the summary failed
    (an ``error`` event says so) or would not have made the context smaller.

    Attributes:
        at: Wall-clock time.
        trigger: ``"auto"``, ``"overflow"`` or ``"manual"``, as on ``Compacted``.
        tokens_before: Estimated context before.
    """

    kind: ClassVar[str] = "compact_start"
    at: float
    trigger: CompactTrigger
    tokens_before: int


@attrs.frozen(kw_only=True)
class Compacted(SeedEventView):
    """History was replaced by a summary plus what was kept verbatim.

    Attributes:
        at: Wall-clock time.
        trigger: ``"auto"`` (context over the threshold), ``"overflow"`` (the server refused a
            request as too long) or ``"manual"`` (``Session.compact``).
        summary: The model's summary.
        tokens_before: Estimated context before.
        tokens_after: Estimated context after.
        replaced_count: How many messages the summary replaced.
        messages: The whole new history.
    """

    kind: ClassVar[str] = "compact"
    at: float
    trigger: CompactTrigger
    summary: str
    tokens_before: int
    tokens_after: int
    replaced_count: int
    messages: tuple[Message, ...]


@attrs.frozen(kw_only=True)
class UsageRecorded(SeedEventView):
    """Usage of one model call (compaction calls too), added to the session's total.

    Attributes:
        at: Wall-clock time.
        usage: The call's tokens.
        prompt_tokens: The prompt size it reports, the base of the next context estimate.
    """

    kind: ClassVar[str] = "usage"
    at: float
    usage: Usage
    prompt_tokens: int


@attrs.frozen(kw_only=True)
class Interrupted(SeedEventView):
    """The run paused, resumed or was cancelled.

    Attributes:
        at: Wall-clock time.
        reason: ``"paused"``, ``"resumed"`` or ``"cancelled"``.
        detail: Where (``before model call``, ``during tool bash``...).
    """

    kind: ClassVar[str] = "interruption"
    at: float
    reason: InterruptReason
    detail: str = ""


@attrs.frozen(kw_only=True)
class DirectiveApplied(SeedEventView):
    """An operator directive (``rho-agent monitor directive``) was added as a user message.

    Attributes:
        at: Wall-clock time.
        offset: Its line in the session's directive log (applied once: State keeps the next).
        text: The directive.
    """

    kind: ClassVar[str] = "directive"
    at: float
    offset: int
    text: str


@attrs.frozen(kw_only=True)
class ErrorOccurred(SeedEventView):
    """Something failed: a model or store error ending the run, a failed auto-compaction,
    a budget reached.

    Attributes:
        at: Wall-clock time.
        error_type: The exception's class name (or ``BudgetExceeded``).
        message: What happened.
    """

    kind: ClassVar[str] = "error"
    at: float
    error_type: str
    message: str


@attrs.frozen(kw_only=True)
class ModelRetrying(SeedEventView):
    """A model call failed before any output and will be tried again after ``delay``.

    Attributes:
        at: Wall-clock time.
        delay: Seconds until the next attempt.
        reason: Why (``429``, ``503``, ``connection failed``, ...).
        attempt: The number of the next attempt (2 for the first retry).
        attempts: How many attempts there will be at most.
        note: Anything else the user should know, or empty.
    """

    kind: ClassVar[str] = "retry"
    at: float
    delay: float
    reason: str
    attempt: int
    attempts: int
    note: str = ""

    @property
    def message(self) -> str:
        """``retrying in 1.0 s (429, attempt 2/3)``."""
        note = f"; {self.note}" if self.note else ""
        return (
            f"retrying in {self.delay:.1f} s ({self.reason}, attempt "
            f"{self.attempt}/{self.attempts}){note}"
        )


@attrs.frozen(kw_only=True)
class TraceNoted(SeedEventView):
    """Something in the model's stream was skipped and the stream went on (the design
    documents' ``TraceEvent``): the answer is whole, and this records what was left out.

    Attributes:
        at: Wall-clock time.
        name: ``"parse_error"`` (an event that is not JSON) or ``"unknown_event"`` (an event
            of a type the model adapter does not know).
        message: What was skipped, from where.
        detail: The raw event, cut to 2,000 characters.
    """

    kind: ClassVar[str] = "trace"
    at: float
    name: TraceName
    message: str
    detail: str = ""


Event = (
    RunStarted
    | RunEnded
    | MessageAdded
    | LLMStarted
    | LLMEnded
    | TextDelta
    | ReasoningDelta
    | ToolCallDelta
    | ToolStarted
    | ToolEnded
    | ToolBlocked
    | ApprovalRequested
    | ApprovalResolved
    | CompactStarted
    | Compacted
    | UsageRecorded
    | Interrupted
    | DirectiveApplied
    | ErrorOccurred
    | ModelRetrying
    | TraceNoted
    | ListenerFailed
    | HookActed
)

EVENT_TYPES: tuple[type[Event], ...] = (
    RunStarted,
    RunEnded,
    MessageAdded,
    LLMStarted,
    LLMEnded,
    TextDelta,
    ReasoningDelta,
    ToolCallDelta,
    ToolStarted,
    ToolEnded,
    ToolBlocked,
    ApprovalRequested,
    ApprovalResolved,
    CompactStarted,
    Compacted,
    UsageRecorded,
    Interrupted,
    DirectiveApplied,
    ErrorOccurred,
    ModelRetrying,
    TraceNoted,
    ListenerFailed,
    HookActed,
)

EVENTS_BY_KIND: Mapping[str, type[Event]] = {t.kind: t for t in EVENT_TYPES}

EPHEMERAL_KINDS: frozenset[str] = frozenset({"text_delta", "reasoning_delta", "tool_call_delta"})


def is_persistent(event: Event) -> bool:
    """True for events the trace records."""
    return event.kind not in EPHEMERAL_KINDS
