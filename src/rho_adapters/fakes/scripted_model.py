"""Model fakes: ScriptedModel replays turns, FunctionModel calls your function.

A ``Turn`` describes one model response: text (streamed in chunks), reasoning, tool calls,
usage, and faults — a ``ModelError`` raised after the text (``error``), a stream that breaks
off (``cut``: raises TruncatedStream with the partial text), or one that never ends (``hang``,
for cancellation tests). Tool-call arguments may be a dict or raw text (malformed JSON).
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from typing import Any

import attrs

from rho_domain.errors import ModelError, TruncatedStream
from rho_domain.messages import ThinkingBlock, ToolCall, Usage
from rho_domain.model import (
    ModelRequest,
    ReasoningChunk,
    StreamEvent,
    StreamFinished,
    TextChunk,
    ThinkingReady,
    ToolCallChunk,
    ToolCallReady,
    UsageReport,
)
from rho_domain.ports.model import ChatModel
from rho_domain.value_methods import value_eq, value_hash, value_repr

_call_ids = itertools.count(1)


@attrs.frozen(kw_only=True)
class Turn:
    """One scripted model turn: what it streams, and how it fails or stops, if it does."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    text: str = ""
    reasoning: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    thinking: tuple[ThinkingBlock, ...] = ()  # signed blocks, as an Anthropic model sends them
    usage: Usage | None = None
    chunk_size: int = 8
    error: ModelError | None = None
    cut: bool = False
    hang: bool = False
    finish_reason: str | None = None


def call(
    name: str, arguments: Mapping[str, Any] | str = "{}", *, id: str | None = None
) -> ToolCall:
    """A tool call for a script; ``arguments`` as a dict, or raw (possibly broken) text."""
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return ToolCall(id=id or f"call_{next(_call_ids)}", name=name, arguments=raw)


def _usage(counts: Mapping[str, int]) -> Usage | None:
    return Usage(**counts) if counts else None  # type: ignore[arg-type]


def text(content: str, **usage: int) -> Turn:
    """A turn that answers with text; keyword arguments are Usage fields (input_tokens=...)."""
    return Turn(text=content, usage=_usage(usage))


def tools(*calls: ToolCall, text: str = "", **usage: int) -> Turn:
    """A turn that calls tools (with optional accompanying text)."""
    return Turn(text=text, tool_calls=calls, usage=_usage(usage))


class ScriptExhausted(ModelError):
    """The model was called more times than the script has turns."""


async def _play(turn: Turn) -> AsyncIterator[StreamEvent]:
    if turn.reasoning:
        yield ReasoningChunk(turn.reasoning)
    step = max(turn.chunk_size, 1)
    for start in range(0, len(turn.text), step):
        yield TextChunk(turn.text[start : start + step])
        await asyncio.sleep(0)
    if turn.hang:
        await asyncio.Event().wait()
    if turn.error is not None:
        turn.error.partial_text = turn.error.partial_text or turn.text
        raise turn.error
    if turn.cut:
        raise TruncatedStream("the stream ended without a finish_reason", partial_text=turn.text)
    for index, tool_call in enumerate(turn.tool_calls):
        yield ToolCallChunk(
            index=index,
            call_id=tool_call.id,
            name=tool_call.name,
            arguments_delta=tool_call.arguments,
        )
        yield ToolCallReady(tool_call)
    for block in turn.thinking:
        yield ThinkingReady(block)
    if turn.usage is not None:
        yield UsageReport(turn.usage)
    reason = turn.finish_reason or ("tool_calls" if turn.tool_calls else "stop")
    yield StreamFinished(reason)


class ScriptedModel(ChatModel):
    """Replays ``turns`` in order, one per call; records every request in ``requests``.

    A turn may also be a callable taking the ModelRequest and returning a Turn.
    """

    def __init__(self, turns: Iterable[Turn | Callable[[ModelRequest], Turn]]) -> None:
        self._turns = list(turns)
        self.requests: list[ModelRequest] = []
        self.closed = False

    @property
    def remaining(self) -> int:
        """How many scripted turns have not been played yet."""
        return len(self._turns)

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """See ``ChatModel.stream``."""
        self.requests.append(request)
        if not self._turns:
            raise ScriptExhausted(
                f"ScriptedModel has no turn left for call {len(self.requests)}; "
                "add a turn to the script"
            )
        turn = self._turns.pop(0)
        return _play(turn(request) if callable(turn) else turn)

    async def aclose(self) -> None:
        """See ``ChatModel.aclose``."""
        self.closed = True


TurnFunction = Callable[[ModelRequest], Turn | Awaitable[Turn]]


class FunctionModel(ChatModel):
    """Calls ``function(request)`` for each model call; it returns (or awaits to) a Turn."""

    def __init__(self, function: TurnFunction) -> None:
        self._function = function
        self.requests: list[ModelRequest] = []

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """See ``ChatModel.stream``."""
        self.requests.append(request)
        return self._stream(request)

    async def _stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        outcome = self._function(request)
        turn = await outcome if inspect.isawaitable(outcome) else outcome
        async for event in _play(turn):
            yield event

    async def aclose(self) -> None:
        """See ``ChatModel.aclose``."""
