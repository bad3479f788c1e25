"""Fitting the conversation into the model's real context window.

The window is the smaller of the configured ``context_window`` and the one the server
reports (``ContextMeter.context_window``: llama.cpp ``/props``, vLLM ``max_model_len``, or
the numbers of an overflow error). Prompt size is the meter's estimate (system prompt,
messages, tool schemas and template framing, at a ratio learned from the server's counts),
counted by the server's tokenizer when the estimate comes near the window. Without a meter
(a fake model, the demo) the State's estimate and the configured window are used.

When a request overflows anyway, ``context_full`` builds the error that ends the run: it names
the window and how to continue. ``check_window`` refuses, before the first call, a window that
cannot even hold the system prompt and the tool schemas.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence

import attrs

from rho_domain.agent import Agent
from rho_domain.errors import ConfigError, ContextFull, ModelHTTPError
from rho_domain.messages import Message, estimate_tokens, message_chars
from rho_domain.model import ModelRequest
from rho_domain.ports.model import ChatModel, ContextMeter, context_meter
from rho_domain.state import State
from rho_domain.value_methods import value_eq, value_hash, value_repr

NEAR_WINDOW = 0.6  # from this share of the window on, ask the server's tokenizer
SUMMARY_TOKENS_MAX = 4_096
TURN_ROOM_TOKENS = 256  # beyond the fixed part: room for a short message and a short answer


@attrs.frozen
class ContextSize:
    """``tokens`` of the next prompt in a ``window`` (both in tokens)."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    tokens: int
    window: int


def ask_window_ahead(model: ChatModel) -> asyncio.Task[int | None] | None:
    """The model's context window asked now, as a task: ``Session.run`` asks it beside the
    run's start, so that a probed server's answer (two GETs to a local server) comes while
    the store creates the session and syncs ``run_start``, instead of after. Only a
    question: ``check_window`` and the first call still come after ``run_start`` is durable
    and wait for this answer (a meter asks once; a caller arriving meanwhile waits). None
    for a model that is not a meter. ``settle`` ends it."""
    meter = context_meter(model)
    return asyncio.ensure_future(meter.context_window()) if meter is not None else None


async def settle(task: asyncio.Task[int | None]) -> None:
    """``task`` (``ask_window_ahead``'s) over: cancelled when the run ended before needing
    it (a store that failed at the start, a cancellation), its outcome retrieved either way
    (``context_window`` never raises), so that no task is left pending or unretrieved. A
    cancellation of the run itself while this waits still reaches the run."""
    if not task.done():
        task.cancel()
    await asyncio.wait([task])
    if not task.cancelled():
        task.exception()


async def window_of(agent: Agent, model: ChatModel) -> int:
    """The window to fit into: the configured one, or the server's when it is smaller."""
    meter = context_meter(model)
    server = await meter.context_window() if meter is not None else None
    configured = agent.config.context_window
    return min(configured, server) if server else configured


async def measure(
    agent: Agent, model: ChatModel, state: State, messages: Sequence[Message] | None = None
) -> ContextSize:
    """The size of the next request for ``messages`` (default: the whole history)."""
    window = await window_of(agent, model)
    history = state.messages if messages is None else messages
    meter = context_meter(model)
    if meter is None:
        if messages is None:
            return ContextSize(state.estimated_context_tokens(agent.system_prompt), window)
        return ContextSize(rough_tokens(agent.system_prompt, history), window)
    tokens = await prompt_tokens(meter, agent.request(history), window)
    if messages is None:  # the server's last real count may know better than any estimate
        tokens = max(tokens, state.estimated_context_tokens(agent.system_prompt))
    return ContextSize(tokens, window)


async def check_window(agent: Agent, model: ChatModel) -> None:
    """Raise ConfigError when the window cannot hold the fixed part of every request (system
    prompt and tool schemas) plus ``TURN_ROOM_TOKENS``: such a run could never make a call
    that fits, and compaction cannot shrink the fixed part. The error names the setting and
    the minimum."""
    window = await window_of(agent, model)
    meter = context_meter(model)
    if meter is not None:
        fixed = meter.estimate_tokens(agent.request(()))
    else:
        tools = sum(len(json.dumps(spec.to_openai())) for spec in agent.registry.specs())
        fixed = estimate_tokens(len(agent.system_prompt) + tools)
    need = fixed + TURN_ROOM_TOKENS
    if window >= need:
        return
    count = len(agent.registry.specs())
    what = f"the system prompt and {count} tool schemas take ~{fixed:,} tokens"
    if window < agent.config.context_window:
        raise ConfigError(
            f"the model's server reports a context window of {window:,} tokens, too small: "
            f"{what}, and a turn needs about {need:,}. Start the server with a larger context "
            "(e.g. llama.cpp --ctx-size) or use fewer tools (a smaller profile)."
        )
    raise ConfigError(
        f"context window of {window:,} tokens is too small: {what}. Set --context-window "
        f"(context_window in the config file, RHO_AGENT_CONTEXT_WINDOW) to at least {need:,}."
    )


async def prompt_tokens(meter: ContextMeter, request: ModelRequest, window: int) -> int:
    """The meter's estimate, or the server's count when the estimate is near the window."""
    estimate = meter.estimate_tokens(request)
    if estimate < NEAR_WINDOW * window:
        return estimate
    return await meter.count_tokens(request)


def rough_tokens(system: str, messages: Sequence[Message]) -> int:
    """The harness's rough estimate (``messages.estimate_tokens``) when no meter is available."""
    return estimate_tokens(len(system) + sum(message_chars(m) for m in messages))


def summary_tokens(agent: Agent, window: int) -> int:
    """Output room for a compaction summary: a quarter of the window, at most 4,096 tokens
    and never more than the configured output limit."""
    room = min(SUMMARY_TOKENS_MAX, max(64, window // 4))
    limit = agent.config.max_output_tokens
    return min(room, limit) if limit else room


def context_full(
    window: int, tokens: int | None, reason: str, *, refused: ModelHTTPError | None = None
) -> ContextFull:
    """The error that ends a run whose context cannot be made to fit; ``refused``: the
    server's refusal, whose HTTP 413 (a request too large for the server or a proxy before
    it, in bytes) is said as itself, not as the model's window."""
    if refused is not None and refused.status == 413:
        return ContextFull(
            f"context full: {refused}; and {reason}. To continue: /compact with shorter "
            "instructions or /clear in the REPL (or a new session); send a shorter message; "
            "or raise the size limit of the server or the proxy before it."
        )
    need = f"about {tokens} tokens" if tokens else "more tokens"
    return ContextFull(
        f"context full: the next request needs {need}, the model's context window is "
        f"{window} tokens, and {reason}. To continue: /compact with shorter instructions or "
        "/clear in the REPL (or a new session); send a shorter message; or give the model a "
        "larger window (start the server with a larger context, e.g. llama.cpp --ctx-size / "
        "llama-cpp-python --n_ctx, then pass --context-window)."
    )
