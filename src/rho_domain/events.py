"""The event vocabulary: what a session reports, and what its trace records.

Every event has a stable ``kind`` tag (never a class name) used by serialisers. Events marked
``EPHEMERAL_KINDS`` (streaming deltas) go to listeners but not to the trace; all others are
persisted, and replaying them with ``State.apply`` rebuilds the session exactly.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import attrs

from rho_domain.messages import Message, ToolCall, Usage


@attrs.frozen(kw_only=True)
class RunStarted:
    kind: ClassVar[str] = "run_start"
    at: float
    run_id: str
    prompt: str | None


@attrs.frozen(kw_only=True)
class RunEnded:
    """``usage`` is this run's; ``session_usage`` the session's total after it."""

    kind: ClassVar[str] = "run_end"
    at: float
    run_id: str
    status: str
    text: str = ""
    usage: Usage = Usage()
    session_usage: Usage = Usage()
    error: str | None = None


@attrs.frozen(kw_only=True)
class MessageAdded:
    """A message joined the history (user, assistant or tool result)."""

    kind: ClassVar[str] = "message"
    at: float
    message: Message


@attrs.frozen(kw_only=True)
class LLMStarted:
    kind: ClassVar[str] = "llm_start"
    at: float
    model: str
    call_index: int
    context_tokens: int


@attrs.frozen(kw_only=True)
class LLMEnded:
    kind: ClassVar[str] = "llm_end"
    at: float
    model: str
    call_index: int
    usage: Usage
    finish_reason: str | None
    duration: float


@attrs.frozen(kw_only=True)
class TextDelta:
    kind: ClassVar[str] = "text_delta"
    at: float
    text: str


@attrs.frozen(kw_only=True)
class ReasoningDelta:
    kind: ClassVar[str] = "reasoning_delta"
    at: float
    text: str


@attrs.frozen(kw_only=True)
class ToolCallDelta:
    kind: ClassVar[str] = "tool_call_delta"
    at: float
    index: int
    call_id: str
    name: str
    arguments_delta: str


@attrs.frozen(kw_only=True)
class ToolStarted:
    kind: ClassVar[str] = "tool_start"
    at: float
    call: ToolCall


@attrs.frozen(kw_only=True)
class ToolEnded:
    """``content`` is what the model reads (already truncated); ``metadata`` is for UIs."""

    kind: ClassVar[str] = "tool_end"
    at: float
    call_id: str
    tool_name: str
    content: str
    is_error: bool
    duration: float
    metadata: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class ToolBlocked:
    """A call that did not run: ``by`` is "policy" (denied) or "user" (rejected)."""

    kind: ClassVar[str] = "tool_blocked"
    at: float
    call: ToolCall
    by: str
    reason: str


@attrs.frozen(kw_only=True)
class ApprovalRequested:
    """A call waits for a human. With no approver wired, the run ends ``awaiting_approval``
    and ``pending`` lists every call of the batch that has not run yet, in order."""

    kind: ClassVar[str] = "approval_requested"
    at: float
    call: ToolCall
    reason: str
    pending: tuple[ToolCall, ...] = ()


@attrs.frozen(kw_only=True)
class ApprovalResolved:
    kind: ClassVar[str] = "approval_resolved"
    at: float
    call_id: str
    tool_name: str
    approved: bool
    always: bool = False


@attrs.frozen(kw_only=True)
class Compacted:
    """History was replaced by ``messages`` (the summary plus what was kept verbatim)."""

    kind: ClassVar[str] = "compact"
    at: float
    trigger: str
    summary: str
    tokens_before: int
    tokens_after: int
    replaced_count: int
    messages: tuple[Message, ...]


@attrs.frozen(kw_only=True)
class UsageRecorded:
    """Usage of one model call (also of compaction calls), added to the session's total."""

    kind: ClassVar[str] = "usage"
    at: float
    usage: Usage
    prompt_tokens: int


@attrs.frozen(kw_only=True)
class Interrupted:
    """The run paused, resumed or was cancelled; ``reason`` says which and where."""

    kind: ClassVar[str] = "interruption"
    at: float
    reason: str
    detail: str = ""


@attrs.frozen(kw_only=True)
class DirectiveApplied:
    kind: ClassVar[str] = "directive"
    at: float
    offset: int
    text: str


@attrs.frozen(kw_only=True)
class ErrorOccurred:
    kind: ClassVar[str] = "error"
    at: float
    error_type: str
    message: str


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
    | Compacted
    | UsageRecorded
    | Interrupted
    | DirectiveApplied
    | ErrorOccurred
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
    Compacted,
    UsageRecorded,
    Interrupted,
    DirectiveApplied,
    ErrorOccurred,
)

EVENTS_BY_KIND: Mapping[str, type[Event]] = {t.kind: t for t in EVENT_TYPES}

EPHEMERAL_KINDS: frozenset[str] = frozenset({"text_delta", "reasoning_delta", "tool_call_delta"})


def is_persistent(event: Event) -> bool:
    """True for events the trace records."""
    return event.kind not in EPHEMERAL_KINDS
