"""A durable run's model calls and tool calls as steps (``ports.durable.DurableSteps``).

A model call is one step whose result is everything its stream produced: on the first
execution the stream is passed on as it arrives (deltas reach listeners live) and recorded
once it ends; when the run is executed again after its worker died, a recorded call is
answered from the record and never sent to the server again. A tool call is one step too:
re-run after a death only when its handler says it reads (``ToolPolicy.read_only``), else
answered ``interrupted`` as ``--resume`` answers a call a dead process left open.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence

import attrs

from rho_domain.errors import ContextLengthExceeded, ModelError
from rho_domain.model import (
    ModelRequest,
    ReasoningChunk,
    RefusalChunk,
    StreamEvent,
    TextChunk,
)
from rho_domain.not_run import DIED
from rho_domain.ports.durable import DurableSteps
from rho_domain.ports.model import ChatModel
from rho_domain.tools.base import ToolOutput, ToolPolicy
from rho_domain.value_methods import value_eq, value_hash, value_repr

_END = object()


@attrs.frozen
class RecordedStream:
    """What one model call streamed, and the failure that ended it (type name, message).

    ``events`` is the smallest stream that replays the call (``joined_fragments``): consecutive
    fragments of one kind are one fragment, since the loop builds the message from their
    text alone (a fragment is never persisted: listeners saw them live the first time). A
    50-delta answer is then 3 events to serialize instead of 52: the step's checkpoint
    pickles a fraction of the objects."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    events: tuple[StreamEvent, ...]
    failure: tuple[str, str] | None = None


_JOINED = (TextChunk, ReasoningChunk, RefusalChunk)


def joined_fragments(events: Sequence[StreamEvent]) -> tuple[StreamEvent, ...]:
    """``events`` with each run of consecutive text, reasoning or refusal fragments joined
    into one fragment of their text (every other event kept, in order)."""
    kept: list[StreamEvent] = []
    for kind, group in itertools.groupby(events, key=type):
        if kind in _JOINED:
            kept.append(kind("".join(e.text for e in group)))  # type: ignore[union-attr]
        else:
            kept.extend(group)
    return tuple(kept)


class SteppedModel(ChatModel):
    """``model``'s streams, each one step of ``steps`` (named ``model``)."""

    def __init__(self, model: ChatModel, steps: DurableSteps) -> None:
        self.model = model
        self.steps = steps

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """The live stream on a first execution, the recorded one on a later one. A failure
        recorded by the step is raised again as a ``ModelError`` with its message."""
        live: asyncio.Queue[object] = asyncio.Queue()
        passed = False
        caught: list[ModelError] = []

        async def call() -> RecordedStream:
            seen: list[StreamEvent] = []
            try:
                async for item in self.model.stream(request):
                    seen.append(item)
                    live.put_nowait(item)
            except ModelError as exc:
                caught.append(exc)
                return RecordedStream(joined_fragments(seen), (type(exc).__name__, str(exc)))
            return RecordedStream(joined_fragments(seen))

        step = asyncio.ensure_future(self.steps.once("model", call))
        step.add_done_callback(lambda _: live.put_nowait(_END))
        try:
            while (item := await live.get()) is not _END:
                passed = True
                yield item  # type: ignore[misc]  # only StreamEvents are put besides _END
            recorded = step.result()
        finally:
            if not step.done():
                step.cancel()
        if not passed:
            for event in recorded.events:
                yield event
        if recorded.failure is not None:
            if caught:
                raise caught[0]  # this execution's own error, with its partial text and type
            raise _recorded_failure(*recorded.failure)

    async def aclose(self) -> None:
        """Close the wrapped model."""
        await self.model.aclose()


def _recorded_failure(kind: str, message: str) -> ModelError:
    """The error a recorded model call failed with, again: an overflow stays an overflow (the
    loop compacts on it, as the first execution did); any other is a ``ModelError``."""
    if kind == ContextLengthExceeded.__name__:
        return ContextLengthExceeded(message, status=400)
    return ModelError(f"{kind}: {message}")


async def interrupted_output() -> ToolOutput:
    """The result of a write a dead worker may have started: not done again."""
    return ToolOutput(content=DIED, is_error=True, metadata={"interrupted": True})


async def tool_step(
    steps: DurableSteps,
    run: Callable[[], Awaitable[ToolOutput]],
    *,
    policy: ToolPolicy | None,
    began_before: bool,
) -> ToolOutput:
    """One tool call's output as a step. ``began_before``: the trace already held its
    ``tool_start`` (an earlier execution of the run began it and died before the step's result
    was recorded, or recorded it): the call is run again only when ``policy`` (its handler's)
    says it reads, else answered ``interrupted``. An unknown tool (no policy) is answered as
    before, by ``run``."""
    rerun = not began_before or policy is None or policy.read_only
    return await steps.once("tool", run if rerun else interrupted_output)
