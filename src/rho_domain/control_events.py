"""The events of what bends a run off its plan: compaction, a pause or a cancellation, an
operator's directive, an error, a model call retried, a piece of the stream skipped, a
sandbox the executor placed the session's work in (``Placed``).

A run that goes as planned emits none of them, so they are built by the first process that
emits or reads one: ``rho_domain.events`` names them lazily (PEP 562), and ``State.apply``,
the renderers and the trace's reader reach them by the kind of the event in hand. Each has a
stable ``kind`` tag; ``rho_domain.events`` joins them to ``Event``: import them from there.
"""

from __future__ import annotations

from typing import ClassVar, Literal

import attrs

from rho_domain.compaction_values import CompactTrigger
from rho_domain.event_view import SeedEventView
from rho_domain.messages import Message
from rho_domain.model_extras import TraceName
from rho_domain.placement import Placement
from rho_domain.shown_numbers import count, seconds
from rho_domain.value_methods import value_eq, value_hash, value_repr

InterruptReason = Literal["paused", "resumed", "cancelled"]


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

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    kind: ClassVar[str] = "compact_start"
    at: float
    trigger: CompactTrigger
    tokens_before: int = attrs.field(converter=count)


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

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    kind: ClassVar[str] = "compact"
    at: float
    trigger: CompactTrigger
    summary: str
    tokens_before: int = attrs.field(converter=count)
    tokens_after: int = attrs.field(converter=count)
    replaced_count: int = attrs.field(converter=count)
    messages: tuple[Message, ...]


@attrs.frozen(kw_only=True)
class Interrupted(SeedEventView):
    """The run paused, resumed or was cancelled.

    Attributes:
        at: Wall-clock time.
        reason: ``"paused"``, ``"resumed"`` or ``"cancelled"``.
        detail: Where (``before model call``, ``during tool bash``...).
    """

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

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

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    kind: ClassVar[str] = "directive"
    at: float
    offset: int = attrs.field(converter=count)
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

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

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

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    kind: ClassVar[str] = "trace"
    at: float
    name: TraceName
    message: str
    detail: str = ""


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

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    kind: ClassVar[str] = "retry"
    at: float
    delay: float = attrs.field(converter=seconds)
    reason: str
    attempt: int = attrs.field(converter=count)
    attempts: int = attrs.field(converter=count)
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
class Placed(SeedEventView):
    """The executor has just made or reattached the place the session's work runs in (a
    Daytona sandbox), recorded before anything runs in it: a run killed then (SIGKILL, OOM,
    a host crash) never reaches ``run_end``, and its resume must still name its sandbox
    (``Executor.on_placed``; ``rho_entry.reopening`` reads the last one a trace names).

    Attributes:
        at: Wall-clock time.
        placement: The backend and the place's id.
    """

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    kind: ClassVar[str] = "placed"
    at: float
    placement: Placement
