"""The stream pieces beyond an answer's text and tool calls: reasoning and refusal fragments,
a signed thinking block, a retry's notice, a skipped piece's warning (``TraceName``), and the
event a reasoning fragment becomes (``ReasoningDelta``, named by ``rho_domain.model_events``).

A model that answers in text and tool calls never streams them, so a run against it never
builds these classes (about 0.7 ms of CPU each): ``rho_domain.model`` names them lazily
(PEP 562), the adapters build them where they parse one, and the loop's stream reader reaches
them only for a piece that is none of the plain kinds. Import them from ``rho_domain.model``.
"""

from __future__ import annotations

from typing import ClassVar, Literal

import attrs

from rho_domain.event_view import SeedEventView
from rho_domain.messages import ThinkingBlock
from rho_domain.value_methods import value_eq, value_hash, value_repr


@attrs.frozen
class ReasoningChunk:
    """A fragment of the model's reasoning."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    text: str


@attrs.frozen
class RefusalChunk:
    """A fragment of a refusal (shown like text, kept apart in the message)."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    text: str


@attrs.frozen
class ThinkingReady:
    """A complete, signed thinking block (Anthropic), in the order the model produced it; the
    adapter has already streamed its text as ``ReasoningChunk``s for display."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    block: ThinkingBlock


@attrs.frozen(kw_only=True)
class RetryNotice:
    """The adapter is about to wait ``delay`` seconds and try the call again (before any
    output): attempt ``attempt`` of ``attempts``, because of ``reason`` (``429``, ``503``,
    ``connection failed``). ``note`` adds what the user should know (a server delay cut)."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    delay: float
    reason: str
    attempt: int
    attempts: int
    note: str = ""


TraceName = Literal["parse_error", "unknown_event"]


@attrs.frozen
class StreamWarning:
    """Something in the stream was skipped and the stream went on; the answer is still whole.
    ``message`` says what; ``name`` is ``parse_error`` (an event that is not JSON) or
    ``unknown_event`` (an event of a type the adapter does not know); ``detail`` is the raw
    event, cut to ``TRACE_DETAIL_LIMIT`` characters."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    message: str
    name: TraceName = attrs.field(default="parse_error", kw_only=True)
    detail: str = attrs.field(default="", kw_only=True)


TRACE_DETAIL_LIMIT = 2_000


@attrs.frozen(kw_only=True)
class ReasoningDelta(SeedEventView):
    """A fragment of the model's reasoning as it streams; not persisted.

    Attributes:
        at: Wall-clock time.
        text: The fragment.
    """

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    kind: ClassVar[str] = "reasoning_delta"
    at: float
    text: str
