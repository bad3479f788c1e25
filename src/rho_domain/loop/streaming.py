"""Consuming one model stream into an assistant message, reporting deltas as they arrive."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeAlias

import attrs

from rho_domain import events as ev
from rho_domain import model as m
from rho_domain.messages import (
    AssistantMessage,
    ThinkingBlock,
    ToolCall,
    Usage,
    estimate_tokens,
    message_chars,
)
from rho_domain.model import (
    ModelRequest,
    StreamFinished,
    TextChunk,
    ToolCallChunk,
    ToolCallReady,
    UsageReport,
)
from rho_domain.ports.clock import Clock
from rho_domain.ports.model import ChatModel
from rho_domain.value_methods import value_eq, value_repr

if TYPE_CHECKING:
    from rho_domain.model_extras import ReasoningChunk, RefusalChunk

# What a model that answers in text and tool calls streams. The other kinds (reasoning,
# refusals, thinking blocks, retry notices, warnings: ``model_extras``) are reached as
# ``m.Name`` only for a piece that is none of these, so such a stream never builds them.
_PLAIN = (TextChunk, ToolCallChunk, ToolCallReady, UsageReport, StreamFinished)

# A string, so that importing the loop does not join every kind of event (events.py).
Emit: TypeAlias = "Callable[[ev.Event], Awaitable[None]]"


@attrs.define
class Assembly:
    """What a stream produced so far; survives cancellation and errors (partial output)."""

    __repr__ = value_repr
    __eq__ = value_eq

    text: list[str] = attrs.field(factory=list)
    reasoning: list[str] = attrs.field(factory=list)
    refusal: list[str] = attrs.field(factory=list)
    tool_calls: list[ToolCall] = attrs.field(factory=list)
    thinking: list[ThinkingBlock] = attrs.field(factory=list)
    usage: Usage | None = None
    finish_reason: str | None = None
    finished: bool = False
    queue_wait: float | None = None
    started: bool = False  # the server sent something of the answer (it read the prompt)
    first_output_at: float | None = None  # monotonic time of the first piece of the answer
    retries: int = 0  # attempts the model adapter retried before answering

    @property
    def partial_text(self) -> str:
        """The answer text streamed so far."""
        return "".join(self.text)

    @property
    def partial_reasoning(self) -> str:
        """The reasoning streamed so far."""
        return "".join(self.reasoning)

    def message(self) -> AssistantMessage:
        """The assistant message assembled so far."""
        return AssistantMessage(
            text="".join(self.text),
            tool_calls=tuple(self.tool_calls),
            reasoning="".join(self.reasoning),
            refusal="".join(self.refusal),
            thinking=tuple(self.thinking),
        )

    def usage_or_estimate(self, request: ModelRequest) -> Usage:
        """The server's usage, or an estimate marked as such when it reported none."""
        if self.usage is not None:
            return self.usage
        prompt_chars = len(request.system) + sum(message_chars(m) for m in request.messages)
        return Usage(
            input_tokens=estimate_tokens(prompt_chars),
            output_tokens=estimate_tokens(message_chars(self.message())),
            estimated=True,
        )


async def consume_stream(
    model: ChatModel,
    request: ModelRequest,
    assembly: Assembly,
    emit: Emit,
    clock: Clock,
    heard: Callable[[], bool] = lambda: True,
) -> None:
    """Read the whole stream into ``assembly``, emitting delta events.

    The deltas (``TextDelta``, ``ReasoningDelta``, ``ToolCallDelta``) are built and emitted
    only while ``heard()`` (``Journal.heard``: someone listens; they change nothing else),
    asked at each one, so a listener attached mid-stream gets the deltas from then on.
    Raises what the model raises (``ModelError``); ``assembly`` keeps the partial output.
    Closes the stream on every exit path, including cancellation.
    """
    stream = model.stream(request)
    try:
        async for item in stream:
            if not assembly.started and _is_output(item):
                assembly.started = True
                assembly.first_output_at = clock.monotonic()
            match item:
                case TextChunk(text=text):  # most of a stream: no call on its way
                    assembly.text.append(text)
                    if heard():
                        await emit(ev.TextDelta(at=clock.now(), text=text))
                case ToolCallReady(call=call):
                    assembly.tool_calls.append(call)
                case UsageReport(usage=usage):
                    assembly.usage = usage
                case StreamFinished(finish_reason=reason):
                    assembly.finish_reason = reason
                    assembly.queue_wait = item.queue_wait
                    assembly.finished = True
                # a tool call's piece matches first: the classes after it are asked for only
                # for a piece that is none of the plain kinds
                case ToolCallChunk() | m.ReasoningChunk() | m.RefusalChunk():
                    _keep(assembly, item)
                    if heard():
                        await emit(_delta(item, clock.now()))
                case m.ThinkingReady(block=block):
                    assembly.thinking.append(block)
                case m.RetryNotice():
                    assembly.retries += 1
                    await emit(
                        ev.ModelRetrying(
                            at=clock.now(),
                            delay=item.delay,
                            reason=item.reason,
                            attempt=item.attempt,
                            attempts=item.attempts,
                            note=item.note,
                        )
                    )
                case m.StreamWarning(message=message):
                    await emit(
                        ev.TraceNoted(
                            at=clock.now(), name=item.name, message=message, detail=item.detail
                        )
                    )
    finally:
        aclose = getattr(stream, "aclose", None)
        if aclose is not None:
            await aclose()


def _is_output(item: object) -> bool:
    """True for a piece of the answer, False for a retry's notice or a warning (which come
    before any output); asks for their classes only for a piece that is none of ``_PLAIN``."""
    return isinstance(item, _PLAIN) or not isinstance(item, m.RetryNotice | m.StreamWarning)


def _keep(assembly: Assembly, item: ReasoningChunk | RefusalChunk | ToolCallChunk) -> None:
    """Add a streamed piece to ``assembly`` (a tool call's pieces arrive whole as
    ``ToolCallReady``)."""
    if isinstance(item, ToolCallChunk):
        return
    if isinstance(item, m.ReasoningChunk):
        assembly.reasoning.append(item.text)
    else:
        assembly.refusal.append(item.text)


def _delta(item: ReasoningChunk | RefusalChunk | ToolCallChunk, at: float) -> ev.Event:
    """The delta event a listener sees for a streamed piece (a refusal shows as text)."""
    if isinstance(item, ToolCallChunk):
        return ev.ToolCallDelta(
            at=at,
            index=item.index,
            call_id=item.call_id,
            name=item.name,
            arguments_delta=item.arguments_delta,
        )
    if isinstance(item, m.ReasoningChunk):
        return ev.ReasoningDelta(at=at, text=item.text)
    return ev.TextDelta(at=at, text=item.text)
