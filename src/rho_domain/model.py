"""What the loop asks a model for, and what a model streams back.

A ChatModel adapter turns a ``ModelRequest`` into the wire format and the server's stream into
these ``StreamEvent`` values. The adapter assembles tool calls itself: it may emit
``ToolCallChunk`` deltas for display, and must emit one ``ToolCallReady`` per finished call.
A stream ends with exactly one ``StreamFinished``; failures are raised as ``ModelError``.
Reasoning and refusal fragments, thinking blocks, retry notices and warnings are
``model_extras``', named here and imported with the first one asked for (PEP 562): a model that
answers in text and tool calls never has them built.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import attrs

from rho_domain.lazy_names import lazy_names
from rho_domain.messages import Message, ToolCall, Usage
from rho_domain.value_methods import value_eq, value_hash, value_repr

if TYPE_CHECKING:
    from rho_domain.model_extras import TRACE_DETAIL_LIMIT as TRACE_DETAIL_LIMIT
    from rho_domain.model_extras import ReasoningChunk as ReasoningChunk
    from rho_domain.model_extras import RefusalChunk as RefusalChunk
    from rho_domain.model_extras import RetryNotice as RetryNotice
    from rho_domain.model_extras import StreamWarning as StreamWarning
    from rho_domain.model_extras import ThinkingReady as ThinkingReady
    from rho_domain.model_extras import TraceName as TraceName


@attrs.frozen(kw_only=True)
class ToolSpec:
    """A tool as the model sees it: the OpenAI function shape, minus the wrapper."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    name: str
    description: str
    parameters: Mapping[str, Any]

    def to_openai(self) -> dict[str, Any]:
        """This spec as an OpenAI ``tools`` entry (``type: function``)."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": dict(self.parameters),
            },
        }


# "auto", "none", "required", or the name of the one tool the model must call.
ToolChoice = str


@attrs.frozen(kw_only=True)
class ModelRequest:
    """One model call. ``system`` is sent first; ``messages`` never contain SystemMessage."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    model: str
    system: str
    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...] = ()
    tool_choice: ToolChoice | None = None
    parallel_tool_calls: bool | None = None
    response_format: Mapping[str, Any] | None = None
    # The final answer's JSON Schema (AgentConfig.output_schema); adapters send it the way
    # their server supports (response_format json_schema, or a final tool).
    output_schema: Mapping[str, Any] | None = None
    reasoning_effort: str | None = None
    service_tier: str | None = None
    max_output_tokens: int | None = None
    temperature: float | None = None


@attrs.frozen
class TextChunk:
    """A fragment of the answer."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    text: str


@attrs.frozen(kw_only=True)
class ToolCallChunk:
    """A fragment of a tool call as it streams (for display only)."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    index: int
    call_id: str = ""
    name: str = ""
    arguments_delta: str = ""


@attrs.frozen
class ToolCallReady:
    """A complete tool call. ``arguments`` is the raw text, valid JSON or not."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    call: ToolCall


@attrs.frozen
class UsageReport:
    """Usage of this call. May come once, at any point of the stream."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    usage: Usage


@attrs.frozen
class StreamFinished:
    """The last event of every successful stream.

    ``queue_wait``: seconds the call queued for a request slot to its endpoint (summed over
    retries), or None when the adapter does not gate its requests.
    """

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    finish_reason: str | None = None
    queue_wait: float | None = attrs.field(default=None, kw_only=True)


if TYPE_CHECKING:
    StreamEvent = (
        TextChunk
        | ReasoningChunk
        | RefusalChunk
        | ToolCallChunk
        | ToolCallReady
        | ThinkingReady
        | UsageReport
        | StreamFinished
        | RetryNotice
        | StreamWarning
    )

_EXTRAS = (
    "ReasoningChunk", "RefusalChunk", "RetryNotice", "StreamWarning", "ThinkingReady",
    "TraceName", "TRACE_DETAIL_LIMIT",
)  # fmt: skip
_named_later = lazy_names(__name__, dict.fromkeys(_EXTRAS, "rho_domain.model_extras"))


def __getattr__(name: str) -> Any:
    """The ``model_extras`` names and ``StreamEvent`` (every kind joined), imported when first
    asked for (the module docstring)."""
    if name == "StreamEvent":
        from rho_domain import model_extras as extras

        joined: Any = (
            TextChunk
            | extras.ReasoningChunk
            | extras.RefusalChunk
            | ToolCallChunk
            | ToolCallReady
            | extras.ThinkingReady
            | UsageReport
            | StreamFinished
            | extras.RetryNotice
            | extras.StreamWarning
        )
        globals()["StreamEvent"] = joined
        return joined
    return _named_later(name)
