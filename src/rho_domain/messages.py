"""Conversation values: messages, tool calls and token usage. All frozen.

Messages are the domain's own types; adapters translate them to each wire format.
"""

from __future__ import annotations

from typing import Literal

import attrs


@attrs.frozen
class ToolCall:
    """A tool call as the model produced it.

    ``arguments`` is the raw JSON text exactly as received, so that a malformed call can be
    reported back to the model instead of silently becoming ``{}``.
    """

    id: str
    name: str
    arguments: str = "{}"


@attrs.frozen
class SystemMessage:
    """A system message (adapters send the agent's system prompt this way)."""

    content: str
    role: Literal["system"] = "system"


UserOrigin = Literal["user", "directive", "summary", "recent"]


@attrs.frozen
class UserMessage:
    """A user turn. ``origin`` says where it came from: the user, an operator directive, a
    compaction summary, or a user message kept verbatim through compaction."""

    content: str
    origin: UserOrigin = "user"
    role: Literal["user"] = "user"


@attrs.frozen(kw_only=True)
class AssistantMessage:
    """What the model said: text, tool calls and reasoning, all kept together."""

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    reasoning: str = ""
    refusal: str = ""
    role: Literal["assistant"] = "assistant"


@attrs.frozen(kw_only=True)
class ToolResultMessage:
    """The result of one tool call, as the model will read it."""

    call_id: str
    tool_name: str
    content: str
    is_error: bool = False
    role: Literal["tool"] = "tool"


Message = SystemMessage | UserMessage | AssistantMessage | ToolResultMessage


@attrs.frozen(kw_only=True)
class Usage:
    """Token usage of one or more model calls.

    ``cost_usd`` is None when no price is known. ``estimated`` is True when the server did not
    report usage and the numbers were estimated (~4 characters per token).
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    reasoning_tokens: int = 0
    cost_usd: float | None = None
    estimated: bool = False

    @property
    def total_tokens(self) -> int:
        """Input plus output tokens."""
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        if self.cost_usd is None and other.cost_usd is None:
            cost = None
        else:
            cost = (self.cost_usd or 0.0) + (other.cost_usd or 0.0)
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cached_tokens=self.cached_tokens + other.cached_tokens,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
            cost_usd=cost,
            estimated=self.estimated or other.estimated,
        )


def estimate_tokens(chars: int) -> int:
    """The harness's token estimate for ``chars`` characters: about four per token, rounded up.

    The one place this rule is written; every estimate (missing usage, context size,
    compaction) goes through it.
    """
    return (chars + 3) // 4


def message_chars(message: Message) -> int:
    """How many characters a message contributes to the prompt, for estimates."""
    if isinstance(message, AssistantMessage):
        calls = sum(len(c.name) + len(c.arguments) + len(c.id) for c in message.tool_calls)
        return len(message.text) + len(message.reasoning) + calls
    return len(message.content)
