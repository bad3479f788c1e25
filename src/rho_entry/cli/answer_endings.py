"""What the terminal says of a model call's ending (``finish_reason``): nothing when the answer
is whole, a warning when its text may not be the whole answer.

The run ends completed (exit 0) with the text as sent whatever the ending, and only ``llm_end``
in the trace holds why; so an ending that may have cut the answer is said on stderr. One this
table does not know (vLLM's ``abort``, Mistral's ``error``, a server's own word) was said by
nothing, though it is the server telling that the answer did not end as asked: it is said
too, by its name.

An answer with no text and no tool call, ended ``stop`` (a reasoning parser that kept the
whole reply as reasoning: vLLM's when the model never closed its ``</think>``; a server that
sent ``[DONE]`` before any choice), was said by nothing either: the run completed, exit 0,
and the terminal showed only the usage line. ``empty_answer_warning`` says it, but not of a
run that stopped on a call the user rejected (``after_rejection``): the model was not asked
after it, so there is no answer to miss (it said 'the model's answer has no text: it sent
nothing at all; a server's reasoning parser may...' above 'stopped: you rejected bash').
"""

from __future__ import annotations

from rho_domain import events as ev
from rho_domain.messages import ToolResultMessage, UserMessage
from rho_domain.not_run import CUT_AT_LIMIT, REJECTED_PREFIX

WHOLE = frozenset(
    {"stop", "tool_calls", "function_call", "end_turn", "stop_sequence", "eos", "eos_token"}
)
"""Endings of a whole answer: OpenAI's, and the names Anthropic and TGI give the same."""

_CUT_SHORT = {
    "length": (  # Anthropic's max_tokens too
        "warning: the answer stopped at the model's output limit (finish_reason length) and "
        "may be cut; give it more room with max_output_tokens (--config), or ask it to go on"
    ),
    "content_filter": (  # Anthropic's refusal too
        "warning: the server's safety filter stopped the answer (finish_reason "
        "content_filter; Anthropic's refusal): its text may be cut or empty, and the model "
        "may refuse the task as worded"
    ),
    "pause_turn": (
        "warning: the server paused a long turn (Anthropic's stop_reason pause_turn), which "
        "rho-agent does not continue: the answer may be partial; ask it to go on"
    ),
}


def ending_warning(reason: str | None) -> str | None:
    """The warning for an answer that ended with ``reason``; None for a whole one (or none
    given: the stream's end is judged by the adapter)."""
    if reason is None or reason in WHOLE:
        return None
    known = _CUT_SHORT.get(reason)
    if known is not None:
        return known
    shown = reason if len(reason) <= 60 else reason[:60] + "..."  # the notice escapes it
    return (
        f"warning: the server ended the answer with finish_reason {shown!r}, not one that "
        "means a whole answer (stop, tool_calls): its text may be cut or empty; ask it to "
        "go on, or see the server's log"
    )


def empty_answer_warning(text: str, calls: int, reasoning: str) -> str | None:
    """The warning for a final answer of ``text`` with ``calls`` tool calls and
    ``reasoning`` (the run's result: no calls): None unless it has neither text nor a call."""
    if text.strip() or calls:
        return None
    if reasoning.strip():
        sent = f"only reasoning ({len(reasoning):,} characters; -v shows it)"
    else:
        sent = "nothing at all"
    return (
        f"warning: the model's answer has no text: it sent {sent}; a server's reasoning "
        "parser may have kept the answer as reasoning, or the server ended the stream "
        "before answering: ask again, or see the server's log"
    )


def after_rejection(rejected: bool, event: ev.Event) -> bool:
    """Whether a call was rejected since the last model call, after ``event`` (given whether
    one was before it): a model call starts afresh, a rejected call's result sets it."""
    if isinstance(event, ev.LLMStarted):
        return False
    message = event.message if isinstance(event, ev.MessageAdded) else None
    is_rejection = isinstance(message, ToolResultMessage) and message.content.startswith(
        REJECTED_PREFIX
    )
    return rejected or is_rejection


def told_the_model(message: object) -> str | None:
    """What rho-agent itself told the model, for the terminal to show as it shows an operator's
    directive: a nudge or a correction (a repeated call, an answer off its schema), and each
    call not run because the answer stopped at the output limit inside its last call's
    arguments (``not_run.CUT_AT_LIMIT``). Those calls never start, so no line showed them:
    the user read only the length warning's "may be cut", not that nothing ran."""
    if isinstance(message, UserMessage) and message.origin in ("nudge", "correction"):
        return message.content.removeprefix("[rho-agent] ")
    if isinstance(message, ToolResultMessage) and message.content == CUT_AT_LIMIT:
        return (
            f"its {message.tool_name} call was not run: the answer stopped at the output limit "
            "inside its last call's arguments; make smaller calls"
        )
    return None
