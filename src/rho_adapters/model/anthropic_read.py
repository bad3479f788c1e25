"""The Anthropic Messages API stream, read: SSE events into the domain's stream events.

``Assembler.feed(name, data)`` takes one decoded event (``message_start``,
``content_block_start/delta/stop``, ``message_delta``, ``ping``, ``error``) and returns the
events it completes (text and reasoning deltas, whole tool calls, whole thinking blocks);
``finish()`` returns what the end of the stream completes, the stop reason in the OpenAI
vocabulary (``tool_use`` -> ``tool_calls``, ``max_tokens`` -> ``length``) last. The
``final_answer`` tool's input comes back as the turn's text. A malformed event raises
``ModelProtocolError``; ``partial_text`` is the text streamed so far. Pure: no I/O.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import attrs

from rho_adapters.model.answer_limits import too_many_calls
from rho_adapters.model.chunks import loads
from rho_adapters.model.counts import token_count
from rho_domain.errors import ModelProtocolError
from rho_domain.messages import ThinkingBlock, ToolCall, Usage
from rho_domain.model import (
    ReasoningChunk,
    StreamEvent,
    StreamFinished,
    TextChunk,
    ThinkingReady,
    ToolCallChunk,
    ToolCallReady,
    UsageReport,
)
from rho_domain.value_methods import value_eq, value_repr

_STOP_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "tool_use": "tool_calls",
    "refusal": "content_filter",
}


@attrs.define
class _Block:
    __repr__ = value_repr
    __eq__ = value_eq

    kind: str
    position: int = 0
    id: str = ""
    name: str = ""
    json: list[str] = attrs.field(factory=list)  # tool input, or thinking text
    signature: str = ""
    data: str = ""  # a redacted_thinking block's encrypted reasoning


class Assembler:
    """One stream's events assembled (see the module docstring). A tool call past
    ``max_calls`` (None: any number) is ``AnswerTooLong``."""

    def __init__(
        self, *, final_tool: str = "", wrapped: bool = False, max_calls: int | None = None
    ) -> None:
        self.final_tool, self.wrapped, self.max_calls = final_tool, wrapped, max_calls
        self.text: list[str] = []
        self.blocks: dict[int, _Block] = {}
        self.calls = 0
        self.stop_reason: str | None = None
        self.done = False
        self.usage: dict[str, int] = {}

    @property
    def partial_text(self) -> str:
        """The text streamed so far (kept by an error that ends the stream)."""
        return "".join(self.text)

    def feed(self, name: str, data: Any) -> list[StreamEvent]:
        """The events one decoded SSE event completes; ``ModelProtocolError`` if malformed."""
        if not isinstance(data, Mapping):
            raise ModelProtocolError(f"unexpected event data: {str(data)[:200]}")
        kind = data.get("type") or name
        if kind == "error" or name == "error":
            from rho_adapters.model.error_bodies import stream_error

            raise stream_error(data, partial_text=self.partial_text)
        if kind == "message_start":
            self._usage((data.get("message") or {}).get("usage"))
        elif kind == "content_block_start":
            return self._start(int(data.get("index") or 0), data.get("content_block") or {})
        elif kind == "content_block_delta":
            return self._delta(int(data.get("index") or 0), data.get("delta") or {})
        elif kind == "message_delta":
            self.stop_reason = (data.get("delta") or {}).get("stop_reason") or self.stop_reason
            self._usage(data.get("usage"))
        elif kind == "message_stop":
            self.done = True
        return []  # ping, content_block_stop and unknown events carry nothing to show

    def _start(self, index: int, block: Mapping[str, Any]) -> list[StreamEvent]:
        kind = str(block.get("type") or "")
        if kind == "tool_use" and self.final_tool and block.get("name") == self.final_tool:
            self.blocks[index] = _Block("final_answer")  # its input is the answer: text
            return []
        if kind == "tool_use":
            b = self._call(index, str(block.get("id") or ""), str(block.get("name") or ""))
            return [ToolCallChunk(index=b.position, call_id=b.id, name=b.name)]
        # A thinking block's position counts the calls before it (interleaved thinking).
        self.blocks[index] = _Block(
            kind,
            self.calls,
            signature=str(block.get("signature") or ""),
            data=str(block.get("data") or ""),
        )
        initial = block.get("text") if kind == "text" else block.get("thinking")
        return self._delta(index, {"type": f"{kind}_delta", kind: initial}) if initial else []

    def _delta(self, index: int, delta: Mapping[str, Any]) -> list[StreamEvent]:
        kind = delta.get("type")
        if kind == "text_delta" and delta.get("text"):
            self.text.append(delta["text"])
            return [TextChunk(delta["text"])]
        if kind == "thinking_delta" and delta.get("thinking"):
            self.blocks.setdefault(index, _Block("thinking", self.calls)).json.append(
                delta["thinking"]
            )
            return [ReasoningChunk(delta["thinking"])]
        if kind == "signature_delta":
            block = self.blocks.setdefault(index, _Block("thinking", self.calls))
            block.signature += str(delta.get("signature") or "")
            return []
        if kind == "input_json_delta" and self.blocks.get(index, _Block("")).kind == "final_answer":
            self.blocks[index].json.append(str(delta.get("partial_json") or ""))
            return []
        if kind == "input_json_delta":
            block = self.blocks.get(index) or self._call(index, "", "")  # its start never came
            part = str(delta.get("partial_json") or "")
            if part:
                block.json.append(part)
                return [ToolCallChunk(index=block.position, arguments_delta=part)]
        return []  # citations_delta: nothing the loop shows

    def _call(self, index: int, call_id: str, name: str) -> _Block:
        """A new tool call's block at ``index``; ``AnswerTooLong`` past ``max_calls``."""
        if self.max_calls is not None and self.calls >= self.max_calls:
            raise too_many_calls(self.max_calls)
        block = self.blocks[index] = _Block("tool_use", self.calls, call_id, name)
        self.calls += 1
        return block

    def _usage(self, usage: Any) -> None:
        if isinstance(usage, Mapping):
            counts = {k: token_count(v) for k, v in usage.items()}
            self.usage.update({k: v for k, v in counts.items() if v is not None})

    def finish(self) -> list[StreamEvent]:
        """What the end of the stream completes, ``StreamFinished`` last."""
        ready: list[StreamEvent] = [
            ThinkingReady(
                ThinkingBlock(
                    kind="redacted_thinking" if block.kind == "redacted_thinking" else "thinking",
                    thinking="".join(block.json),
                    signature=block.signature,
                    data=block.data,
                    after_calls=block.position,
                )
            )
            for _, block in sorted(self.blocks.items())
            if block.kind in ("thinking", "redacted_thinking")
        ]
        ready.extend(self._final_answer())
        for block in sorted(self.blocks.values(), key=lambda b: b.position):
            if block.kind == "tool_use":
                arguments = "".join(block.json).strip() or "{}"
                ready.append(
                    ToolCallReady(ToolCall(id=block.id, name=block.name, arguments=arguments))
                )
        u = self.usage
        cached = u.get("cache_read_input_tokens", 0)
        ready.append(
            UsageReport(
                Usage(
                    input_tokens=u.get("input_tokens", 0)
                    + cached
                    + u.get("cache_creation_input_tokens", 0),
                    output_tokens=u.get("output_tokens", 0),
                    cached_tokens=cached,
                    estimated=not u,
                )
            )
        )
        reason = self.stop_reason or "stop"
        if reason == "tool_use" and not any(b.kind == "tool_use" for b in self.blocks.values()):
            reason = "end_turn"  # only the final tool was called: the turn answered
        ready.append(StreamFinished(_STOP_REASONS.get(reason, reason)))
        return ready

    def _final_answer(self) -> list[StreamEvent]:
        """The final tool's input as the turn's text (unwrapped when it was wrapped)."""
        out: list[StreamEvent] = []
        for _, block in sorted(self.blocks.items()):
            if block.kind != "final_answer":
                continue
            text = "".join(block.json).strip() or "{}"
            if self.wrapped:
                try:
                    value = loads(text) if text.startswith("{") else None
                except ValueError:  # not JSON (or nested past the parser): the text as it is
                    value = None
                if isinstance(value, dict) and "answer" in value:
                    text = json.dumps(value["answer"])
            self.text.append(text)
            out.append(TextChunk(text))
        return out
