"""The events of one model call: its start and end, what streams, and its usage.

``LLMStarted`` / ``LLMEnded`` bracket each call; ``TextDelta``, ``ReasoningDelta`` and
``ToolCallDelta`` stream its pieces (ephemeral: listeners see them, the trace does not);
``UsageRecorded`` adds a call's tokens to the session's total (a retry, ``ModelRetrying``, is
``control_events``'). Each has a stable ``kind`` tag. ``rho_domain.events`` joins them to
``Event``: import them from there.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

import attrs

from rho_domain.event_view import SeedEventView
from rho_domain.lazy_names import lazy_names
from rho_domain.messages import Usage
from rho_domain.shown_numbers import count, seconds, seconds_or_none
from rho_domain.value_methods import value_eq, value_hash, value_repr

if TYPE_CHECKING:
    from rho_domain.model_extras import ReasoningDelta as ReasoningDelta

# a reasoning fragment's event, with the first one a model streams (``model_extras``)
__getattr__ = lazy_names(__name__, {"ReasoningDelta": "rho_domain.model_extras"})


@attrs.frozen(kw_only=True)
class LLMStarted(SeedEventView):
    """A model call began.

    Attributes:
        at: Wall-clock time.
        model: The model id sent (empty: the adapter's configured model).
        call_index: 1 for the run's first model call, then 2, 3, ...
        context_tokens: Estimated prompt size before the call (``State.estimated_context_tokens``).
    """

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    kind: ClassVar[str] = "llm_start"
    at: float
    model: str
    call_index: int = attrs.field(converter=count)
    context_tokens: int = attrs.field(converter=count)


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

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    kind: ClassVar[str] = "llm_end"
    at: float
    model: str
    call_index: int = attrs.field(converter=count)
    usage: Usage
    finish_reason: str | None
    duration: float = attrs.field(converter=seconds)  # shown_numbers: what a reader can show
    first_output_after: float | None = attrs.field(default=None, converter=seconds_or_none)
    retries: int = attrs.field(default=0, converter=count)
    queue_wait: float | None = attrs.field(default=None, converter=seconds_or_none)


@attrs.frozen(kw_only=True)
class TextDelta(SeedEventView):
    """A fragment of the answer (or of a refusal) as it streams; not persisted.

    Attributes:
        at: Wall-clock time.
        text: The fragment.
    """

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    kind: ClassVar[str] = "text_delta"
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

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    kind: ClassVar[str] = "tool_call_delta"
    at: float
    index: int = attrs.field(converter=count)
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

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    kind: ClassVar[str] = "usage"
    at: float
    usage: Usage
    prompt_tokens: int = attrs.field(converter=count)
