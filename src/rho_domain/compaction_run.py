"""Running a compaction: ask the model for the summary, then replace history in one event.

``compact_history`` does it on request; ``auto_compact`` does it before a model call when the
context estimate passes the configured share of the window.
"""

from __future__ import annotations

from rho_domain import events as ev
from rho_domain.agent import Agent
from rho_domain.compaction import (
    CompactResult,
    CompactTrigger,
    compacted_history,
    compaction_instructions,
    plan_compaction,
    should_compact,
)
from rho_domain.errors import ModelError, ModelProtocolError
from rho_domain.journal import Journal
from rho_domain.messages import UserMessage, estimate_tokens, message_chars
from rho_domain.ports.model import ChatModel
from rho_domain.streaming import Assembly, consume_stream

TAIL_SHARE = 0.25  # the latest turn is kept whole if it fits in a quarter of the window


async def _discard(event: ev.Event) -> None:
    """Deltas of a compaction call are not shown: the summary is not an answer."""


async def compact_history(
    agent: Agent,
    model: ChatModel,
    journal: Journal,
    custom_instructions: str,
    trigger: CompactTrigger,
) -> CompactResult:
    """Summarise through ``model`` and emit one ``Compacted`` event carrying the new history.

    Raises ``ModelError`` if the call fails or the summary is empty; history is untouched then.
    """
    state, clock, system = journal.state, journal.clock, agent.system_prompt
    before = state.estimated_context_tokens(system)
    budget = int(agent.config.context_window * 4 * TAIL_SHARE)
    plan = plan_compaction(state.messages, tail_budget_chars=budget)
    if plan.is_empty:
        return CompactResult(summary="", tokens_before=before, tokens_after=before, trigger=trigger)
    instruction = UserMessage(content=compaction_instructions(custom_instructions))
    request = agent.request((*plan.to_summarize, instruction), tool_choice="none")
    assembly = Assembly()
    await consume_stream(model, request, assembly, _discard, clock)
    summary = assembly.partial_text.strip()
    if not summary:
        raise ModelProtocolError("the model returned an empty summary; history kept")
    usage = assembly.usage_or_estimate(request)
    await journal.emit(
        ev.UsageRecorded(at=clock.now(), usage=usage, prompt_tokens=usage.input_tokens)
    )
    messages = compacted_history(plan, summary)
    after = estimate_tokens(len(system) + sum(message_chars(m) for m in messages))
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


async def auto_compact(agent: Agent, model: ChatModel, journal: Journal) -> None:
    """Compact when ``auto_compact`` is on, no call waits for approval and the context
    estimate passes ``compact_threshold`` of the window.

    A failed summary is reported as an ``error`` event and the run goes on: history is intact
    and the next call may still fit.
    """
    config, state = agent.config, journal.state
    estimate = state.estimated_context_tokens(agent.system_prompt)
    if (
        not config.auto_compact
        or state.pending_calls
        or not should_compact(estimate, config.context_window, config.compact_threshold)
    ):
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
