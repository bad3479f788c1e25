"""Chat Completions chunks → domain stream events.

``ChunkAssembler`` is pure: feed it each parsed chunk (a JSON object), get the display events
it produced; ``finish`` returns one ``ToolCallReady`` per assembled call. It accepts every
quirk in the reference: tool-call fragments as ``call_fragments.CallFragments`` takes them
(index from 1, missing or shared, ids missing or new on every fragment, parallel calls,
arguments riding the finish chunk); reasoning as ``reasoning_content``, ``reasoning`` or
Mistral content parts; usage on any chunk (last one wins, Groq's ``x_groq.usage`` too); an
empty-choices chunk that is not usage (Azure); a choice ``index`` written as a string
(``"0"``), ``content`` as a number (its JSON text), as one part object or as bare string
parts, and a ``message`` that is its text, kept rather than dropped; and choices other than
0 (n>1) are ignored. An ``error`` key raises before anything else.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from rho_adapters.model.call_fragments import CallFragments, wire_index
from rho_adapters.model.counts import parse_usage
from rho_domain import model as kinds
from rho_domain.messages import Usage
from rho_domain.model import TextChunk

if TYPE_CHECKING:
    from rho_domain.model import StreamEvent


class ChunkAssembler:
    """Assembles choice 0 of one response. ``partial_text`` survives errors. A call past
    ``max_calls`` (None: any number) is ``AnswerTooLong``."""

    def __init__(self, *, max_calls: int | None = None) -> None:
        self.text: list[str] = []
        self.reasoning: list[str] = []
        self.refusal: list[str] = []
        self.finish_reason: str | None = None
        self.usage: Usage | None = None
        self.service_tier: str | None = None
        self.events = 0  # chunks fed, to tell an empty stream from a broken one
        self._tools = CallFragments(max_calls=max_calls)

    @property
    def partial_text(self) -> str:
        """The text assembled so far."""
        return "".join(self.text) or "".join(self.refusal)

    @property
    def has_calls(self) -> bool:
        """True once a tool call has started."""
        return bool(self._tools.calls)

    def feed(self, chunk: Any) -> list[StreamEvent]:
        """Apply one parsed chunk. Raises a ModelError when the chunk carries ``error``."""
        # Called once per streamed delta: ``_is_mapping`` decides a parsed dict without the
        # abstract-class check, and keys that are rare are looked up only when present.
        self.events += 1
        if chunk.__class__ is dict and (text := _plain_text(chunk)) is not None:
            if text:
                self.text.append(text)
                return [TextChunk(text)]
            return []
        if not _is_mapping(chunk) or chunk.get("error"):
            from rho_adapters.model.error_bodies import stream_error

            raise stream_error(chunk, partial_text=self.partial_text)
        usage = chunk.get("usage")
        if not usage and "x_groq" in chunk:
            x_groq = chunk["x_groq"]
            usage = x_groq.get("usage") if _is_mapping(x_groq) else None
        if usage and _is_mapping(usage) and (parsed := parse_usage(usage)) is not None:
            self.usage = parsed
        tier = chunk.get("service_tier")
        if isinstance(tier, str):
            self.service_tier = tier
        events: list[StreamEvent] = []
        for choice in chunk.get("choices") or ():
            if not _is_mapping(choice) or wire_index(choice.get("index")):
                continue  # n>1: only choice 0 is assembled
            delta = choice.get("delta") or choice.get("message")
            if delta and _is_mapping(delta):
                self._delta(delta, events)
            elif isinstance(delta, str):  # a message that is its text: kept, not dropped
                self._delta({"content": delta}, events)
            reason = choice.get("finish_reason")
            if reason:
                self.finish_reason = str(reason)
        return events

    def finish(self) -> list[StreamEvent]:
        """One ToolCallReady per call, in order; arguments kept raw (``""`` means ``{}``)."""
        return self._tools.ready()

    @property
    def arguments_cut(self) -> bool:
        """A call's arguments are the start of a JSON text, not a whole one: the output limit
        cut them, whatever the finish_reason says (llama-cpp-python reports ``tool_calls``,
        capture 16)."""
        return self._tools.cut

    def response_chars(self) -> int:
        """Characters of everything produced, for usage estimates."""
        calls = self._tools.chars()
        return (
            sum(map(len, self.text))
            + sum(map(len, self.reasoning))
            + calls
            + sum(map(len, self.refusal))
        )

    def _delta(self, delta: Mapping[str, Any], events: list[StreamEvent]) -> None:
        if "reasoning" in delta or "reasoning_content" in delta:
            self._reasoning(delta, events)
        content = delta.get("content")
        if isinstance(content, str):
            if content:
                self.text.append(content)
                events.append(TextChunk(content))
        elif isinstance(content, list):
            self._content_parts(content, events)
        elif isinstance(content, Mapping):  # one part as an object, not a list of one
            self._content_parts([content], events)
        elif isinstance(content, int | float) and not isinstance(content, bool):
            # A number where text belongs (a server's JSON encoder that took "42" for one):
            # its text, rather than an answer dropped without a word.
            text = json.dumps(content)
            self.text.append(text)
            events.append(TextChunk(text))
        refusal = delta.get("refusal")
        if refusal and isinstance(refusal, str):
            self.refusal.append(refusal)
            events.append(kinds.RefusalChunk(refusal))
        fragments = delta.get("tool_calls") or ()
        if _is_mapping(fragments):
            fragments = (fragments,)  # one call given as an object, not a list of one
        for fragment in fragments:
            if _is_mapping(fragment):
                self._tools.add(fragment, events)

    def _reasoning(self, delta: Mapping[str, Any], events: list[StreamEvent]) -> None:
        reasoning = delta.get("reasoning")
        if not isinstance(reasoning, str) or not reasoning:
            reasoning = delta.get("reasoning_content")
        if isinstance(reasoning, str) and reasoning:
            self.reasoning.append(reasoning)
            events.append(kinds.ReasoningChunk(reasoning))

    def _content_parts(self, parts: list[Any], events: list[StreamEvent]) -> None:
        """Mistral: ``[{type: text, text}, {type: thinking, thinking: [{type: text, text}]}]``;
        a part that is a bare string is its text (before, dropped without a word)."""
        for part in parts:
            if isinstance(part, str):
                part = {"text": part}  # the same part, in its usual shape
            if not isinstance(part, Mapping):
                continue
            if part.get("type") == "thinking":
                inner = part.get("thinking")
                pieces = inner if isinstance(inner, list) else [{"text": inner}]
                for piece in pieces:
                    text = piece.get("text") if isinstance(piece, Mapping) else None
                    if isinstance(text, str) and text:
                        self.reasoning.append(text)
                        events.append(kinds.ReasoningChunk(text))
            elif isinstance(part.get("text"), str) and part["text"]:
                self.text.append(part["text"])
                events.append(TextChunk(part["text"]))


_DECODER = json.JSONDecoder()


def loads(data: str) -> Any:
    """``json.loads(data)``, same result and same errors, faster for a compact document (a
    streamed chunk): ``json.loads`` spends more time around its C scanner than in it, and a
    stream has one call per delta. Anything unusual (surrounding whitespace, extra data, a
    syntax error) goes to ``json.loads``, which decides. A document nested deeper than the
    parser goes (json's ``RecursionError``) is a ``ValueError`` too: what a server sends is
    malformed, never a crash."""
    try:
        try:
            value, end = _DECODER.raw_decode(data)
        except ValueError:
            return json.loads(data)
        return value if end == len(data) else json.loads(data)
    except RecursionError:
        raise ValueError("the JSON nests arrays or objects too deeply to be read") from None


def _plain_text(chunk: dict[str, Any]) -> str | None:
    """The text of a chunk that carries nothing but a text delta of choice 0 (how servers
    send most of a stream), else None (``feed`` then reads it key by key). Decided on the
    keys ``feed`` would use: no error, usage, ``x_groq`` or service tier, one choice, no
    finish reason, a delta of only ``content``."""
    choices = chunk.get("choices")
    if (
        choices.__class__ is not list
        or len(choices) != 1
        or chunk.get("usage")
        or "error" in chunk
        or "x_groq" in chunk
        or "service_tier" in chunk
    ):
        return None
    choice = choices[0]
    if choice.__class__ is not dict or choice.get("index") or choice.get("finish_reason"):
        return None
    delta = choice.get("delta")
    if delta.__class__ is not dict or len(delta) != 1:
        return None
    content = delta.get("content")
    return content if content.__class__ is str else None


def _is_mapping(value: Any) -> bool:
    # JSON objects are dicts: decided by one type comparison before the abstract-class check.
    return value.__class__ is dict or isinstance(value, Mapping)
