"""The design documents' view of an event: ``type``, ``content`` and the ``tool_*`` fields.

The seeds describe one record type, ``AgentEvent(type, content, tool_name, tool_args,
tool_result, tool_metadata, usage)``; the reference implementation's also has
``tool_call_id``. rho-agent's events are typed values told apart by
``kind`` (``rho_domain.events``); every one of them also answers the seeds' names through this
mixin, computed from its own fields, so seed code such as::

    if event.type == "text":
        print(event.content, end="")

runs on the one event stream. ``type`` is the name seed 001 gives the event; ``seed_types``
holds every name the seeds (000 and 001) give it, since seed 000 named some moments
differently (``turn_complete`` for a run's end, ``cancelled``, ``compact_end``,
``api_call_complete``):

============================  ==================  ============================================
event (``kind``)              ``type``            also in ``seed_types``
============================  ==================  ============================================
``text_delta``                ``text``
``run_end``                   ``run_end``         ``turn_complete`` (status completed)
``llm_end``                   ``llm_end``         ``api_call_complete``
``compact_start``             ``compact_start``
``compact``                   ``compact``         ``compact_end``
``interruption``              ``interruption``    ``cancelled`` (reason cancelled)
every other event             its ``kind``
============================  ==================  ============================================

Fields an event has under the seeds' name (``ToolEnded.content``, ``.tool_name``, ``usage``
of ``RunEnded``/``LLMEnded``/``UsageRecorded``) are its own attributes; the others come from
here and are None (``content``: empty) where the seeds leave them unset.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rho_domain.messages import Usage

# kind -> the name seed 001 gives that event, where it differs
_SEED_TYPE: Mapping[str, str] = {"text_delta": "text"}

# kind -> further names seed 000 gave the same moment (before conditions below)
_ALSO: Mapping[str, tuple[str, ...]] = {
    "llm_end": ("api_call_complete",),
    "compact": ("compact_end",),
}


class SeedEventView:
    """Read-only properties giving an event the seeds' ``AgentEvent`` shape (see the module
    docstring). Mixed into every event class; it stores nothing (``__slots__ = ()``)."""

    __slots__ = ()

    @property
    def type(self) -> str:
        """The name seed 001 gives this event (``text`` for a text delta, else ``kind``)."""
        kind: str = getattr(self, "kind")  # noqa: B009 - a ClassVar of every event class
        return _SEED_TYPE.get(kind, kind)

    @property
    def seed_types(self) -> frozenset[str]:
        """Every name the seeds give this event: ``type`` plus seed 000's for the same moment."""
        names = {self.type, *_ALSO.get(self.type, ())}
        if self.type == "run_end" and str(getattr(self, "status", "")) == "completed":
            names.add("turn_complete")
        if self.type == "interruption" and getattr(self, "reason", "") == "cancelled":
            names.add("cancelled")
        return frozenset(names)

    @property
    def content(self) -> str:
        """The event's text as the seeds show it: the text fragment, the message, the prompt
        or final answer of a run, the reason a call was blocked, an error's message, a
        compaction's ``Compacted: A -> B tokens`` (its trigger when it starts), where an
        interruption happened; else empty."""
        return _content(self)

    @property
    def tool_name(self) -> str | None:
        """The tool of a call event (``tool_start``, ``tool_blocked``, ``approval_*``,
        ``tool_call_delta``), else None."""
        call = getattr(self, "call", None)
        if call is not None:
            return str(call.name)
        if getattr(self, "kind", "") == "tool_call_delta":
            return str(getattr(self, "name", ""))
        return None

    @property
    def tool_call_id(self) -> str | None:
        """The id of the call an event is about (``tool_start``, ``tool_end``,
        ``tool_blocked``, ``approval_*``, ``tool_call_delta``: the reference implementation's
        ``AgentEvent.tool_call_id``, which pairs a call's start with its end), else None
        (also for a hook that ran on no call, and a streamed fragment before its id came)."""
        call = getattr(self, "call", None)
        call_id = call.id if call is not None else getattr(self, "call_id", None)
        return str(call_id) if call_id else None

    @property
    def tool_args(self) -> Mapping[str, Any] | None:
        """The parsed JSON arguments of a call event (``tool_start``, ``tool_blocked``,
        ``approval_requested``); ``{}`` when the model's arguments are not a JSON object;
        None for other events."""
        call = getattr(self, "call", None)
        if call is None:
            return None
        try:
            value = json.loads(call.arguments or "{}")
        except (ValueError, RecursionError):  # not JSON, or nested past the parser
            return {}
        return value if isinstance(value, dict) else {}

    @property
    def tool_result(self) -> str | None:
        """What the model reads of a finished call (``tool_end``), else None."""
        if getattr(self, "kind", "") != "tool_end":
            return None
        return str(getattr(self, "content", ""))

    @property
    def tool_metadata(self) -> Mapping[str, Any] | None:
        """A finished call's metadata (exit code, truncation...; ``tool_end``), else None."""
        if getattr(self, "kind", "") != "tool_end":
            return None
        metadata: Mapping[str, Any] = getattr(self, "metadata", {})
        return metadata

    @property
    def usage(self) -> Usage | None:
        """Token usage, on the events that carry it (``run_end``: the run's, ``llm_end`` and
        ``usage``: one model call's), else None."""
        return None


def _content(event: object) -> str:
    kind = getattr(event, "kind", "")
    if kind == "run_start":
        return str(getattr(event, "prompt", None) or "")
    if kind in ("run_end", "text_delta", "reasoning_delta", "directive"):
        return str(getattr(event, "text", ""))
    if kind == "message":
        message = getattr(event, "message", None)
        text = getattr(message, "content", None)
        return str(text if text is not None else getattr(message, "text", ""))
    if kind in ("error", "retry", "trace"):
        return str(getattr(event, "message", ""))
    if kind in ("tool_blocked", "approval_requested"):
        return str(getattr(event, "reason", ""))
    if kind == "compact_start":
        return str(getattr(event, "trigger", ""))
    if kind == "compact":
        before, after = getattr(event, "tokens_before", 0), getattr(event, "tokens_after", 0)
        return f"Compacted: {before} -> {after} tokens"
    if kind == "interruption":
        detail = getattr(event, "detail", "")
        reason = str(getattr(event, "reason", ""))
        return f"{reason} {detail}".strip()
    if kind in ("llm_start", "llm_end"):
        return str(getattr(event, "model", ""))
    if kind == "tool_call_delta":
        return str(getattr(event, "arguments_delta", ""))
    return ""
