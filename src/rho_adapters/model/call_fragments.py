"""Streamed tool-call fragments -> whole calls (the tool-call half of ``chunks.py``).

``CallFragments`` takes each ``tool_calls`` fragment of choice 0 and keeps the calls apart
by ``index`` and ``id``, absorbing the quirks servers send: an index from 1, missing, or the
same for every call of a batch (Ollama: a new ``id`` at a used index, after whole
arguments, starts a new call); an ``id`` missing (one is generated), new on every fragment
(vLLM's gpt-oss) or repeated with the name (set, never appended); ``arguments`` as a JSON
value (an object, a number) instead of a JSON text (kept as its text).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import attrs

from rho_adapters.model.answer_limits import too_many_calls
from rho_domain.messages import ToolCall
from rho_domain.model import ToolCallChunk, ToolCallReady
from rho_domain.value_methods import value_eq, value_repr

if TYPE_CHECKING:
    from rho_domain.model import StreamEvent


@attrs.define
class StreamedCall:
    """One tool call as its fragments arrive."""

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


class CallFragments:
    """The calls of one answer, assembled fragment by fragment (``max_calls`` None: any
    number)."""

    def __init__(self, *, max_calls: int | None = None) -> None:
        self.max_calls = max_calls
        self.calls: dict[int, StreamedCall] = {}
        self._last_key: int | None = None
        self._at_index: dict[int, int] = {}  # a wire index -> the key of its latest call

    def ready(self) -> list[StreamEvent]:
        """One ToolCallReady per call, in order; arguments kept raw (``""`` means ``{}``)."""
        ready: list[StreamEvent] = []
        for call in sorted(self.calls.values(), key=lambda c: c.position):
            arguments = "".join(call.arguments)
            ready.append(
                ToolCallReady(
                    ToolCall(
                        id=call.id or f"call_{os.urandom(12).hex()}",
                        name=call.name,
                        arguments=arguments if arguments.strip() else "{}",
                    )
                )
            )
        return ready

    @property
    def cut(self) -> bool:
        """A call's arguments are the start of a JSON text, not a whole one (``cut_short``;
        see ``ChunkAssembler.arguments_cut``); arguments no text could complete were written
        wrong, not cut, and the tool layer says what is wrong with them."""
        for call in self.calls.values():
            text = "".join(call.arguments).strip()
            if not text:
                continue
            try:
                json.loads(text)
            except ValueError:
                # with the first arguments that are not JSON (a one-shot's parse): oneshot26
                from rho_adapters.model.json_prefix import cut_short

                if cut_short(text):
                    return True
            except RecursionError:  # whole or not, too deep to tell: the tool layer refuses it
                continue
        return False

    def chars(self) -> int:
        """Characters of the names and arguments, for usage estimates."""
        return sum(len(c.name) + sum(map(len, c.arguments)) for c in self.calls.values())

    def add(self, fragment: Mapping[str, Any], events: list[StreamEvent]) -> None:
        """Apply one ``tool_calls`` fragment; its ``ToolCallChunk`` goes to ``events``. A call
        past ``max_calls`` is ``AnswerTooLong``."""
        call_id = fragment.get("id") or ""
        index = wire_index(fragment.get("index"))
        if index is not None:
            key = self._at_index.get(index, index)
            held = self.calls.get(key)
            if held is not None and call_id and held.id and call_id != held.id and held.whole:
                # Another id at a used index, after whole arguments, starts another call
                # (Ollama numbers every call of a parallel batch 0): merged, the two ran as
                # one, named like the last, both JSON texts end to end. With its arguments
                # unfinished, it is the same call (vLLM's gpt-oss and Poolside give each
                # fragment a new id).
                key = self._at_index[index] = min(min(self.calls), 0) - 1
        elif self._last_key is None or (call_id and call_id != self.calls[self._last_key].id):
            # No index: a new id starts a call, anything else continues the last one.
            key = max(self.calls, default=-1) + 1
        else:
            key = self._last_key
        call = self.calls.get(key)
        if call is None:
            if self.max_calls is not None and len(self.calls) >= self.max_calls:
                raise too_many_calls(self.max_calls)
            call = self.calls[key] = StreamedCall(position=len(self.calls))
        self._last_key = key
        function = fragment.get("function") or {}
        name = function.get("name") if isinstance(function, Mapping) else None
        arguments = function.get("arguments") if isinstance(function, Mapping) else None
        if call_id:
            call.id = str(call_id)  # set, never append: some servers repeat it every time
        if name:
            call.name = str(name)
        if arguments is not None and not isinstance(arguments, str):
            # arguments as a JSON value, not a JSON text (an object: Ollama's own API, some
            # proxies; a number or true): before, dropped, and the call ran with {}. Kept,
            # an object runs as sent and anything else is refused to the model by name.
            arguments = json.dumps(arguments)
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


def wire_index(value: Any) -> int | None:
    """An ``index`` as the number it stands for: an int, or a string of digits (``"0"``, what
    some proxies write; before, choice ``"0"`` was taken for another choice and its answer
    dropped), else None (missing, or not a number: ``feed`` reads it as no index)."""
    if value.__class__ is int:
        return int(value)
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) < 10:
        return int(value)
    return None
