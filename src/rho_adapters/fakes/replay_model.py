"""Replaying a recorded session: the model's answers, the tools' results, the humans' answers.

``ReplayModel.from_trace(path)`` answers each model call with what the recorded model said, in
order (each assistant message with its text, reasoning, tool calls and usage; each compaction
summary). ``RecordedTools`` keeps a registry's tools (so specs and policies are the real ones)
but answers every call with its recorded result. ``RecordedApprover`` gives the answers the
humans gave. ``load_recording`` (from ``rho_adapters.store``) reads a
session directory without locking it.

``rho_entry.replay`` puts these together to rerun a session and find where it diverges.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Collection, Iterable
from pathlib import Path

from rho_adapters.fakes.scripted_model import ScriptedModel, ScriptExhausted, Turn
from rho_adapters.store.recording import Recording, load_recording
from rho_domain import events as ev
from rho_domain.messages import AssistantMessage, ToolCall, Usage
from rho_domain.model import ModelRequest, StreamEvent
from rho_domain.ports.approver import ApprovalAnswer, ApprovalRequest, Approver
from rho_domain.tools.base import ToolContext, ToolOutput, error_output
from rho_domain.tools.prepared import PreparedCall
from rho_domain.tools.registry import ToolRegistry


def recorded_turns(events: Iterable[ev.Event]) -> list[Turn]:
    """One Turn per recorded model response, in order: assistant messages (with the usage of
    their call) and compaction summaries."""
    turns: list[Turn] = []
    usage: Usage | None = None
    for event in events:
        match event:
            case ev.LLMEnded(usage=call_usage):
                usage = call_usage
            case ev.MessageAdded(message=AssistantMessage() as message):
                turns.append(
                    Turn(
                        text=message.text,
                        reasoning=message.reasoning,
                        tool_calls=message.tool_calls,
                        thinking=message.thinking,
                        usage=usage,
                        chunk_size=max(len(message.text), 1),
                    )
                )
                usage = None
            case ev.Compacted(summary=summary):
                turns.append(Turn(text=summary, chunk_size=max(len(summary), 1)))
    return turns


class ReplayModel(ScriptedModel):
    """A ChatModel that says what a recorded model said, call by call.

    A call beyond the recording raises ``ScriptExhausted`` naming how many calls there were.
    ``requests`` records what the replayed session sent.
    """

    def __init__(self, turns: Iterable[Turn]) -> None:
        super().__init__(turns)
        self.recorded_calls = self.remaining

    @classmethod
    def from_trace(cls, path: str | Path) -> ReplayModel:
        """The model of the session stored at ``path`` (its directory or its trace.jsonl)."""
        return cls.from_events(load_recording(path).events)

    @classmethod
    def from_events(cls, events: Iterable[ev.Event]) -> ReplayModel:
        """The model of a session's persisted events."""
        return cls(recorded_turns(events))

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """See ``ChatModel.stream``."""
        if not self.remaining:
            self.requests.append(request)
            raise ScriptExhausted(
                f"the recorded session made {self.recorded_calls} model calls; the replay "
                f"asked for call {len(self.requests)}"
            )
        return super().stream(request)


class RecordedTools(ToolRegistry):
    """The tools of ``registry`` (same specs, same policies) answering each call with the
    result recorded for its id; a call with no recorded result gets an error result. Handlers
    are never called, except, when ``only`` names some tools, those of the other tools (which
    then run live)."""

    def __init__(
        self,
        registry: ToolRegistry,
        events: Iterable[ev.Event],
        *,
        only: Collection[str] | None = None,
    ) -> None:
        handlers = [h for n in registry.names if (h := registry.get(n)) is not None]
        super().__init__(handlers, output_limit=registry.output_limit)
        self.only = None if only is None else frozenset(only)
        self.results: dict[str, ToolOutput] = {
            e.call_id: ToolOutput(content=e.content, is_error=e.is_error, metadata=e.metadata)
            for e in events
            if isinstance(e, ev.ToolEnded)
        }

    async def dispatch(
        self, call: ToolCall | PreparedCall, ctx: ToolContext, *, timeout: float | None = None
    ) -> ToolOutput:
        """The recorded result of ``call`` (the tool does not run). A call to a tool this
        registry does not have is answered as the live registry answers it (unknown tool), and
        a tool outside ``only`` runs live."""
        if call.name not in self or (self.only is not None and call.name not in self.only):
            return await super().dispatch(call, ctx, timeout=timeout)
        if isinstance(call, PreparedCall):
            call = call.call
        recorded = self.results.get(call.id)
        if recorded is None:
            return error_output(f"[replay: no recorded result for call {call.id} ({call.name})]")
        return recorded


class RecordedApprover(Approver):
    """Gives, for each call, the answer a human gave in the recording (by call id); a call
    nobody answered there is not approved. ``requests`` records what was asked."""

    def __init__(self, events: Iterable[ev.Event]) -> None:
        self.answers = {
            e.call_id: ApprovalAnswer(approved=e.approved, always=e.always)
            for e in events
            if isinstance(e, ev.ApprovalResolved)
        }
        self.requests: list[ApprovalRequest] = []

    async def decide(self, request: ApprovalRequest) -> ApprovalAnswer:
        """See ``Approver.decide``."""
        self.requests.append(request)
        return self.answers.get(request.call.id, ApprovalAnswer(approved=False, note="unrecorded"))


__all__ = [
    "RecordedApprover",
    "RecordedTools",
    "Recording",
    "ReplayModel",
    "load_recording",
    "recorded_turns",
]
