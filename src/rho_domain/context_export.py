"""A session's context export: what it knows, as text another agent can read.

``export_context`` renders a session's history (after its last compaction, whose summary it
includes) as a transcript with a header: the session, its status, its usage. Each tool result is
cut to ``result_chars`` and the whole to ``limit_chars`` keeping the end (the latest turns
matter most), so several exports fit in one coordinating agent's context. A running session
writes it between steps when asked (``RunControl``, through the SignalSource); a finished one
is exported from its trace. ``combine_exports`` puts several under one heading each.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from rho_domain.compaction import transcript
from rho_domain.messages import Message, ToolResultMessage
from rho_domain.state import State
from rho_domain.value_methods import value_eq, value_hash, value_repr

RESULT_CHARS = 2_000
LIMIT_CHARS = 40_000


@attrs.frozen(kw_only=True)
class ContextExport:
    """One session's export. ``source`` says how it was obtained (``running``: the session
    answered between steps; ``trace``: read from its trace)."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    session_id: str
    source: str
    text: str


def export_context(
    session_id: str,
    state: State,
    *,
    result_chars: int = RESULT_CHARS,
    limit_chars: int = LIMIT_CHARS,
) -> str:
    """The export of a session with ``state``: a header, then its history as a transcript."""
    messages = [_cut_result(m, result_chars) for m in state.messages]
    body = transcript(messages) or "(no history yet)"
    if len(body) > limit_chars:
        body = "[... earlier turns left out ...]\n\n" + body[-limit_chars:]
    usage = state.usage
    header = (
        f"session {session_id} · status {state.status} · {len(state.messages)} messages · "
        f"tokens in {usage.input_tokens} / out {usage.output_tokens}"
    )
    return f"{header}\n\n{body}"


def combine_exports(exports: Sequence[ContextExport], instruction: str = "") -> str:
    """One message for a coordinating agent: each export under its session's heading."""
    names = ", ".join(e.session_id for e in exports)
    parts = [
        f"You coordinate the work of these agent sessions: {names}. Below is what each one "
        "knows (its conversation so far). Use it to answer; say which session a fact comes "
        "from."
    ]
    for export in exports:
        parts.append(f"## Session {export.session_id} ({export.source})\n\n{export.text}")
    if instruction:
        parts.append(f"## Your task\n\n{instruction}")
    return "\n\n".join(parts)


def _cut_result(message: Message, limit: int) -> Message:
    if isinstance(message, ToolResultMessage) and len(message.content) > limit:
        return attrs.evolve(message, content=message.content[:limit] + " [...]")
    return message
