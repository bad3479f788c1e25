"""Conversation values: messages, tool calls and token usage. All frozen.

Messages are the domain's own types. Each also answers the design documents' view of it, the
Chat Completions dict (``message["role"]``, ``message.get("tool_calls")``, ``dict(message)``,
``message.chat()``), which the OpenAI-compatible adapter sends as it is; other wire formats
(Anthropic's) are the adapters' own translations.
"""

from __future__ import annotations

from collections.abc import KeysView
from typing import Any, Literal

import attrs

from rho_domain.shown_numbers import cost_or_none, count
from rho_domain.value_methods import value_eq, value_hash, value_repr


def unicode_text(text: str) -> str:
    r"""``text`` with each lone surrogate written as an escape: ``\xe9`` for a byte that is
    not UTF-8 (a file name as Python lists it: ``caf\xe9.txt``), ``\ud800`` for any other.
    Such a character cannot be encoded: one in a message broke whatever encoded it next (the
    terminal, ``stats``, every later model request of the session), so no message keeps one
    (each text field of a message converts with this) and no tool output. Text without one
    is returned as it is (the same object)."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        pass
    else:
        return text
    try:
        data = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate that stands for no byte
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return data.decode("utf-8", "backslashreplace")


def _unicode(value: Any) -> Any:
    """A message field's converter: ``unicode_text`` for text; any other value is left to
    whoever checks it (a ``ToolCall`` built with a dict of arguments, say)."""
    return unicode_text(value) if isinstance(value, str) else value


class ChatView:
    """A message read as the documents show one: a Chat Completions dict (``role``,
    ``content``, ``tool_calls``, ``tool_call_id``). Read-only: the message stays the typed
    value the session uses."""

    __slots__ = ()

    def chat(self) -> dict[str, Any]:
        """The message as a new Chat Completions dict."""
        raise NotImplementedError

    def __getitem__(self, key: str) -> Any:
        return self.chat()[key]

    def get(self, key: str, default: Any = None) -> Any:
        """``chat().get(key, default)``."""
        return self.chat().get(key, default)

    def keys(self) -> KeysView[str]:
        """The dict's keys (so ``dict(message)`` is ``message.chat()``)."""
        return self.chat().keys()


@attrs.frozen
class ToolCall:
    """A tool call as the model produced it.

    ``arguments`` is the raw JSON text exactly as received, so that a malformed call can be
    reported back to the model instead of silently becoming ``{}``.
    """

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    id: str = attrs.field(converter=_unicode)
    name: str = attrs.field(converter=_unicode)
    arguments: str = attrs.field(default="{}", converter=_unicode)


ThinkingKind = Literal["thinking", "redacted_thinking"]


@attrs.frozen(kw_only=True)
class ThinkingBlock:
    """One block of a model's extended thinking, exactly as the provider sent it (Anthropic's
    ``thinking`` and ``redacted_thinking`` content blocks).

    The provider signs these blocks and, when thinking is on, refuses a tool-use turn sent back
    without them or with them altered; so they are kept byte for byte and never shown to
    another provider. ``thinking`` and ``signature`` belong to a ``thinking`` block, ``data``
    (encrypted reasoning) to a ``redacted_thinking`` one. ``after_calls`` is how many of the
    turn's tool calls came before the block (interleaved thinking between calls), so the turn
    is sent back in the order it was produced.
    """

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    kind: ThinkingKind = "thinking"
    thinking: str = ""
    signature: str = ""
    data: str = ""
    after_calls: int = attrs.field(default=0, converter=count)


@attrs.frozen
class SystemMessage(ChatView):
    """A system message (adapters send the agent's system prompt this way)."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    content: str = attrs.field(converter=_unicode)
    role: Literal["system"] = "system"

    def chat(self) -> dict[str, Any]:
        """``{"role": "system", "content": ...}``."""
        return {"role": "system", "content": self.content}


UserOrigin = Literal["user", "directive", "summary", "recent", "nudge", "correction"]


@attrs.frozen
class UserMessage(ChatView):
    """A user turn. ``origin`` says where it came from: the user, an operator directive, a
    compaction summary, a user message kept verbatim through compaction, or the harness:
    ``nudge`` tells a model it repeats a call (``rho_domain.loop.stuck``), ``correction`` that
    its final answer did not match the output schema (``rho_domain.loop.output_check``)."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    content: str = attrs.field(converter=_unicode)
    origin: UserOrigin = "user"
    role: Literal["user"] = "user"

    def chat(self) -> dict[str, Any]:
        """``{"role": "user", "content": ...}``."""
        return {"role": "user", "content": self.content}


@attrs.frozen(kw_only=True)
class AssistantMessage(ChatView):
    """What the model said: text, tool calls and reasoning, all kept together.

    ``reasoning`` is the readable reasoning of any server; ``thinking`` the signed blocks an
    Anthropic model produced with them, replayed unchanged to that API and to no other."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    text: str = attrs.field(default="", converter=_unicode)
    tool_calls: tuple[ToolCall, ...] = ()
    reasoning: str = attrs.field(default="", converter=_unicode)
    refusal: str = attrs.field(default="", converter=_unicode)
    # Provider-signed thinking, sent back only to the provider that wrote it (never in chat()).
    thinking: tuple[ThinkingBlock, ...] = ()
    role: Literal["assistant"] = "assistant"

    def chat(self) -> dict[str, Any]:
        """The assistant turn; ``content`` is always a string, "" when the turn only called
        tools (llama-cpp-python answers 500 to null and to a missing key; every other known
        server accepts ""), and the refusal when there is neither text nor a call."""
        out: dict[str, Any] = {"role": "assistant", "content": self.text}
        if self.tool_calls:
            out["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments},
                }
                for c in self.tool_calls
            ]
        elif not out["content"]:
            out["content"] = self.refusal
        return out


@attrs.frozen(kw_only=True)
class ToolResultMessage(ChatView):
    """The result of one tool call, as the model will read it."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    call_id: str = attrs.field(converter=_unicode)
    tool_name: str = attrs.field(converter=_unicode)
    content: str = attrs.field(converter=_unicode)
    is_error: bool = False
    role: Literal["tool"] = "tool"

    def chat(self) -> dict[str, Any]:
        """``{"role": "tool", "tool_call_id": ..., "content": ...}``."""
        return {"role": "tool", "tool_call_id": self.call_id, "content": self.content}


Message = SystemMessage | UserMessage | AssistantMessage | ToolResultMessage


@attrs.frozen(kw_only=True)
class Usage:
    """Token usage of one or more model calls.

    ``cost_usd`` is None when no price is known (or no reader could show the cost:
    NaN, an infinity, past ``shown_numbers.BOUND``). ``estimated`` is True when the server did not
    report usage and the numbers were estimated (~4 characters per token).
    """

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    input_tokens: int = attrs.field(default=0, converter=count)
    output_tokens: int = attrs.field(default=0, converter=count)
    cached_tokens: int = attrs.field(default=0, converter=count)
    reasoning_tokens: int = attrs.field(default=0, converter=count)
    cost_usd: float | None = attrs.field(default=None, converter=cost_or_none)
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
