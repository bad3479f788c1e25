"""Consuming one model stream into an assistant message, reporting deltas as they arrive."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import attrs

from rho_domain import events as ev
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
    ReasoningChunk,
    RefusalChunk,
    RetryNotice,
    StreamFinished,
    StreamWarning,
    TextChunk,
    ThinkingReady,
    ToolCallChunk,
    ToolCallReady,
    UsageReport,
)
from rho_domain.ports.clock import Clock
from rho_domain.ports.model import ChatModel

Emit = Callable[[ev.Event], Awaitable[None]]


@attrs.define
class Assembly:
    """What a stream produced so far; survives cancellation and errors (partial output)."""

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
    model: ChatModel, request: ModelRequest, assembly: Assembly, emit: Emit, clock: Clock
) -> None:
    """Read the whole stream into ``assembly``, emitting delta events.

    Raises what the model raises (``ModelError``); ``assembly`` keeps the partial output.
    Closes the stream on every exit path, including cancellation.
    """
    stream = model.stream(request)
    try:
        async for item in stream:
            if not assembly.started and not isinstance(item, RetryNotice | StreamWarning):
                assembly.started = True
                assembly.first_output_at = clock.monotonic()
            match item:
                case TextChunk(text=text):
                    assembly.text.append(text)
                    await emit(ev.TextDelta(at=clock.now(), text=text))
                case ReasoningChunk(text=text):
                    assembly.reasoning.append(text)
                    await emit(ev.ReasoningDelta(at=clock.now(), text=text))
                case RefusalChunk(text=text):
                    assembly.refusal.append(text)
                    await emit(ev.TextDelta(at=clock.now(), text=text))
                case ToolCallChunk():
                    await emit(
                        ev.ToolCallDelta(
                            at=clock.now(),
                            index=item.index,
                            call_id=item.call_id,
                            name=item.name,
                            arguments_delta=item.arguments_delta,
                        )
                    )
                case ToolCallReady(call=call):
                    assembly.tool_calls.append(call)
                case ThinkingReady(block=block):
                    assembly.thinking.append(block)
                case UsageReport(usage=usage):
                    assembly.usage = usage
                case RetryNotice():
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
                case StreamWarning(message=message):
                    await emit(
                        ev.TraceNoted(
                            at=clock.now(), name=item.name, message=message, detail=item.detail
                        )
                    )
                case StreamFinished(finish_reason=reason):
                    assembly.finish_reason = reason
                    assembly.queue_wait = item.queue_wait
                    assembly.finished = True
    finally:
        aclose = getattr(stream, "aclose", None)
        if aclose is not None:
            await aclose()
