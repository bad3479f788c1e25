"""The compaction's summary request, made to fit: the model's window, and, after an HTTP 413,
the size in bytes the server or a proxy before it accepts.

The request carries no tool schemas and reserves room for the summary. When the history to
summarise is too long for the window (by the meter's count) it is sent as a transcript cut to
fit, newest kept. After a 413 (a request size limit, such as nginx's ``client_max_body_size``:
no token count says it) the transcript is cut to ``size_limit`` characters, half the
characters of the refused request, and halved once more if the summary request is refused
too: sent whole, it held nearly all of the refused request and was refused in turn, so a run
whose history had passed a proxy's limit could never compact.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from rho_domain import events as ev
from rho_domain.agent import Agent
from rho_domain.compaction import transcript
from rho_domain.errors import ContextLengthExceeded
from rho_domain.loop.context_fit import context_full, prompt_tokens, summary_tokens
from rho_domain.loop.streaming import Assembly, consume_stream
from rho_domain.messages import Message, UserMessage, message_chars
from rho_domain.model import ModelRequest
from rho_domain.ports.clock import Clock
from rho_domain.ports.model import ChatModel, context_meter

CUT_NOTE = "[Conversation so far, oldest part cut to fit the window]\n"
MIN_KEPT_CHARS = 200  # a transcript cut shorter than this summarises nothing


def refused_chars(agent: Agent, messages: Sequence[Message]) -> int:
    """The characters of a request for ``messages``: the system prompt and every message's
    (its JSON adds a little; a 413's limit is in bytes, and this is what can be cut)."""
    return len(agent.system_prompt) + sum(message_chars(m) for m in messages)


async def _discard(event: ev.Event) -> None:
    """Deltas of a compaction call are not shown: the summary is not an answer."""


async def summarise(
    agent: Agent,
    model: ChatModel,
    clock: Clock,
    what: tuple[tuple[Message, ...], UserMessage],
    window: int,
    size_limit: int | None = None,
) -> tuple[ModelRequest, Assembly]:
    """Ask for the summary of ``what`` (the messages, the instruction). If the server still
    refuses the request as too long, fit once more and retry: the meter has learned its
    count from the error, or, for a 413 (``size_limit`` given), the transcript is halved.
    Raises the refusal when there is nothing to learn from it."""

    async def attempt(limit: int | None) -> tuple[ModelRequest, Assembly]:
        request = await _fitting_request(agent, model, *what, window, limit)
        assembly = Assembly()
        await consume_stream(model, request, assembly, _discard, clock)
        return request, assembly

    try:
        return await attempt(size_limit)
    except ContextLengthExceeded as refused:
        if refused.status == 413 and size_limit is not None:
            return await attempt(size_limit // 2)
        if context_meter(model) is None:
            raise
    return await attempt(size_limit)


async def _fitting_request(
    agent: Agent,
    model: ChatModel,
    to_summarize: tuple[Message, ...],
    instruction: UserMessage,
    window: int,
    size_limit: int | None,
) -> ModelRequest:
    """The summary request: no tool schemas, room for the summary, under the window and, when
    given, ``size_limit`` characters of history.

    Raises ContextFull when not even a short transcript fits (the instructions and system
    prompt alone fill the window)."""
    room = summary_tokens(agent, window)
    request = attrs.evolve(
        agent.request((*to_summarize, instruction), tool_choice="none"),
        tools=(),
        max_output_tokens=room,
    )
    text = transcript(to_summarize)
    if size_limit is not None and sum(message_chars(m) for m in to_summarize) > size_limit:
        request = _cut(request, text, max(size_limit, MIN_KEPT_CHARS), instruction)
    meter = context_meter(model)
    if meter is None:
        return request
    limit = window - room
    tokens = await prompt_tokens(meter, request, window)
    if tokens <= limit:
        return request
    keep = min(len(text), size_limit or len(text))
    for _ in range(6):
        keep = int(keep * limit / max(tokens, 1) * 0.9)
        if keep < MIN_KEPT_CHARS:
            break
        request = _cut(request, text, keep, instruction)
        tokens = await prompt_tokens(meter, request, window)
        if tokens <= limit:
            return request
    raise context_full(window, tokens, "not even a shortened summary request fits")


def _cut(request: ModelRequest, text: str, keep: int, instruction: UserMessage) -> ModelRequest:
    """``request`` asking for the summary of the last ``keep`` characters of ``text``."""
    note = UserMessage(content=f"{CUT_NOTE}{text[-keep:]}")
    return attrs.evolve(request, messages=(note, instruction))
