"""Running a compaction: ask the model for the summary, then replace history in one event.

The summary request must itself fit the window: it carries no tool schemas, reserves room
for the summary, and when the history to summarise is too long it is sent as a transcript
cut to fit (newest kept). A summary that would not make the context smaller is rejected.

``compact_history`` does it on request (``compact_asked``, ``Session.compact``'s: a rejection
answered with ``rejection_noted``, a compaction that compacted nothing told by an ``error``
event); ``auto_compact`` does it before a model call when the
measured context passes the configured share of the window; ``compact_after_overflow`` does it
once when the server refused a request as too long.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rho_domain import events as ev
from rho_domain.agent import Agent
from rho_domain.compaction import (
    compacted_history,
    compaction_instructions,
    plan_compaction,
    should_compact,
)
from rho_domain.errors import (
    CompactionRejected,
    ContextFull,
    ContextLengthExceeded,
    ModelError,
    ModelProtocolError,
    SessionStateError,
)
from rho_domain.loop.context_fit import context_full, measure
from rho_domain.loop.journal import Journal
from rho_domain.messages import UserMessage
from rho_domain.ports.model import ChatModel

TAIL_SHARE = 0.25  # the latest turn is kept whole if it fits in a quarter of the window
# the one compaction that compacts nothing without an ``error`` event (nothing was asked)
NOTHING_TO_COMPACT = "nothing to compact: the history is the latest turn only; history kept"

if TYPE_CHECKING:  # built where a compaction runs (a run that never compacts never builds it)
    from rho_domain.compaction_values import CompactResult, CompactTrigger


async def compact_history(
    agent: Agent,
    model: ChatModel,
    journal: Journal,
    custom_instructions: str,
    trigger: CompactTrigger,
    size_limit: int | None = None,
) -> CompactResult:
    """Summarise through ``model`` and emit one ``Compacted`` event carrying the new history.
    ``size_limit``: after an HTTP 413, the characters of history a request may carry (the
    latest turn is kept whole within a quarter of it, the summary request cut to it).

    Raises ``ModelError`` if the call fails or the summary is empty, ``CompactionRejected`` if
    it would not shrink the context, ``ContextFull`` if not even a shortened summary request
    fits; history is untouched then.
    """
    from rho_domain.compaction_values import CompactResult

    state, clock = journal.state, journal.clock
    # the summary request sends the history too: it passes the before-model hooks first
    if agent.hooks.before_model:
        from rho_domain.loop.hooks_applied import before_model

        await before_model(agent.hooks, journal, agent.config.model)
    size = await measure(agent, model, state, state.messages)
    before, window = size.tokens, size.window
    tail_budget = int(window * 4 * TAIL_SHARE)
    if size_limit is not None:  # a 413 counts bytes, not tokens: the tail must fit in it too
        tail_budget = min(tail_budget, int(size_limit * TAIL_SHARE))
    plan = plan_compaction(state.messages, tail_budget_chars=tail_budget)
    if plan.is_empty:
        return CompactResult(
            summary="",
            tokens_before=before,
            tokens_after=before,
            trigger=trigger,
            note=NOTHING_TO_COMPACT,
        )
    await journal.emit(ev.CompactStarted(at=clock.now(), trigger=trigger, tokens_before=before))
    instruction = UserMessage(content=compaction_instructions(custom_instructions))
    from rho_domain.loop.summary_request import summarise  # with the first compaction

    request, assembly = await summarise(
        agent, model, clock, (plan.to_summarize, instruction), window, size_limit
    )
    summary = assembly.partial_text.strip()
    if not summary:
        raise ModelProtocolError("the model returned an empty summary; history kept")
    usage = agent.priced(assembly.usage_or_estimate(request), request.model)
    await journal.emit(
        ev.UsageRecorded(at=clock.now(), usage=usage, prompt_tokens=usage.input_tokens)
    )
    messages = compacted_history(plan, summary)
    after = (await measure(agent, model, state, messages)).tokens
    if after >= before:
        raise CompactionRejected(
            f"the summary would not make the context smaller (~{before} tokens before, "
            f"~{after} after); history kept",
            tokens_before=before,
            tokens_after=after,
        )
    await journal.emit(
        ev.Compacted(
            at=clock.now(),
            trigger=trigger,
            summary=summary,
            tokens_before=before,
            tokens_after=after,
            replaced_count=len(plan.to_summarize),
            messages=messages,
        )
    )
    return CompactResult(summary=summary, tokens_before=before, tokens_after=after, trigger=trigger)


async def compact_asked(
    agent: Agent,
    model: ChatModel,
    journal: Journal,
    custom_instructions: str,
    trigger: CompactTrigger,
) -> CompactResult:
    """``Session.compact``: ``compact_history``, refused (``SessionStateError``) while tool
    calls wait for approval. A rejected summary is returned as ``rejection_noted``; a
    ``ModelError`` is raised, history untouched. Either way an ``error`` event says why the
    ``compact_start`` has no ``compact``."""
    if journal.state.pending_calls:
        raise SessionStateError("cannot compact while tool calls wait for approval")
    try:
        return await compact_history(agent, model, journal, custom_instructions, trigger)
    except CompactionRejected as rejected:
        await _compaction_ended(journal, rejected, "nothing compacted")
        return rejection_noted(rejected, trigger)
    except ModelError as failed:
        await _compaction_ended(journal, failed, "compaction failed")
        raise


async def _compaction_ended(journal: Journal, error: ModelError, what: str) -> None:
    """An ``error`` event for a compaction asked for that compacted nothing (it failed,
    or its summary was rejected): a ``compact_start`` without a ``compact`` is over, and
    the trace (``monitor watch``, the dashboard) says why."""
    await journal.emit(
        ev.ErrorOccurred(
            at=journal.clock.now(), error_type=type(error).__name__, message=f"{what}: {error}"
        )
    )


def rejection_noted(rejected: CompactionRejected, trigger: CompactTrigger) -> CompactResult:
    """What ``Session.compact`` returns when ``compact_history`` rejected the summary (it would
    not make the context smaller): nothing compacted (empty ``summary``), the reason in
    ``note``."""
    from rho_domain.compaction_values import CompactResult

    return CompactResult(
        summary="",
        tokens_before=rejected.tokens_before,
        tokens_after=rejected.tokens_before,
        trigger=trigger,
        note=str(rejected),
    )


async def auto_compact(agent: Agent, model: ChatModel, journal: Journal) -> None:
    """Compact when ``auto_compact`` is on, no call waits for approval and the measured
    context (``context_fit.measure``: the model's meter and the server's window) passes
    ``compact_threshold`` of the window.

    A failed summary is reported as an ``error`` event and the run goes on while the next
    call still fits the window (an overflow then goes through ``compact_after_overflow``).
    Raises ``ContextFull`` when compaction failed and the next request is larger than the
    window: that call could never succeed. (With nothing to compact the call is made: the
    estimate may be high, and a server's refusal goes through ``compact_after_overflow``.)
    """
    config, state = agent.config, journal.state
    if not config.auto_compact or state.pending_calls:
        return
    size = await measure(agent, model, state)
    if not should_compact(size.tokens, size.window, config.compact_threshold):
        return
    try:
        await compact_history(agent, model, journal, "", "auto")
    except ModelError as exc:
        await journal.emit(
            ev.ErrorOccurred(
                at=journal.clock.now(),
                error_type=type(exc).__name__,
                message=f"auto-compaction failed: {exc}",
            )
        )
        if size.tokens > size.window:
            raise context_full(size.window, size.tokens, f"compaction failed ({exc})") from exc
        return


async def compact_after_overflow(
    agent: Agent, model: ChatModel, journal: Journal, overflow: ContextLengthExceeded
) -> None:
    """The server refused a request as too long: compact once so the next call fits.

    Raises ContextFull (naming the window and how to continue) when compaction is off, not
    possible, failed, or would not shrink the context."""
    state = journal.state
    size = await measure(agent, model, state)
    window = overflow.window or size.window
    tokens = overflow.prompt_tokens or size.tokens
    if not agent.config.auto_compact:
        raise context_full(window, tokens, "auto-compaction is off", refused=overflow) from overflow
    if state.pending_calls:
        raise context_full(
            window, tokens, "tool calls wait for approval", refused=overflow
        ) from overflow
    # a 413 is a size in bytes: the next requests must carry less than the refused one
    from rho_domain.loop.summary_request import refused_chars  # with the first overflow

    size_limit = refused_chars(agent, state.messages) // 2 if overflow.status == 413 else None
    try:
        result = await compact_history(agent, model, journal, "", "overflow", size_limit)
    except ContextFull:
        raise
    except (CompactionRejected, ModelError) as exc:
        raise context_full(window, tokens, f"compaction failed ({exc})", refused=overflow) from exc
    if not result.summary:
        raise context_full(
            window, tokens, "there is no earlier history to compact", refused=overflow
        ) from overflow
