"""``State`` as the design documents show it: the domain's State plus ``from_jsonl``, the
documents' mutators and OpenAI-format views.

It holds a domain ``State`` (``core``, the one the session's loop folds events into) and shows
its fields and methods unchanged (``forwarding.Forward``); it never subclasses it.

Every mutator builds the event the session itself would record (``MessageAdded``,
``Compacted``) and applies it, so State still changes only through ``apply`` and replaying
its events gives it back. The events written this way are kept (``written_events``) until a
``Session`` built on this State records them in its trace, and those written on a session's
own State go to its store at once: a conversation written by hand is persisted like one the
session made::

    state = State()
    state.add_user_message("What is in orders?")
    state.add_assistant_message("Three tables.")
    session = Session(agent, state=state, store=store)   # the two messages reach the trace

``messages`` stays the typed history the session uses; ``openai_messages`` is the same in the
Chat Completions format the documents describe.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from rho_domain import events as ev
from rho_domain import state as domain_state
from rho_domain.compaction import SUMMARY_PREFIX
from rho_domain.messages import (
    AssistantMessage,
    Message,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
    estimate_tokens,
    message_chars,
)
from rho_entry.forwarding import Forward

_CORE = "core"


class State:
    """``rho_domain.state.State`` with the design documents' methods (module docstring).

    ``State()`` starts an empty conversation; ``State(core)`` shows a domain State. Fields and
    methods of the domain State read through (``messages``, ``usage``, ``pending_calls``,
    ``apply``...); change it only through ``apply`` or the methods below.
    """

    __slots__ = ("core", "persist", "written_events")

    messages: Forward[list[Message]] = Forward(_CORE)
    usage: Forward[Usage] = Forward(_CORE)
    status: Forward[str] = Forward(_CORE)
    run_count: Forward[int] = Forward(_CORE)
    last_prompt_tokens: Forward[int | None] = Forward(_CORE)
    chars_since_prompt: Forward[int] = Forward(_CORE)
    pending_calls: Forward[tuple[ToolCall, ...]] = Forward(_CORE)
    approvals: Forward[dict[str, bool | None]] = Forward(_CORE)
    rejection_reasons: Forward[dict[str, str]] = Forward(_CORE)
    approval_reasons: Forward[dict[str, str]] = Forward(_CORE)
    waiting_children: Forward[dict[str, tuple[str, ToolCall]]] = Forward(_CORE)
    always_allowed: Forward[set[str]] = Forward(_CORE)
    asked_places: Forward[dict[str, str]] = Forward(_CORE)
    started_calls: Forward[set[str]] = Forward(_CORE)
    directive_offset: Forward[int] = Forward(_CORE)
    compactions: Forward[int] = Forward(_CORE)

    def __init__(self, core: domain_state.State | None = None) -> None:
        self.core = core if core is not None else domain_state.State()
        self.written_events: list[ev.Event] = []
        # set by the Session that owns this State: events written by hand then go to its store
        self.persist: Callable[[Sequence[ev.Event]], None] | None = None

    def __repr__(self) -> str:
        return f"State({self.core!r})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, State):
            return self.core == other.core
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable, as the domain State

    @classmethod
    def from_events(cls, events: Iterable[ev.Event], *, repair: bool = True) -> State:
        """``rho_domain.state.State.from_events``: replay ``events`` (with ``repair``, a call
        left without a result gets an interrupted result)."""
        return cls(domain_state.State.from_events(events, repair=repair))

    @classmethod
    def from_jsonl(cls, source: Path | str | bytes) -> State:
        """Replay a trace (a ``trace.jsonl`` path, or its bytes) into a State.

        Messages, usage, status, pending approvals and the directive offset come back exactly;
        a call left without a result gets an interrupted result. Raises ``StoreError``
        (``TraceFormatError`` for a line of an unknown format version) naming the file.
        """
        from rho_entry.config.stores import trace_events

        return cls.from_events(trace_events(source))

    def apply(self, event: ev.Event) -> None:
        """Fold one event into the state (``rho_domain.state.State.apply``)."""
        self.core.apply(event)

    def estimated_context_tokens(self, system_prompt: str = "") -> int:
        """``rho_domain.state.State.estimated_context_tokens``."""
        return self.core.estimated_context_tokens(system_prompt)

    def unanswered_calls(self) -> tuple[ToolCall, ...]:
        """Tool calls with no result that are not waiting for approval."""
        return self.core.unanswered_calls()

    def forget_recorded_approvals(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """``rho_domain.state.State.forget_recorded_approvals``."""
        return self.core.forget_recorded_approvals()

    def repair(self) -> tuple[ToolResultMessage, ...]:
        """``rho_domain.state.State.repair``."""
        return self.core.repair()

    def awaiting_decision(self) -> tuple[ToolCall, ...]:
        """``rho_domain.state.State.awaiting_decision``."""
        return self.core.awaiting_decision()

    def approval_digest(self, call: ToolCall) -> str:
        """``rho_domain.state.State.approval_digest``."""
        return self.core.approval_digest(call)

    def shown_call(self, call: ToolCall) -> str:
        """``rho_domain.state.State.shown_call``."""
        return self.core.shown_call(call)

    def check_digest(self, call: ToolCall, digest: str, *, place: str | None = None) -> None:
        """``rho_domain.state.State.check_digest``."""
        self.core.check_digest(call, digest, place=place)

    def settled_history(self) -> list[Message]:
        """``rho_domain.state.State.settled_history``."""
        return self.core.settled_history()

    def user_messages(self) -> tuple[UserMessage, ...]:
        """``rho_domain.state.State.user_messages``."""
        return self.core.user_messages()

    @property
    def total_input_tokens(self) -> int:
        """Input tokens of every model call of the session."""
        return self.usage.input_tokens

    @property
    def total_output_tokens(self) -> int:
        """Output tokens of every model call of the session."""
        return self.usage.output_tokens

    @property
    def openai_messages(self) -> list[dict[str, Any]]:
        """The history in the Chat Completions format (``role``, ``content``,
        ``tool_calls``, ``tool_call_id``), as the model server receives it."""
        return [message.chat() for message in self.messages]

    def estimate_tokens(self, system_prompt: str = "") -> int:
        """A rough size of the history and ``system_prompt`` (about 4 characters a token)."""
        chars = len(system_prompt) + sum(message_chars(m) for m in self.messages)
        return estimate_tokens(chars)

    def write_event(self, event: ev.Event) -> None:
        """Apply ``event`` and have it persisted: by the Session that owns this State, or,
        before there is one, by the Session built on it (see the module docstring)."""
        self.apply(event)
        if self.persist is not None:
            self.persist((event,))
        else:
            self.written_events.append(event)

    def add_user_message(self, content: str) -> None:
        """Add a user turn."""
        self._add(UserMessage(content))

    def add_assistant_message(self, content: str) -> None:
        """Add an answer of the model without tool calls."""
        self._add(AssistantMessage(text=content))

    def add_assistant_tool_calls(
        self, tool_calls: Iterable[ToolCall | Mapping[str, Any]], content: str = ""
    ) -> None:
        """Add a model turn that calls tools: ``ToolCall`` values or OpenAI ``tool_calls``
        entries (``{"id", "function": {"name", "arguments"}}``), with its text if any."""
        calls = tuple(_tool_call(c) for c in tool_calls)
        self._add(AssistantMessage(text=content, tool_calls=calls))

    def add_tool_results(self, results: Iterable[ToolResultMessage | Mapping[str, Any]]) -> None:
        """Add the results of the last tool calls: ``ToolResultMessage`` values or OpenAI
        tool messages (``{"tool_call_id", "content"}``)."""
        names = {
            c.id: c.name
            for m in self.messages
            if isinstance(m, AssistantMessage)
            for c in m.tool_calls
        }
        for result in results:
            if not isinstance(result, ToolResultMessage):
                call_id = str(result["tool_call_id"])
                result = ToolResultMessage(
                    call_id=call_id,
                    tool_name=str(result.get("name") or names.get(call_id, "")),
                    content=str(result.get("content", "")),
                    is_error=bool(result.get("is_error", False)),
                )
            self._add(result)

    def replace_with_summary(self, summary: str, recent_user_messages: Sequence[str] = ()) -> None:
        """Replace the history with ``summary`` followed by ``recent_user_messages`` (kept
        verbatim), as a manual compaction."""
        before = self.estimate_tokens()
        kept: tuple[Message, ...] = (
            UserMessage(content=SUMMARY_PREFIX + summary.strip(), origin="summary"),
            *(UserMessage(content=text, origin="recent") for text in recent_user_messages),
        )
        after = estimate_tokens(sum(message_chars(m) for m in kept))
        self.write_event(
            ev.Compacted(
                at=time.time(),
                trigger="manual",
                summary=summary,
                tokens_before=before,
                tokens_after=after,
                replaced_count=len(self.messages),
                messages=kept,
            )
        )

    def take_written_events(self) -> list[ev.Event]:
        """The events written by hand and not yet recorded by a Session (then forgotten)."""
        events, self.written_events = self.written_events, []
        return events

    def _add(self, message: Message) -> None:
        self.write_event(ev.MessageAdded(at=time.time(), message=message))


def _tool_call(call: ToolCall | Mapping[str, Any]) -> ToolCall:
    if isinstance(call, ToolCall):
        return call
    function = call.get("function", call)
    arguments = function.get("arguments", "{}")
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments)
    return ToolCall(str(call["id"]), str(function["name"]), arguments)
