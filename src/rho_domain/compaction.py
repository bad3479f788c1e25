"""Compaction: replacing old history with a model-written summary when context runs out.

Pure planning lives here; the Session asks the model for the summary through the ChatModel
port. The plan never splits a tool call from its result: the split point is always a user
message. A failed summary leaves history untouched. The trigger, the plan and the result are
``compaction_values``', named here and imported with the first one asked for (a run that never
compacts never builds them).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rho_domain.lazy_names import lazy_names
from rho_domain.messages import (
    AssistantMessage,
    Message,
    ToolResultMessage,
    UserMessage,
    message_chars,
)

if TYPE_CHECKING:
    from rho_domain.compaction_values import CompactionPlan as CompactionPlan
    from rho_domain.compaction_values import CompactResult as CompactResult
    from rho_domain.compaction_values import CompactTrigger as CompactTrigger

COMPACTION_PROMPT = """\
Context checkpoint: the conversation above is about to be replaced by your summary. Write a \
handoff summary for another instance of yourself that will continue this task with no other \
memory of it. Cover, concisely and in structured form:
1. The user's goal and every explicit request, constraint and preference.
2. What has been done so far and what was found (facts, numbers, names).
3. Key decisions and why they were made.
4. Critical data: file paths, commands, queries, identifiers, error messages.
5. What remains to be done, and the next step.
Answer with the summary only; do not call tools."""

SUMMARY_PREFIX = (
    "[Summary of the earlier conversation, written when the context was compacted. "
    "The most recent messages follow it.]\n\n"
)

KEPT_USER_MESSAGES = 2
KEPT_USER_CHARS = 2_000


def should_compact(estimated_tokens: int, context_window: int, threshold: float) -> bool:
    """True when the estimate passes ``threshold`` of a (positive) context window."""
    return context_window > 0 and estimated_tokens > context_window * threshold


def plan_compaction(messages: Sequence[Message], *, tail_budget_chars: int) -> CompactionPlan:
    """Split history at the last user message.

    The tail (latest user message and everything after it) is kept whole if it fits in
    ``tail_budget_chars``; otherwise only that user message is kept and its turn is summarised
    too. Up to two earlier user requests are kept verbatim (cut to 2,000 characters).
    """
    from rho_domain.compaction_values import CompactionPlan

    split = _last_user_index(messages)
    if split is None:
        return CompactionPlan(to_summarize=tuple(messages), recent_users=(), tail=())
    tail = tuple(messages[split:])
    head = tuple(messages[:split])
    if sum(message_chars(m) for m in tail) > tail_budget_chars:
        head = head + tail[1:]
        tail = tail[:1]
    earlier = [m for m in head if isinstance(m, UserMessage) and m.origin in ("user", "directive")][
        -KEPT_USER_MESSAGES:
    ]
    recent = tuple(
        UserMessage(content=_cut(m.content, KEPT_USER_CHARS), origin="recent") for m in earlier
    )
    return CompactionPlan(to_summarize=head, recent_users=recent, tail=tail)


def compacted_history(plan: CompactionPlan, summary: str) -> tuple[Message, ...]:
    """The new history: summary first, then earlier requests, then the latest turn."""
    summary_message = UserMessage(content=SUMMARY_PREFIX + summary.strip(), origin="summary")
    return (summary_message, *plan.recent_users, *plan.tail)


def transcript(messages: Sequence[Message]) -> str:
    """History as plain text, one block per message (for a summary request that must be cut
    to fit: text can be cut anywhere, tool-call pairs cannot)."""
    blocks = []
    for message in messages:
        if isinstance(message, AssistantMessage):
            calls = "".join(f"\n[called {c.name} {c.arguments}]" for c in message.tool_calls)
            blocks.append(f"assistant: {message.text}{calls}")
        elif isinstance(message, ToolResultMessage):
            blocks.append(f"tool {message.tool_name} returned: {message.content}")
        else:
            blocks.append(f"user: {message.content}")
    return "\n\n".join(blocks)


def compaction_instructions(custom_instructions: str = "") -> str:
    """The summary request, with the user's extra guidance when given."""
    if custom_instructions.strip():
        return f"{COMPACTION_PROMPT}\n\nAdditional guidance from the user: {custom_instructions}"
    return COMPACTION_PROMPT


def _last_user_index(messages: Sequence[Message]) -> int | None:
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if isinstance(message, UserMessage) and message.origin in ("user", "directive"):
            return index
    return None


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + " [...]"


__getattr__ = lazy_names(
    __name__,
    dict.fromkeys(
        ("CompactResult", "CompactTrigger", "CompactionPlan"), "rho_domain.compaction_values"
    ),
)
