"""The tool calls a history left without a result, and the history with each given an
interrupted result (``State.repair``: a process died mid-tool, a run was cancelled).

Every call the model makes must end with a result in history before the next model request,
or the provider refuses the request. A call that never got one is answered with
``not_run.INTERRUPTED_RESULT`` (an error result: its effects are unknown), placed right after
the results of its own batch, where the provider expects it.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from rho_domain.messages import AssistantMessage, Message, ToolCall, ToolResultMessage
from rho_domain.not_run import INTERRUPTED_RESULT


def unanswered(messages: Sequence[Message], waiting: Collection[str]) -> tuple[ToolCall, ...]:
    """The calls of ``messages`` with no result, leaving out those whose ids are ``waiting``
    (for an approval: they are answered when it comes)."""
    answered = {m.call_id for m in messages if isinstance(m, ToolResultMessage)}
    return tuple(
        call
        for m in messages
        if isinstance(m, AssistantMessage)
        for call in m.tool_calls
        if call.id not in answered and call.id not in waiting
    )


def with_interrupted_results(
    messages: Sequence[Message], missing: Sequence[ToolCall]
) -> tuple[list[Message], dict[str, ToolResultMessage]]:
    """``messages`` with an interrupted result for each call of ``missing``, each after its
    batch's other results; and those results, by call id."""
    synthetic = {
        call.id: ToolResultMessage(
            call_id=call.id, tool_name=call.name, content=INTERRUPTED_RESULT, is_error=True
        )
        for call in missing
    }
    rebuilt: list[Message] = []
    batch: list[ToolCall] = []
    for message in messages:
        if batch and not isinstance(message, ToolResultMessage):
            rebuilt.extend(synthetic[c.id] for c in batch if c.id in synthetic)
            batch = []
        rebuilt.append(message)
        if isinstance(message, AssistantMessage):
            batch = list(message.tool_calls)
    rebuilt.extend(synthetic[c.id] for c in batch if c.id in synthetic)
    return rebuilt, synthetic
