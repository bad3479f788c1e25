"""The seeds' prompt functions over a started ``AgentRuntime``: ``dispatch_prompt`` (a run in
the background, its ``AgentHandle`` returned at once; or, ``durable=True``, a run on the
runtime's queue for any host's worker, its ``DurableHandle``) and ``run_prompt`` (the same,
waited for: its ``RunResult``). Where a prompt runs and what is refused is said on each."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any, Literal, overload

from rho_domain.run import RunResult
from rho_entry.durable.handle import DurableHandle
from rho_entry.runtime.core import AgentRuntime
from rho_entry.runtime.handle import AgentHandle

__all__ = ["dispatch_prompt", "run_prompt"]


@overload
async def dispatch_prompt(
    runtime: AgentRuntime,
    prompt: str | None,
    *,
    session_id: str | None = None,
    new_session: bool = False,
    max_turns: int | None = None,
    labels: Mapping[str, str] | None = None,
    output_schema: Mapping[str, Any] | None = None,
    durable: Literal[False] = False,
) -> AgentHandle: ...


@overload
async def dispatch_prompt(
    runtime: AgentRuntime,
    prompt: str | None,
    *,
    session_id: str | None = None,
    new_session: bool = False,
    max_turns: int | None = None,
    labels: Mapping[str, str] | None = None,
    output_schema: Mapping[str, Any] | None = None,
    durable: Literal[True],
) -> DurableHandle: ...


async def dispatch_prompt(
    runtime: AgentRuntime,
    prompt: str | None,
    *,
    session_id: str | None = None,
    new_session: bool = False,
    max_turns: int | None = None,
    labels: Mapping[str, str] | None = None,
    output_schema: Mapping[str, Any] | None = None,
    durable: bool = False,
) -> AgentHandle | DurableHandle:
    """Start ``prompt`` in the background and return its ``AgentHandle`` at once.

    Where it runs: in the runtime's own session (``runtime.session_id``) by default, so
    prompts dispatched one after another continue one conversation; in a new session of its
    own with ``new_session=True`` (a service with many conversations; its id is
    ``handle.session_id``); or in the stored session ``session_id`` names (needs a store).
    A session in use by a handle that is not done cannot be dispatched again
    (``SessionStateError``): await that handle, or use ``new_session=True``.

    ``prompt=None`` continues a session without a new message: if calls wait for approval
    there (an earlier run, maybe another process), the handle settles ``awaiting_approval``
    with them in ``pending_approvals``, for ``approve``/``deny``; if the model has given its
    final answer there and nothing is pending, it ends ``completed`` at once, with no run
    (another process may have answered and finished it meanwhile). ``labels`` label a
    session created by this dispatch.

    ``output_schema`` shapes this session's final answers (``AgentConfig.output_schema``,
    docs/structured-output.md) over the runtime's own; ``ConfigError`` for a schema with a
    keyword that is not checked.

    ``durable=True`` puts it on the runtime's queue instead (``create_runtime(durable_db=)``)
    for a worker on any host, in a new session unless ``session_id`` names one, and returns
    a ``DurableHandle`` (``wait``, ``status``, ``approve``, ``deny``); ``max_turns``,
    ``labels`` and ``output_schema`` are then the worker's.

    When the runtime is full, waits for room or raises ``RuntimeFull`` (``when_full``).
    Raises ``RuntimeClosed`` before ``start_runtime`` or after ``close_runtime``.
    """
    if durable:
        return await _enqueue(runtime, prompt, session_id)
    return await runtime.dispatch(
        prompt,
        session_id=session_id,
        new_session=new_session,
        max_turns=max_turns,
        labels=labels,
        output_schema=output_schema,
    )


async def _enqueue(
    runtime: AgentRuntime, prompt: str | None, session_id: str | None
) -> DurableHandle:
    """``dispatch_prompt(durable=True)``: the run on the runtime's queue."""
    from rho_domain.errors import ConfigError
    from rho_entry.config.stores import control_of
    from rho_entry.durable.queueing import enqueue_prompt, open_queue

    if runtime.durable is None or runtime.store is None:
        raise ConfigError(
            "dispatch_prompt(durable=True) needs create_runtime(durable_db=..., store=...): "
            "the queue's database and the session store the workers share"
        )
    database, name = runtime.durable
    queue = open_queue(database, queue=name)
    run = await enqueue_prompt(queue, prompt, session_id=session_id)
    control = control_of(runtime.store)  # how the handle's cancel reaches a started run
    return DurableHandle(queue, runtime.store, run.session_id, run.run_id, control=control)


async def run_prompt(
    runtime: AgentRuntime,
    prompt: str | None,
    *,
    session_id: str | None = None,
    new_session: bool = False,
    max_turns: int | None = None,
    labels: Mapping[str, str] | None = None,
    output_schema: Mapping[str, Any] | None = None,
) -> RunResult:
    """Dispatch ``prompt`` (where: as ``dispatch_prompt``, by default the runtime's own
    session) and wait for its ``RunResult`` (status ``awaiting_approval`` when a call waits
    for a human: the next prompt or ``prompt=None`` continues it, or use a handle)."""
    handle = await dispatch_prompt(
        runtime,
        prompt,
        session_id=session_id,
        new_session=new_session,
        max_turns=max_turns,
        labels=labels,
        output_schema=output_schema,
    )
    try:
        result = await handle
    except asyncio.CancelledError:
        handle.cancel()
        raise
    if not handle.done:  # awaiting approval: release the session so it can be continued
        handle.cancel()
        await handle.wait_done()
    return result
