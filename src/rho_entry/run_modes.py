"""The library Session's ways of running beyond the domain's ``run``.

- ``run_recording``: a run that keeps every event in ``RunResult.events`` (``record_events``);
- ``approval_interrupt``: the design documents' ``ApprovalInterrupt`` for a run that ended
  ``awaiting_approval`` with no one to ask;
- ``run_blocking`` and ``refuse_inside_a_loop``: ``run_sync`` for scripts, refused inside a
  running event loop (as ``replay`` is).

Imported by the run that needs one of them: a one-shot (no recording, no interrupt, no
blocking call) never loads this module.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

import attrs

if TYPE_CHECKING:
    from rho_domain import events as ev
    from rho_domain.loop import session as domain_session
    from rho_domain.loop.journal import Listener
    from rho_domain.ports.approver import ApprovalInterrupt
    from rho_domain.run import RunResult


async def run_recording(
    domain: domain_session.Session,
    prompt: str | None,
    *,
    max_turns: int | None,
    on_event: Listener | None,
    run_id: str | None,
) -> RunResult:
    """``domain.run``, its result carrying every event of the run (``events``); ``on_event``
    hears them too."""
    seen: list[ev.Event] = []
    # the caller's listener stays a listener of its own (not wrapped), so that a failure
    # of it is reported under its name and never costs the recorded events
    listeners = domain.journal.listeners
    if on_event is not None:
        listeners.append(on_event)
    try:
        result = await domain.run(prompt, max_turns=max_turns, on_event=seen.append, run_id=run_id)
    finally:
        if on_event is not None:
            listeners.remove(on_event)
    return attrs.evolve(result, events=tuple(seen))


def approval_interrupt(result: RunResult) -> ApprovalInterrupt:
    """The ``ApprovalInterrupt`` a run that ended ``awaiting_approval`` raises: the waiting
    calls by name and id, and how to answer them."""
    from rho_domain.ports.approver import ApprovalInterrupt

    names = ", ".join(f"{p.call.name} ({p.call.id})" for p in result.pending)
    return ApprovalInterrupt(
        f"tool calls wait for approval: {names}; answer each with "
        "session.resolve_approval(call_id, approved) and call session.run() again",
        pending=result.pending,
        result=result,
    )


def run_blocking(
    run: Callable[[], Awaitable[RunResult]], close: Callable[[], Awaitable[None]]
) -> RunResult:
    """``await run()`` to its end in an event loop of its own, then ``await close()``
    (``Session.run_sync``: the session's run, then its close)."""
    import asyncio

    refuse_inside_a_loop("run_sync", "await session.run(...)")

    async def _run() -> RunResult:
        try:
            result = await run()
        except BaseException as exc:
            # The run's own error is the one to tell: a run_sync refused because another
            # thread's run is in progress raised close()'s refusal instead ("... before
            # close()"), the refusal of the call made hidden behind it.
            try:
                await close()
            except Exception as failure:  # noqa: BLE001 - told with the run's error
                exc.add_note(f"closing the session afterwards failed too: {failure}")
            raise
        await close()
        return result

    return asyncio.run(_run())


def refuse_inside_a_loop(name: str, instead: str) -> None:
    """Raise ``SessionStateError`` naming ``instead`` when called inside a running event loop
    (async code, a notebook cell): a blocking call's ``asyncio.run`` would fail there with
    asyncio's own words and leave its coroutine unawaited. Checked before the coroutine is
    made."""
    import asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return  # no loop here: the caller makes its own
    from rho_domain.errors import SessionStateError

    raise SessionStateError(
        f"{name} cannot run inside a running event loop (async code, a notebook); "
        f"use {instead} instead"
    )
