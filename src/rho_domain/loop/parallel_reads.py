"""Parallel read-only tool calls: a batch that changes nothing runs concurrently.

When the model asks for several calls in one turn and every one of them is read-only under the
profile and needs no approval (``Allowed``), they run at the same time, at most
``MAX_PARALLEL_READS`` at once. Everything the model and the trace see keeps the model's order:
``tool_start`` events are emitted for all calls first, in order; results (``tool_end`` and the
result message) are recorded in order once the batch is over. A batch with a call that writes,
needs approval, is denied, is unknown, or delegates runs one call at a time as before.

Cancellation is exact: a call that had finished keeps its real result, a running call is
cancelled (its executor kills its process group) and, like a call that had not started yet, is
answered as stopped (``RunControl.interrupted_result``: cancelled, or out of time).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import attrs

from rho_domain import events as ev
from rho_domain.agent import Agent
from rho_domain.approval import Allowed, decide
from rho_domain.loop.control import RunControl
from rho_domain.loop.journal import Journal
from rho_domain.loop.tool_refresh import shown_shape
from rho_domain.messages import ToolCall
from rho_domain.state import State
from rho_domain.tools.base import ToolContext, ToolOutput
from rho_domain.tools.prepared import PreparedCall
from rho_domain.value_methods import value_eq, value_hash, value_repr

if TYPE_CHECKING:
    from rho_domain.ports.durable import DurableSteps

MAX_PARALLEL_READS = 4


@attrs.frozen(kw_only=True)
class _Done:
    """One finished call: its output and how long it ran."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    output: ToolOutput
    duration: float


def runs_in_parallel(agent: Agent, state: State, calls: Sequence[PreparedCall]) -> bool:
    """True when ``calls`` has more than one call and every one is read-only and allowed."""
    if len(calls) < 2:
        return False
    for ready in calls:
        policy = ready.policy
        if policy is None or not policy.read_only:
            return False
        decision = decide(
            agent.profile,
            ready.call,
            policy,
            auto_approve=agent.config.auto_approve,
            # an "always" given to the tool shown otherwise: judged, and said, one by one
            always_allowed=state.always_allowed
            if state.always_holds(ready.name, shown_shape(agent, ready.handler))
            else frozenset(),
            decoded=ready.decoded,
        )
        if not isinstance(decision, Allowed):
            return False
    return True


async def run_parallel(
    prepared: Sequence[PreparedCall],
    *,
    agent: Agent,
    journal: Journal,
    control: RunControl,
    context_for: Callable[[ToolCall], ToolContext],
    limit: int = MAX_PARALLEL_READS,
    steps: DurableSteps | None = None,
) -> bool:
    """Run ``calls`` concurrently (at most ``limit`` at once); False when cancelled.

    Every call ends with exactly one ``tool_end`` and one result message, in the model's order.
    """
    calls = [ready.call for ready in prepared]
    clock = journal.clock
    for call in calls:
        await journal.emit(ev.ToolStarted(at=clock.now(), call=call))
    gate = asyncio.Semaphore(max(limit, 1))

    async def one(ready: PreparedCall) -> _Done:
        async with gate:
            started = clock.monotonic()
            output = await agent.registry.dispatch(
                ready, context_for(ready.call), timeout=agent.config.tool_timeout
            )
            return _Done(output=output, duration=clock.monotonic() - started)

    tasks: list[asyncio.Future[_Done]] = []

    async def batch() -> tuple[_Done, ...]:
        tasks.extend(asyncio.ensure_future(one(ready)) for ready in prepared)
        return tuple(await asyncio.gather(*tasks))

    # A durable run records the batch as one step: its reads finish in any order, while a
    # run executed again must ask for its steps in the same order.
    running = asyncio.ensure_future(batch() if steps is None else steps.once("reads", batch))
    finished = await control.race(running)
    recorded = running.result() if finished else ()
    for index, call in enumerate(calls):
        done: _Done | None
        if recorded:
            done = recorded[index]
        else:
            task = tasks[index] if index < len(tasks) else None
            done = task.result() if task and task.done() and not task.cancelled() else None
        if done is None:
            content, is_error = control.interrupted_result, True
            metadata, duration = {"cancelled": True}, 0.0
        else:  # the after-tool hooks, one call at a time, in the model's order
            output = done.output
            if agent.hooks.after_tool:
                from rho_domain.loop.hooks_applied import after_tool

                output = await after_tool(agent.hooks, journal, call, output)
            content, is_error = output.content, output.is_error
            metadata, duration = dict(output.metadata), done.duration
        await journal.emit(
            ev.ToolEnded(
                at=clock.now(),
                call_id=call.id,
                tool_name=call.name,
                content=content,
                is_error=is_error,
                duration=duration,
                metadata=metadata,
            )
        )
        await journal.result(call, content, is_error)
    if not finished:
        names = ", ".join(call.name for call in calls)
        why = "" if control.cancelled else ": out of time"
        await journal.emit(
            ev.Interrupted(
                at=clock.now(), reason="cancelled", detail=f"during parallel tools {names}{why}"
            )
        )
    return finished
