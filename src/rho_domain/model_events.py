"""The events of one model call: its start and end, what streams, retries and usage.

``LLMStarted`` / ``LLMEnded`` bracket each call; ``TextDelta``, ``ReasoningDelta`` and
``ToolCallDelta`` stream its pieces (ephemeral: listeners see them, the trace does not);
``ModelRetrying`` announces a retry before any output; ``UsageRecorded`` adds a call's tokens to
the session's total. Each has a stable ``kind`` tag. ``rho_domain.events`` joins them to
``Event``: import them from there.
"""

from __future__ import annotations

from typing import ClassVar

import attrs

from rho_domain.event_view import SeedEventView
from rho_domain.messages import Usage


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
