"""Chat Completions chunks → domain stream events.

``ChunkAssembler`` is pure: feed it each parsed chunk (a JSON object), get the display events
it produced; ``finish`` returns one ``ToolCallReady`` per assembled call. It accepts every
quirk in the reference: tool-call ``index`` starting at 1, missing, or the same for every
call of a batch (Ollama: a new ``id`` at a used index, after whole arguments, starts a new
call), ``id`` missing (one is generated), new on every fragment (vLLM's gpt-oss) or
repeated with the name on every fragment (set, never appended), whole arguments in one
delta, remaining arguments riding the finish chunk, parallel calls; reasoning as
``reasoning_content``, ``reasoning`` or Mistral content parts; usage on any chunk (last one
wins, Groq's ``x_groq.usage`` too); an empty-choices chunk that is not usage (Azure); and
choices other than 0 (n>1) are ignored. An ``error`` key raises before anything else.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import attrs

from rho_adapters.model.answer_limits import too_many_calls
from rho_adapters.model.counts import parse_usage
from rho_domain import model as kinds
from rho_domain.messages import ToolCall, Usage
from rho_domain.model import (
    TextChunk,
    ToolCallChunk,
    ToolCallReady,
)
from rho_domain.value_methods import value_eq, value_repr

if TYPE_CHECKING:
    from rho_domain.model import StreamEvent


@attrs.define
class _Call:
    __repr__ = value_repr
    __eq__ = value_eq

    position: int
    id: str = ""
    name: str = ""
    arguments: list[str] = attrs.field(factory=list)

    @property
    def whole(self) -> bool:
        """Its arguments so far are one whole JSON value (asked only when an id changes)."""
        try:
            json.loads("".join(self.arguments))
        except (ValueError, RecursionError):
            return False
        return True


class ChunkAssembler:
    """Assembles choice 0 of one response. ``partial_text`` survives errors. A call past
    ``max_calls`` (None: any number) is ``AnswerTooLong``."""

    def __init__(self, *, max_calls: int | None = None) -> None:
        self.max_calls = max_calls
        self.text: list[str] = []
        self.reasoning: list[str] = []
        self.refusal: list[str] = []
        self.finish_reason: str | None = None
        self.usage: Usage | None = None
        self.service_tier: str | None = None
        self.events = 0  # chunks fed, to tell an empty stream from a broken one
        self._calls: dict[int, _Call] = {}
        self._last_key: int | None = None
        self._at_index: dict[int, int] = {}  # a wire index -> the key of its latest call

    @property
    def partial_text(self) -> str:
        """The text assembled so far."""
        return "".join(self.text) or "".join(self.refusal)

    @property
    def has_calls(self) -> bool:
        """True once a tool call has started."""
        return bool(self._calls)

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
            if not _is_mapping(choice) or (choice.get("index") or 0) != 0:
                continue  # n>1: only choice 0 is assembled
            delta = choice.get("delta") or choice.get("message")
            if delta and _is_mapping(delta):
                self._delta(delta, events)
            reason = choice.get("finish_reason")
            if reason:
                self.finish_reason = str(reason)
        return events

    def finish(self) -> list[StreamEvent]:
        """One ToolCallReady per call, in order; arguments kept raw (``""`` means ``{}``)."""
        ready: list[StreamEvent] = []
        for call in sorted(self._calls.values(), key=lambda c: c.position):
            arguments = "".join(call.arguments)
            ready.append(
                ToolCallReady(
                    ToolCall(
                        id=call.id or f"call_{uuid.uuid4().hex[:24]}",
                        name=call.name,
                        arguments=arguments if arguments.strip() else "{}",
                    )
                )
            )
        return ready

    @property
    def arguments_cut(self) -> bool:
        """A call's arguments are not valid JSON: the output limit cut them, whatever the
        finish_reason says (llama-cpp-python reports ``tool_calls``, capture 16)."""
        for call in self._calls.values():
            text = "".join(call.arguments).strip()
            if not text:
                continue
            try:
                json.loads(text)
            except ValueError:
                return True
            except RecursionError:  # whole or not, too deep to tell: the tool layer refuses it
                continue
        return False

    def response_chars(self) -> int:
        """Characters of everything produced, for usage estimates."""
        calls = sum(len(c.name) + sum(map(len, c.arguments)) for c in self._calls.values())
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
        refusal = delta.get("refusal")
        if refusal and isinstance(refusal, str):
            self.refusal.append(refusal)
            events.append(kinds.RefusalChunk(refusal))
        for fragment in delta.get("tool_calls") or ():
            if _is_mapping(fragment):
                self._tool_fragment(fragment, events)

    def _reasoning(self, delta: Mapping[str, Any], events: list[StreamEvent]) -> None:
        reasoning = delta.get("reasoning")
        if not isinstance(reasoning, str) or not reasoning:
            reasoning = delta.get("reasoning_content")
        if isinstance(reasoning, str) and reasoning:
            self.reasoning.append(reasoning)
            events.append(kinds.ReasoningChunk(reasoning))

    def _content_parts(self, parts: list[Any], events: list[StreamEvent]) -> None:
        """Mistral: ``[{type: text, text}, {type: thinking, thinking: [{type: text, text}]}]``."""
        for part in parts:
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

    def _tool_fragment(self, fragment: Mapping[str, Any], events: list[StreamEvent]) -> None:
        call_id = fragment.get("id") or ""
        index = fragment.get("index")
        if isinstance(index, int):
            key = self._at_index.get(index, index)
            held = self._calls.get(key)
            if held is not None and call_id and held.id and call_id != held.id and held.whole:
                # Another id at a used index, after whole arguments, starts another call
                # (Ollama numbers every call of a parallel batch 0): merged, the two ran as
                # one, named like the last, both JSON texts end to end. With its arguments
                # unfinished, it is the same call (vLLM's gpt-oss and Poolside give each
                # fragment a new id).
                key = self._at_index[index] = min(min(self._calls), 0) - 1
        elif self._last_key is None or (call_id and call_id != self._calls[self._last_key].id):
            # No index: a new id starts a call, anything else continues the last one.
            key = max(self._calls, default=-1) + 1
        else:
            key = self._last_key
        call = self._calls.get(key)
        if call is None:
            if self.max_calls is not None and len(self._calls) >= self.max_calls:
                raise too_many_calls(self.max_calls)
            call = self._calls[key] = _Call(position=len(self._calls))
        self._last_key = key
        function = fragment.get("function") or {}
        name = function.get("name") if isinstance(function, Mapping) else None
        arguments = function.get("arguments") if isinstance(function, Mapping) else None
        if call_id:
            call.id = str(call_id)  # set, never append: some servers repeat it every time
        if name:
            call.name = str(name)
        delta = arguments if isinstance(arguments, str) else ""
        if delta:
            call.arguments.append(delta)
        events.append(
            ToolCallChunk(
                index=call.position,
                call_id=call.id if call_id else "",
                name=str(name or ""),
                arguments_delta=delta,
            )
        )


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
