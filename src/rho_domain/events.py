"""The event vocabulary: what a session reports, and what its trace records.

Every event has a stable ``kind`` tag (never a class name) used by serialisers. Events marked
``EPHEMERAL_KINDS`` (streaming deltas) go to listeners but not to the trace; all others are
persisted, and replaying them with ``State.apply`` rebuilds the session exactly.

The events of one run's boundaries, messages, compaction, control and errors are defined
here; a model call's (``model_events``), a tool call's and its approval's (``tool_events``) and
those of the user's plugged-in code (``hook_events``) beside it. This module joins them all into
``Event`` and ``EVENT_TYPES``: import every event from here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Literal

import attrs

from rho_domain.compaction import CompactTrigger
from rho_domain.event_view import SeedEventView
from rho_domain.hook_events import HookActed as HookActed
from rho_domain.hook_events import ListenerFailed as ListenerFailed
from rho_domain.messages import Message, Usage
from rho_domain.model import TraceName
from rho_domain.model_events import LLMEnded as LLMEnded
from rho_domain.model_events import LLMStarted as LLMStarted
from rho_domain.model_events import ModelRetrying as ModelRetrying
from rho_domain.model_events import ReasoningDelta as ReasoningDelta
from rho_domain.model_events import TextDelta as TextDelta
from rho_domain.model_events import ToolCallDelta as ToolCallDelta
from rho_domain.model_events import UsageRecorded as UsageRecorded
from rho_domain.run_status import RunStatus
from rho_domain.tool_events import ApprovalRequested as ApprovalRequested
from rho_domain.tool_events import ApprovalResolved as ApprovalResolved
from rho_domain.tool_events import ToolBlocked as ToolBlocked
from rho_domain.tool_events import ToolEnded as ToolEnded
from rho_domain.tool_events import ToolStarted as ToolStarted

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
