"""Prompt token counts a model adapter can trust: what is sent, measured the server's way.

``prompt_text`` is everything of a request that the model reads: the system prompt, every
message and the tool schemas (a dozen tools are easily a thousand tokens). ``TokenMeter``
estimates tokens from it with the harness's rough estimate (``messages.estimate_tokens``, about
four characters per token) until the server gives a real count (usage, an overflow error's
numbers, its tokenizer endpoint); from then on with the ratio that count shows. A few tokens of
chat-template framing per message are added either way.
"""

from __future__ import annotations

import json
import math

from rho_domain.messages import AssistantMessage, estimate_tokens
from rho_domain.model import ModelRequest, ToolSpec

FRAMING_PER_MESSAGE = 4  # role markers and separators of a chat template
DEFAULT_CHARS_PER_TOKEN = 4.0
_RATIO_BOUNDS = (1.0, 8.0)


def prompt_text(request: ModelRequest) -> str:
    """The text of everything the request sends the model (system, messages, tool schemas)."""
    return "\n".join(p for p in _parts(request) if p)


def prompt_chars(request: ModelRequest) -> int:
    """``len(prompt_text(request))``, without building the text (estimates need only this)."""
    lengths = [len(p) for p in _parts(request) if p]
    return sum(lengths) + len(lengths) - 1 if lengths else 0


def _parts(request: ModelRequest) -> list[str]:
    parts = [request.system]
    for message in request.messages:
        if isinstance(message, AssistantMessage):
            parts.append(message.text)
            parts.extend(f"{c.name} {c.arguments}" for c in message.tool_calls)
        else:
            parts.append(message.content)
    if request.tools:
        parts.append(_schemas_text(request.tools))
    return parts


# Tool schemas as JSON, by the specs' names, descriptions and parameter mappings (by identity:
# a tool's schema is a constant of its handler). Every call of every session estimates the
# same schemas several times; encoding them was a tenth of a short run's CPU.
_SCHEMAS: dict[tuple[tuple[str, str, int], ...], tuple[tuple[object, ...], str]] = {}
_SCHEMAS_KEPT = 64


# The last tools tuple asked about and its text: a registry gives the same tuple while its
# tools are unchanged (``ToolRegistry.specs``), and a run asks several times per request. The
# tuple is kept alive here, so its identity is not reused; its specs are frozen.
_last: tuple[tuple[ToolSpec, ...], str] = ((), "")


def _schemas_text(tools: tuple[ToolSpec, ...]) -> str:
    global _last
    last = _last  # one read: another thread may replace it
    if last[0] is tools and tools:
        return last[1]
    text = _schemas_of(tools)
    _last = (tools, text)
    return text


def _schemas_of(tools: tuple[ToolSpec, ...]) -> str:
    key = tuple((t.name, t.description, id(t.parameters)) for t in tools)
    cached = _SCHEMAS.get(key)
    if cached is not None:
        return cached[1]
    text = json.dumps([t.to_openai() for t in tools], separators=(",", ":"))
    if len(_SCHEMAS) >= _SCHEMAS_KEPT:
        _SCHEMAS.clear()
    # The parameter mappings are kept alive with the entry, so their ids are not reused.
    _SCHEMAS[key] = (tuple(t.parameters for t in tools), text)
    return text


def framing_tokens(request: ModelRequest) -> int:
    """Tokens the chat template adds around the messages (not part of ``prompt_text``)."""
    return FRAMING_PER_MESSAGE * (len(request.messages) + 1) + 3


class TokenMeter:
    """A calibrated token estimate. ``learn`` takes a real count for a request and moves the
    ratio to it; ``learned`` says whether any real count was seen."""

    def __init__(self, chars_per_token: float = DEFAULT_CHARS_PER_TOKEN) -> None:
        self.chars_per_token = chars_per_token
        self.learned = False

    def estimate(self, request: ModelRequest) -> int:
        """Prompt tokens of ``request``: its text plus the template framing."""
        return self.estimate_chars(prompt_chars(request)) + framing_tokens(request)

    def estimate_text(self, text: str) -> int:
        """Tokens of ``text`` (no framing)."""
        return self.estimate_chars(len(text))

    def estimate_chars(self, chars: int) -> int:
        """Tokens for ``chars`` characters: the rough estimate until a real count was learned."""
        if not self.learned:
            return estimate_tokens(chars)
        return math.ceil(chars / self.chars_per_token)

    def learn(self, request: ModelRequest, prompt_tokens: int) -> None:
        """The server counted ``prompt_tokens`` for ``request``: adopt its ratio."""
        self.learn_text(prompt_chars(request), prompt_tokens - framing_tokens(request))

    def learn_text(self, chars: int, tokens: int) -> None:
        """``chars`` characters were counted as ``tokens``: adopt that ratio (within bounds),
        unless there is too little text to say anything."""
        if chars < 200 or tokens <= 0:
            return  # too little text to say anything about the tokenizer
        low, high = _RATIO_BOUNDS
        self.chars_per_token = min(high, max(low, chars / tokens))
        self.learned = True
