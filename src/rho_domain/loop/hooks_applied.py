"""Hooks applied in the loop: each point's hooks in order, under the deadline, recorded.

What a hook produces is what the session records, so the trace holds the hook's version and
never the one it replaced: a rewritten call is the call of ``tool_start`` (and what the
profile and the approval policy judge), a replaced result is the content of ``tool_end`` and
of the result message, replaced messages are the history from then on (a ``hook`` event
carrying them). Each denial, rewrite or failure is a ``hook`` event (``HookActed``) with the
hook's reason, never the content it removed.

Fail closed: a hook that raises, answers a wrong type or misses the deadline refuses what it
guarded, and the run goes on where it can:

- ``before_tool``: the call is denied (the model reads why) and the batch goes on;
- ``after_tool``: the result is withheld (the model reads an error result instead);
- ``before_model``: the model call is not made; nothing else can follow, so the run ends
  ``error`` (``HookFailed``) with the session intact;
- ``after_run``: the run is over; the failure is only recorded.

Only ``asyncio.CancelledError`` from the session's own cancellation propagates.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

import attrs

from rho_domain import events as ev
from rho_domain.errors import HookFailed, RhoError
from rho_domain.hooks.agent_hooks import Hooks
from rho_domain.loop.hook_calls import ask_hook
from rho_domain.loop.journal import Journal
from rho_domain.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from rho_domain.not_run import CHANGED_SINCE_ASKED, denied
from rho_domain.plugged import plugged_name
from rho_domain.run import RunResult
from rho_domain.tools.base import ToolOutput
from rho_domain.tools.registry import parse_arguments
from rho_domain.value_methods import value_eq, value_hash, value_repr

if TYPE_CHECKING:
    from rho_domain.hook_events import HookPoint
    from rho_domain.hooks.values import HookFailure


def _wrong(answer: object, expected: str) -> HookFailure:
    from rho_domain.hooks.values import HookFailure

    return HookFailure("failed", f"answered {type(answer).__name__}, expected {expected}")


async def _record(
    journal: Journal,
    point: HookPoint,
    hook: object,
    outcome: Literal["denied", "rewrote", "failed", "timed_out"],
    *,
    call_id: str = "",
    reason: str = "",
    messages: tuple[Message, ...] | None = None,
) -> None:
    from rho_domain.hook_events import HookActed  # with the first hook that acts

    await journal.emit(
        HookActed(
            at=journal.clock.now(),
            point=point,
            hook=plugged_name(hook),
            outcome=outcome,
            call_id=call_id,
            reason=reason,
            messages=messages,
        )
    )


def _refusal(hook: object, failure: HookFailure) -> str:
    """What the model reads when a hook failed: the call was not run, and why."""
    return f"hook {plugged_name(hook)} {failure.outcome.replace('_', ' ')} ({failure.reason})"


@attrs.frozen(kw_only=True)
class HookedBatch:
    """A batch after its before-tool hooks: the calls to judge and run (rewritten where a hook
    rewrote them), and the calls refused, each with the reason the model reads."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    calls: tuple[ToolCall, ...]
    denied: tuple[tuple[ToolCall, str], ...] = ()


async def let_through(
    hooks: Hooks, journal: Journal, calls: Sequence[ToolCall], *, resumed: bool
) -> Sequence[ToolCall]:
    """The calls of a batch the before-tool hooks let through (rewritten where they rewrote
    them); the ones they refused are answered now, before the others run. A ``resumed``
    batch's calls waited for approval: one a hook changed since is refused, not run as other
    than asked about."""
    refused: list[tuple[ToolCall, str]] = []
    kept = list(calls)
    if hooks.before_tool:
        batch = await before_tools(hooks, journal, calls)
        refused, kept = list(batch.denied), list(batch.calls)
    if resumed:
        asked = {call.id: call for call in calls}
        changed = [c for c in kept if c.arguments != asked[c.id].arguments]
        kept = [c for c in kept if c not in changed]
        refused += [(asked[c.id], CHANGED_SINCE_ASKED) for c in changed]
    for call, reason in refused:
        await journal.emit(
            ev.ToolBlocked(at=journal.clock.now(), call=call, by="hook", reason=reason)
        )
        await journal.result(call, denied(reason), True)
    return kept


async def before_tools(hooks: Hooks, journal: Journal, calls: Sequence[ToolCall]) -> HookedBatch:
    """Ask the before-tool hooks about each call, in the model's order."""
    if not hooks.before_tool:
        return HookedBatch(calls=tuple(calls))
    kept: list[ToolCall] = []
    denied: list[tuple[ToolCall, str]] = []
    for call in calls:
        outcome = await _before_tool(hooks, journal, call)
        if isinstance(outcome, str):
            denied.append((call, outcome))
        else:
            kept.append(outcome)
    return HookedBatch(calls=tuple(kept), denied=tuple(denied))


