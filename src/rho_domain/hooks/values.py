"""What a hook is given and what it may answer, at each of the four points of the loop.

A hook is a plain callable, sync or async, that takes one value and answers one value:

============================  ====================  ==========================================
point                         it is given           it may answer
============================  ====================  ==========================================
``before_tool``               ``BeforeToolCall``    None / ``Allow()`` (no objection),
                                                    ``Deny(reason)``, ``RewriteArguments(...)``
``after_tool``                ``AfterToolCall``     None (unchanged), ``ReplaceResult(...)``
``before_model``              ``BeforeModelCall``   None (unchanged), ``ReplaceMessages(...)``
``after_run``                 ``AfterRun``          None (anything else is ignored)
============================  ====================  ==========================================

A hook can only take away, never grant: ``Allow`` is no objection, and the call still meets
the profile and the approval policy; a rewritten call meets them as if the model had made it.
Hooks of one point run in order, each given what the one before produced; the first denial
ends the chain. Every hook runs under a deadline (``Hooks.timeout``, default
``DEFAULT_HOOK_TIMEOUT``); one that raises, answers a wrong type or is late fails closed (see
``rho_domain.loop.hooks_applied``). Sync hooks run in a thread of their own so the deadline holds
(a late one is abandoned, not stopped); async hooks are cancelled at the deadline.

The ``Hooks`` an agent holds are in ``agent_hooks``: this module loads with the first hook
that runs, so an agent without hooks never builds these classes.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any, Literal, TypeAlias

import attrs

from rho_domain.messages import Message, ToolCall
from rho_domain.run import RunResult
from rho_domain.value_methods import value_eq, value_hash, value_repr


@attrs.frozen(kw_only=True)
class BeforeToolCall:
    """A tool call about to be judged and run.

    Attributes:
        session_id: The session making the call (a delegated child has its own).
        call: The call as the model made it (or as an earlier hook rewrote it).
        arguments: ``call.arguments`` parsed (empty when they are not a JSON object).
    """

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    session_id: str
    call: ToolCall
    arguments: Mapping[str, Any]

    @property
    def tool_name(self) -> str:
        """The tool called."""
        return self.call.name


@attrs.frozen
class Allow:
    """No objection: the call goes on to the profile and the approval policy."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash


@attrs.frozen
class Deny:
    """Refuse the call; the model reads ``reason`` in the call's result."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    reason: str


@attrs.frozen
class RewriteArguments:
    """Run the call with these arguments instead (judged and approved again as given).

    ``reason`` goes to the trace (the hook event), not to the model.
    """

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    arguments: Mapping[str, Any]
    reason: str = ""


@attrs.frozen(kw_only=True)
class AfterToolCall:
    """A tool call's result, before anything records it.

    Attributes:
        session_id: The session that made the call.
        call: The call that ran (as the before-tool hooks left it).
        content: The result the model would read.
        is_error: Whether it is an error result.
        metadata: What the tool reports beside it for the trace and UIs (the built-in tools:
            counts, paths, exit codes; a tool of yours: whatever it puts there).
    """

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    session_id: str
    call: ToolCall
    content: str
    is_error: bool
    metadata: Mapping[str, Any] = attrs.field(factory=dict)

    @property
    def tool_name(self) -> str:
        """The tool that ran."""
        return self.call.name


@attrs.frozen
class ReplaceResult:
    """The result the model reads and the trace stores instead (``is_error`` None: kept;
    ``metadata`` None: kept, so replace it too when it may hold what you remove)."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    content: str
    is_error: bool | None = None
    metadata: Mapping[str, Any] | None = None


@attrs.frozen(kw_only=True)
class BeforeModelCall:
    """The history about to be sent to the model.

    Attributes:
        session_id: The session calling the model.
        model: The model named in the request.
        messages: The history, oldest first (the system prompt is not part of it).
    """

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    session_id: str
    model: str
    messages: tuple[Message, ...]


def _messages(messages: Iterable[Message]) -> tuple[Message, ...]:
    return tuple(messages)


@attrs.frozen
class ReplaceMessages:
    """Send these messages instead; they become the session's history from then on (so a
    hook that adds a message should add it once)."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    messages: tuple[Message, ...] = attrs.field(converter=_messages)


@attrs.frozen(kw_only=True)
class AfterRun:
    """A run that ended, with its result (the run is over: nothing can change it)."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    session_id: str
    result: RunResult


BeforeToolAnswer: TypeAlias = Allow | Deny | RewriteArguments | None
AfterToolAnswer: TypeAlias = ReplaceResult | None
BeforeModelAnswer: TypeAlias = ReplaceMessages | None

BeforeToolHook: TypeAlias = Callable[
    [BeforeToolCall], BeforeToolAnswer | Awaitable[BeforeToolAnswer]
]
AfterToolHook: TypeAlias = Callable[[AfterToolCall], AfterToolAnswer | Awaitable[AfterToolAnswer]]
BeforeModelHook: TypeAlias = Callable[
    [BeforeModelCall], BeforeModelAnswer | Awaitable[BeforeModelAnswer]
]
AfterRunHook: TypeAlias = Callable[[AfterRun], object]


@attrs.frozen
class HookFailure:
    """A hook that gave no usable answer (it raised, was late or answered a wrong type): what
    ``rho_domain.loop.hooks_applied`` records and refuses in its place (fail closed)."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    outcome: Literal["failed", "timed_out"]
    reason: str
