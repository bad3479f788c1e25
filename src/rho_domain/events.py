"""The event vocabulary: what a session reports, and what its trace records.

Every event has a stable ``kind`` tag (never a class name) used by serialisers. Events marked
``EPHEMERAL_KINDS`` (streaming deltas) go to listeners but not to the trace; all others are
persisted, and replaying them with ``State.apply`` rebuilds the session exactly.

A run's boundaries and messages are defined here; a model call's (``model_events``), a tool
call's (``tool_events``), a human's part and a call that did not run (``approval_events``),
what bends a run off its plan (``control_events``: compaction, interruptions, directives,
errors, retries, skipped stream pieces) and the user's plugged-in code's (``hook_events``)
beside it. This module joins them all into ``Event``, ``EVENT_TYPES`` and ``EVENTS_BY_KIND``:
import every event from here.

``approval_events``, ``control_events``, ``hook_events`` and the joined names are imported
when first asked for (PEP 562, ``__getattr__``): a run that goes as planned never builds their
classes (about 0.7 ms of CPU each). Code that dispatches over every kind reaches them by the
kind of the event in hand (``State.apply``), so a plain run's events never ask for them.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

import attrs

from rho_domain.event_view import SeedEventView
from rho_domain.lazy_names import lazy_names
from rho_domain.messages import Message, Usage
from rho_domain.model_events import LLMEnded as LLMEnded
from rho_domain.model_events import LLMStarted as LLMStarted
from rho_domain.model_events import TextDelta as TextDelta
from rho_domain.model_events import ToolCallDelta as ToolCallDelta
from rho_domain.model_events import UsageRecorded as UsageRecorded
from rho_domain.placement import Placement
from rho_domain.run_status import RunStatus
from rho_domain.shown_numbers import plain_numbers
from rho_domain.tool_events import ToolEnded as ToolEnded
from rho_domain.tool_events import ToolStarted as ToolStarted
from rho_domain.value_methods import value_eq, value_hash, value_repr

if TYPE_CHECKING:
    from rho_domain.approval_events import ApprovalRequested as ApprovalRequested
    from rho_domain.approval_events import ApprovalResolved as ApprovalResolved
    from rho_domain.approval_events import ToolBlocked as ToolBlocked
    from rho_domain.control_events import Compacted as Compacted
    from rho_domain.control_events import CompactStarted as CompactStarted
    from rho_domain.control_events import DirectiveApplied as DirectiveApplied
    from rho_domain.control_events import ErrorOccurred as ErrorOccurred
    from rho_domain.control_events import Interrupted as Interrupted
    from rho_domain.control_events import InterruptReason as InterruptReason
    from rho_domain.control_events import ModelRetrying as ModelRetrying
    from rho_domain.control_events import Placed as Placed
    from rho_domain.control_events import TraceNoted as TraceNoted
    from rho_domain.hook_events import HookActed as HookActed
    from rho_domain.hook_events import ListenerFailed as ListenerFailed
    from rho_domain.model_extras import ReasoningDelta as ReasoningDelta


@attrs.frozen(kw_only=True)
class RunStarted(SeedEventView):
    """A run began (``Session.run``).

    Attributes:
        at: Wall-clock time (the Clock port's ``now``), as on every event.
        run_id: The run's id, repeated on its ``RunEnded``.
        prompt: The user's prompt, or None when the run continues pending approvals.
        placement: Where the run's work goes (the executor's backend and sandbox id, none
            yet before a sandbox's first call); None in traces written before it was kept.
    """

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    kind: ClassVar[str] = "run_start"
    at: float
    run_id: str
    prompt: str | None
    placement: Placement | None = None


@attrs.frozen(kw_only=True)
class RunEnded(SeedEventView):
    """A run ended; always the last event of a run, whatever happened.

    Attributes:
        at: Wall-clock time.
        run_id: The id from ``RunStarted``.
        status: How it ended (``RunStatus``: completed, cancelled, max_turns, ...).
        text: The final answer (text of the last model turn), empty if there was none.
        usage: Tokens of this run only.
        session_usage: The session's total after this run.
        error: ``"Type: message"`` of the failure that ended the run, if any.
        output: The final answer parsed as JSON, when the agent has an ``output_schema``.
        placement: Where the run's work went (as on ``RunStarted``; a sandbox created during
            the run is named here); None in traces written before it was kept.
    """

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    kind: ClassVar[str] = "run_end"
    at: float
    run_id: str
    status: RunStatus
    text: str = ""
    usage: Usage = Usage()
    session_usage: Usage = Usage()
    error: str | None = None
    output: Any = attrs.field(default=None, converter=plain_numbers)
    placement: Placement | None = None


@attrs.frozen(kw_only=True)
class MessageAdded(SeedEventView):
    """A message joined the history.

    Attributes:
        at: Wall-clock time.
        message: The user, assistant or tool-result message, as the model will see it.
    """

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    kind: ClassVar[str] = "message"
    at: float
    message: Message


if TYPE_CHECKING:
    Event = (
        RunStarted
        | RunEnded
        | MessageAdded
        | LLMStarted
        | LLMEnded
        | TextDelta
        | ReasoningDelta
        | ToolCallDelta
        | ToolStarted
        | ToolEnded
        | ToolBlocked
        | ApprovalRequested
        | ApprovalResolved
        | CompactStarted
        | Compacted
        | UsageRecorded
        | Interrupted
        | DirectiveApplied
        | ErrorOccurred
        | ModelRetrying
        | TraceNoted
        | Placed
        | ListenerFailed
        | HookActed
    )
    EVENT_TYPES: tuple[type[Event], ...]
    EVENTS_BY_KIND: Mapping[str, type[Event]]

EPHEMERAL_KINDS: frozenset[str] = frozenset({"text_delta", "reasoning_delta", "tool_call_delta"})


def is_persistent(event: Event) -> bool:
    """True for events the trace records."""
    return event.kind not in EPHEMERAL_KINDS


def _join() -> None:
    """``Event``, ``EVENT_TYPES`` and ``EVENTS_BY_KIND``, every kind in them: built with the
    first of them asked for (the trace's reader, a serialiser's table)."""
    from rho_domain import approval_events as approval
    from rho_domain import control_events as control
    from rho_domain import hook_events as hook
    from rho_domain.model_extras import ReasoningDelta

    types: tuple[Any, ...] = (
        RunStarted, RunEnded, MessageAdded, LLMStarted, LLMEnded, TextDelta, ReasoningDelta,
        ToolCallDelta, ToolStarted, ToolEnded, approval.ToolBlocked, approval.ApprovalRequested,
        approval.ApprovalResolved, control.CompactStarted, control.Compacted, UsageRecorded,
        control.Interrupted, control.DirectiveApplied, control.ErrorOccurred,
        control.ModelRetrying, control.TraceNoted, hook.ListenerFailed, hook.HookActed,
        control.Placed,
    )  # fmt: skip
    globals().update(
        Event=functools.reduce(operator.or_, types),
        EVENT_TYPES=types,
        EVENTS_BY_KIND={t.kind: t for t in types},
    )


_named_later = lazy_names(
    __name__,
    {
        **dict.fromkeys(
            ("ApprovalRequested", "ApprovalResolved", "ToolBlocked"), "rho_domain.approval_events"
        ),
        **dict.fromkeys(
            (
                "CompactStarted", "Compacted", "DirectiveApplied", "ErrorOccurred", "Interrupted",
                "InterruptReason", "ModelRetrying", "TraceNoted", "Placed",
            ),
            "rho_domain.control_events",
        ),
        **dict.fromkeys(("HookActed", "ListenerFailed"), "rho_domain.hook_events"),
        "ReasoningDelta": "rho_domain.model_extras",
    },
)  # fmt: skip


def __getattr__(name: str) -> Any:
    """The kinds of ``approval_events``, ``control_events`` and ``hook_events`` and the joined
    names, imported when first asked for (the module docstring)."""
    if name in ("Event", "EVENT_TYPES", "EVENTS_BY_KIND"):
        _join()
        return globals()[name]
    return _named_later(name)
