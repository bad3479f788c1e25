"""The model turn: one streamed model call, stopped by cancellation, into history.

``call_model`` emits ``llm_start``, streams the response (deltas are announced as they arrive),
records usage, emits ``llm_end`` and adds the assistant message (text kept with its tool calls).
Whatever was streamed before a break or a cancellation (text and reasoning) is kept in history,
marked as cut; a broken call that had started answering counts its usage (the server's, else an
estimate marked ``estimated``), and its partial text becomes the run's text.
When the server refuses the request as too long (``ContextLengthExceeded``), the history is
compacted once (``compaction_run.compact_after_overflow``) and the call made again; a second
overflow ends the run with ``ContextFull`` naming the window, never a loop.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import attrs

from rho_domain import events as ev
from rho_domain.agent import Agent
from rho_domain.errors import ContextLengthExceeded, ModelError, ModelProtocolError
from rho_domain.loop.compaction_run import compact_after_overflow
from rho_domain.loop.context_fit import context_full, measure
from rho_domain.loop.control import RunControl
from rho_domain.loop.journal import Journal
from rho_domain.loop.streaming import Assembly, consume_stream
from rho_domain.loop.tally import RunTally
from rho_domain.messages import AssistantMessage, Usage
from rho_domain.model import ModelRequest
from rho_domain.plugged import failure_of, plugged_name
from rho_domain.ports.model import ChatModel

if TYPE_CHECKING:
    from rho_domain.ports.durable import DurableSteps


async def call_model(
    agent: Agent,
    model: ChatModel,
    journal: Journal,
    control: RunControl,
    tally: RunTally,
    steps: DurableSteps | None = None,
) -> AssistantMessage | None:
    """One streamed model call; None when it was cancelled during streaming (or stopped at
    the run's deadline: ``control.out_of_time``). With ``steps`` (a durable run) the call is
    one step: a call recorded by an earlier execution of the run is answered from the record
    (``durable_steps.SteppedModel``).

    On a context overflow: compact once and call again. Raises ``ContextFull`` when compaction
    is off or impossible, or the request still does not fit after it; other ``ModelError``s
    as ``_call_once``.
    """
    source = model
    if steps is not None:  # a durable run: its steps are loaded with it
        from rho_domain.loop.durable_steps import SteppedModel

        source = SteppedModel(model, steps)
    try:
        return await _call_once(agent, source, journal, control, tally)
    except ContextLengthExceeded as overflow:
        await compact_after_overflow(agent, model, journal, overflow)
    try:
        return await _call_once(agent, source, journal, control, tally)
    except ContextLengthExceeded as again:
        size = await measure(agent, model, journal.state)
        window, tokens = again.window or size.window, again.prompt_tokens or size.tokens
        raise context_full(
            window, tokens, "it still does not fit after compaction", refused=again
        ) from again


async def _call_once(
    agent: Agent, model: ChatModel, journal: Journal, control: RunControl, tally: RunTally
) -> AssistantMessage | None:
    """One streamed model call; None when it was cancelled during streaming.

    Counts the call and its usage in ``tally`` (before ``llm_start`` and before the ``usage``
    event, so a store failure leaves the same usage in the result). Raises ``ModelError`` when
    the stream fails or ends without finishing, after keeping the partial text and reasoning,
    counting the usage of a call that had started answering, and setting ``tally.text``.
    """
    state, clock = journal.state, journal.clock
    if agent.hooks.before_model:  # hooks_applied loads with the first hook
        from rho_domain.loop.hooks_applied import before_model

        await before_model(agent.hooks, journal, agent.config.model)  # HookFailed: no call
    request = agent.request(state.messages)
    tally.calls += 1
    context = state.estimated_context_tokens(agent.system_prompt)
    await journal.emit(
        ev.LLMStarted(
            at=clock.now(), model=request.model, call_index=tally.calls, context_tokens=context
        )
    )
    started, assembly = clock.monotonic(), Assembly()
    try:
        try:
            finished, _ = await control.within(
                consume_stream(model, request, assembly, journal.emit, clock, journal.heard)
            )
        except asyncio.CancelledError as exc:  # ours or the caller's, or the model's own
            failure = failure_of(exc, f"the model {plugged_name(model)}")
            if failure is exc:
                raise
            raise failure from exc  # unasked: ends the run naming the model, not the caller
        if journal.listeners and assembly.started:
            # One turn of the loop before ``llm_end``: a reader following the listeners'
            # events (the runtime's event log drops a call's fragments at its end) reads the
            # last fragments of a stream that ended without waiting, as it did when the
            # stream was read in a task of its own.
            await asyncio.sleep(0)
        if finished and not assembly.finished:
            raise ModelProtocolError("the model stream ended without finishing")
    except ModelError as exc:
        exc.partial_text = exc.partial_text or assembly.partial_text
        tally.text = exc.partial_text
        if assembly.started:  # the server read the prompt: those tokens were spent
            await _count_usage(agent, journal, tally, assembly, request)
        await _keep_partial(journal, assembly, "the response broke off")
        raise
    usage = await _count_usage(agent, journal, tally, assembly, request)
    await journal.emit(
        ev.LLMEnded(
            at=clock.now(),
            model=request.model,
            call_index=tally.calls,
            usage=usage,
            finish_reason=assembly.finish_reason,
            duration=clock.monotonic() - started,
            first_output_after=_after(assembly.first_output_at, started),
            retries=assembly.retries,
            queue_wait=assembly.queue_wait,
        )
    )
    tally.cut_at_limit = assembly.finish_reason == "length"  # Anthropic's max_tokens too
    if not finished:
        await _keep_partial(journal, assembly, control.why_stopped)
        detail = "during model response" + ("" if control.cancelled else ": out of time")
        await journal.emit(ev.Interrupted(at=clock.now(), reason="cancelled", detail=detail))
        return None
    message = assembly.message()
    if message.tool_calls:
        message = distinct_call_ids(message, state.call_ids)
    if message.text or message.tool_calls or message.refusal or message.reasoning:
        await journal.message(message)
    return message


def distinct_call_ids(message: AssistantMessage, used: set[str]) -> AssistantMessage:
    """``message`` with each tool call id this session already used (``used``) or an
    earlier call of this answer has, made new: ``ID_2``, ``ID_3``...; an empty one (a
    ``tool_use`` without an id) ``call_1``, ``call_2``... A server may repeat ids (numbered
    per answer, or written by the model); a result, an approval and the trace's readers
    find their call by id, and a provider refuses a conversation that repeats one. An id
    ``.`` or ``..`` (an id the model wrote) is made new as an empty one is: a browser
    resolves it as a dot segment of the approval's URL, escaped too (``%2E``), so the
    dashboard could not answer that call."""
    ids = [call.id for call in message.tool_calls]
    if _addressable(ids) and len(set(ids)) == len(ids) and used.isdisjoint(ids):
        return message  # nearly always: no copy of the session's ids
    taken: set[str] = set()
    calls = []
    for call in message.tool_calls:
        named = _addressable([call.id])
        new_id, base, n = call.id, call.id if named else "call", 2 if named else 1
        while not _addressable([new_id]) or new_id in taken or new_id in used:
            new_id, n = f"{base}_{n}", n + 1
        taken.add(new_id)
        calls.append(call if new_id == call.id else attrs.evolve(call, id=new_id))
    return attrs.evolve(message, tool_calls=tuple(calls))


def _addressable(ids: list[str]) -> bool:
    """Whether each of ``ids`` can be one segment of a URL's path: neither empty nor a dot
    segment."""
    return all(ids) and not any(i in (".", "..") for i in ids)


def _after(moment: float | None, started: float) -> float | None:
    return None if moment is None else moment - started


async def _count_usage(
    agent: Agent, journal: Journal, tally: RunTally, assembly: Assembly, request: ModelRequest
) -> Usage:
    usage = agent.priced(assembly.usage_or_estimate(request), request.model)
    tally.usage = tally.usage + usage
    await journal.emit(
        ev.UsageRecorded(at=journal.clock.now(), usage=usage, prompt_tokens=usage.input_tokens)
    )
    return usage


async def _keep_partial(journal: Journal, assembly: Assembly, why: str) -> None:
    text, reasoning = assembly.partial_text, assembly.partial_reasoning
    if text or reasoning:
        note = f"[response interrupted: {why}]"
        message = AssistantMessage(text=f"{text}\n{note}" if text else note, reasoning=reasoning)
        await journal.message(message)
