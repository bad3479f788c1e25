"""Events about the user's code plugged into the loop: listeners that failed, hooks that acted.

They live beside ``rho_domain.events`` (which joins them to ``Event``) because they describe the
user's code, not the agent's work. Both are persisted: a trace says when a listener broke and
what a hook changed or refused, and it never holds what a hook removed (a hook's event carries
its reason, never the content it replaced).

A run whose listeners and hooks never fail nor act emits neither, so this module is imported
with the first one (``rho_domain.events`` names them lazily); ``HookPoint`` and
``HookOutcome`` are types the hooks' code names under ``TYPE_CHECKING``.
"""

from __future__ import annotations

from typing import ClassVar, Literal

import attrs

from rho_domain.event_view import SeedEventView
from rho_domain.messages import Message
from rho_domain.value_methods import value_eq, value_hash, value_repr

HookPoint = Literal["before_tool", "after_tool", "before_model", "after_run"]
"""Where a hook runs: before a tool call, after it, before a model call, after a run."""

HookOutcome = Literal["denied", "rewrote", "failed", "timed_out"]
"""What a hook did that the trace records (a hook that changes nothing leaves no event)."""


@attrs.frozen(kw_only=True)
class ListenerFailed(SeedEventView):
    """An ``on_event`` listener raised; the run went on without its answer for that event.

    Reported once per listener and session (with a log record on ``rho_domain.loop.journal``);
    the listener is still called for later events, and its later failures are not reported.

    Attributes:
        at: Wall-clock time.
        listener: The listener's name (module and qualified name, else its ``repr``).
        event_kind: The ``kind`` of the event it failed on.
        error_type: The exception's class name.
        message: The exception's message.
    """

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    kind: ClassVar[str] = "listener_error"
    at: float
    listener: str
    event_kind: str
    error_type: str
    message: str


@attrs.frozen(kw_only=True)
class HookActed(SeedEventView):
    """A hook denied or rewrote something, or failed (``rho_domain.hooks``).

    A failed or timed-out hook is answered as a denial of what it guarded (fail closed): a
    tool call is refused, a tool's result withheld, a model call not made. The rewritten
    content itself is where it belongs (the tool call in ``tool_start``, the result in
    ``tool_end`` and its message); only a ``before_model`` rewrite carries ``messages``, the
    history from then on, which ``State`` adopts as compaction's does.

    Attributes:
        at: Wall-clock time.
        point: Where the hook ran (``HookPoint``).
        hook: The hook's name (module and qualified name).
        outcome: ``denied``, ``rewrote``, ``failed`` (raised, or answered a wrong type) or
            ``timed_out`` (past the hooks' deadline).
        call_id: The tool call's id (tool points), else empty.
        reason: The hook's reason for a denial, or what went wrong; never the content.
        messages: For a ``before_model`` rewrite: the history the model is sent, and the
            session's history from then on.
    """

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    kind: ClassVar[str] = "hook"
    at: float
    point: HookPoint
    hook: str
    outcome: HookOutcome
    call_id: str = ""
    reason: str = ""
    messages: tuple[Message, ...] | None = None
