"""What the loop asks a model for, and what a model streams back.

A ChatModel adapter turns a ``ModelRequest`` into the wire format and the server's stream into
these ``StreamEvent`` values. The adapter assembles tool calls itself: it may emit
``ToolCallChunk`` deltas for display, and must emit one ``ToolCallReady`` per finished call.
A stream ends with exactly one ``StreamFinished``; failures are raised as ``ModelError``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import attrs

from rho_domain.messages import Message, ThinkingBlock, ToolCall, Usage


@attrs.frozen(kw_only=True)
class ToolSpec:
    """A tool as the model sees it: the OpenAI function shape, minus the wrapper."""

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

    text: str


@attrs.frozen
class ReasoningChunk:
    """A fragment of the model's reasoning."""

    text: str


@attrs.frozen
class RefusalChunk:
    """A fragment of a refusal (shown like text, kept apart in the message)."""

    text: str


@attrs.frozen(kw_only=True)
class ToolCallChunk:
    """A fragment of a tool call as it streams (for display only)."""

    index: int
    call_id: str = ""
    name: str = ""
    arguments_delta: str = ""


@attrs.frozen
class ToolCallReady:
    """A complete tool call. ``arguments`` is the raw text, valid JSON or not."""

    call: ToolCall


@attrs.frozen
class ThinkingReady:
    """A complete, signed thinking block (Anthropic), in the order the model produced it; the
    adapter has already streamed its text as ``ReasoningChunk``s for display."""

    block: ThinkingBlock


@attrs.frozen
class UsageReport:
    """Usage of this call. May come once, at any point of the stream."""

    usage: Usage


@attrs.frozen
class StreamFinished:
    """The last event of every successful stream.

    ``queue_wait``: seconds the call queued for a request slot to its endpoint (summed over
    retries), or None when the adapter does not gate its requests.
    """

    finish_reason: str | None = None
    queue_wait: float | None = attrs.field(default=None, kw_only=True)


@attrs.frozen(kw_only=True)
class RetryNotice:
    """The adapter is about to wait ``delay`` seconds and try the call again (before any
    output): attempt ``attempt`` of ``attempts``, because of ``reason`` (``429``, ``503``,
    ``connection failed``). ``note`` adds what the user should know (a server delay cut)."""

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

    message: str
    name: TraceName = attrs.field(default="parse_error", kw_only=True)
    detail: str = attrs.field(default="", kw_only=True)


TRACE_DETAIL_LIMIT = 2_000


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