async def _before_tool(hooks: Hooks, journal: Journal, call: ToolCall) -> ToolCall | str:
    """The call to run, or the reason it is refused."""
    from rho_domain.hooks.values import (
        Allow,
        BeforeToolCall,
        Deny,
        HookFailure,
        RewriteArguments,
    )

    current = call
    for hook in hooks.before_tool:
        try:
            arguments = dict(parse_arguments(current))
        except RhoError:
            arguments = {}
        given = BeforeToolCall(session_id=journal.session_id, call=current, arguments=arguments)
        answer = await ask_hook(hook, given, hooks.deadline)
        if isinstance(answer, RewriteArguments):
            try:
                text = json.dumps(dict(answer.arguments), ensure_ascii=False, allow_nan=False)
            except (TypeError, ValueError) as exc:
                answer = HookFailure("failed", f"rewrote the arguments into no JSON object: {exc}")
            else:
                current = attrs.evolve(current, arguments=text)
                await _record(
                    journal, "before_tool", hook, "rewrote", call_id=call.id, reason=answer.reason
                )
                continue
        if answer is None or isinstance(answer, Allow):
            continue
        if isinstance(answer, Deny):
            await _record(
                journal, "before_tool", hook, "denied", call_id=call.id, reason=answer.reason
            )
            return f"{answer.reason} (hook {plugged_name(hook)})"
        failure = (
            answer
            if isinstance(answer, HookFailure)
            else _wrong(answer, "None, Allow, Deny or RewriteArguments")
        )
        await _record(
            journal, "before_tool", hook, failure.outcome, call_id=call.id, reason=failure.reason
        )
        return f"{_refusal(hook, failure)}; hooks fail closed"
    return current


async def after_tool(
    hooks: Hooks, journal: Journal, call: ToolCall, output: ToolOutput
) -> ToolOutput:
    """The output the model reads and the trace stores, after the after-tool hooks."""
    if not hooks.after_tool:
        return output
    from rho_domain.hooks.values import (  # with the first hook
        AfterToolCall,
        HookFailure,
        ReplaceResult,
    )

    for hook in hooks.after_tool:
        given = AfterToolCall(
            session_id=journal.session_id,
            call=call,
            content=output.content,
            is_error=output.is_error,
            metadata=dict(output.metadata),
        )
        answer = await ask_hook(hook, given, hooks.deadline)
        if answer is None:
            continue
        if isinstance(answer, ReplaceResult) and isinstance(answer.content, str):
            is_error = output.is_error if answer.is_error is None else answer.is_error
            metadata = output.metadata if answer.metadata is None else dict(answer.metadata)
            output = ToolOutput(content=answer.content, is_error=is_error, metadata=metadata)
            await _record(journal, "after_tool", hook, "rewrote", call_id=call.id)
            continue
        failure = (
            answer
            if isinstance(answer, HookFailure)
            else _wrong(answer, "None or ReplaceResult with text content")
        )
        await _record(
            journal, "after_tool", hook, failure.outcome, call_id=call.id, reason=failure.reason
        )
        return ToolOutput(
            content=f"[result withheld: {_refusal(hook, failure)}; hooks fail closed.]",
            is_error=True,
        )
    return output


async def before_model(hooks: Hooks, journal: Journal, model: str) -> None:
    """Run the before-model hooks over the history; a replacement becomes the history.
    Raises ``HookFailed`` when a hook fails (the model call must not be made)."""
    if not hooks.before_model:
        return
    from rho_domain.hooks.values import (  # with the first hook
        BeforeModelCall,
        HookFailure,
        ReplaceMessages,
    )

    for hook in hooks.before_model:
        messages = tuple(journal.state.messages)
        given = BeforeModelCall(session_id=journal.session_id, model=model, messages=messages)
        answer = await ask_hook(hook, given, hooks.deadline)
        if answer is None:
            continue
        if isinstance(answer, ReplaceMessages) and _all_messages(answer.messages):
            replaced = tuple(answer.messages)
            if replaced != messages:
                await _record(journal, "before_model", hook, "rewrote", messages=replaced)
            continue
        failure = (
            answer
            if isinstance(answer, HookFailure)
            else _wrong(answer, "None or ReplaceMessages of messages")
        )
        await _record(journal, "before_model", hook, failure.outcome, reason=failure.reason)
        raise HookFailed(
            f"{_refusal(hook, failure)}: the model call was not made (hooks fail closed)"
        )


def _all_messages(messages: Sequence[object]) -> bool:
    kinds = (SystemMessage, UserMessage, AssistantMessage, ToolResultMessage)
    return all(isinstance(m, kinds) for m in messages)


async def after_run(hooks: Hooks, journal: Journal, result: RunResult) -> None:
    """Tell the after-run hooks how the run ended; a failure is recorded, nothing else."""
    if not hooks.after_run:
        return
    from rho_domain.hooks.values import AfterRun, HookFailure  # with the first hook

    for hook in hooks.after_run:
        answer = await ask_hook(
            hook, AfterRun(session_id=journal.session_id, result=result), hooks.deadline
        )
        if isinstance(answer, HookFailure):
            await _record(journal, "after_run", hook, answer.outcome, reason=answer.reason)
