"""Run boundaries: what happens once when a run starts and once when it ends, whatever happens.

``bounded_run`` is a run's frame (``Session.run``'s, after its guards): the model's context
window asked ahead, ``begin_run``, the budget watch and ``Turns.drive``, then ``end_run``
whatever happened, and the ``after_run`` hooks. ``begin_run`` listens for signals, creates the
stored session on first use, records ``run_start`` and answers tool calls a dead process left
running. Between them the executor tells the trace the sandbox it makes (``Placed``).
``end_run`` answers every call still open, records the error and ``run_end``, stops
listening (clearing the run's signals: a pause or cancel left behind, export requests
answered), and builds the ``RunResult``; a durable run that another execution owns now
(``RunSuperseded``) records none of it. A run in progress is ended from outside it by
``run_gate.stop_the_run``, for ``Session.close``.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, cast

from rho_domain import events as ev
from rho_domain.errors import PlacementFailed, RunSuperseded
from rho_domain.loop.context_fit import ask_window_ahead, settle
from rho_domain.loop.control import RunControl
from rho_domain.loop.journal import Journal
from rho_domain.loop.tally import RunTally
from rho_domain.loop.turns import Turns, budget_watch
from rho_domain.not_run import CANCELLED_RESULT, DIED, ENDED_UNRECORDED, ended_by
from rho_domain.placement import Placement
from rho_domain.plugged import described, message_of
from rho_domain.ports.store import SessionRecord
from rho_domain.run import RunResult, RunStatus
from rho_domain.tools.base import WriteTally

if TYPE_CHECKING:
    from typing import Protocol

    from rho_domain.loop.turns import RefreshTools, TurnSession
    from rho_domain.ports.executor import Executor, PlacementTold

    class FramedSession(TurnSession, Protocol):
        """What a run's frame uses of its session (``rho_domain.loop.session.Session``)."""

        last_result: RunResult | None
        executor: Executor


async def bounded_run(
    session: FramedSession,
    tally: RunTally,
    prompt: str | None,
    max_turns: int | None,
    *,
    record: Callable[[], SessionRecord],
    refresh_tools: RefreshTools,
    ended: Callable[[], None],
) -> RunResult:
    """Run ``session``'s turns for ``prompt`` between ``begin_run`` and ``end_run`` and return
    the result, also kept in ``session.last_result``; ``ended`` is called once the run has
    ended, before the ``after_run`` hooks. ``max_turns`` as ``Session.run`` takes it; failures
    end the run with status ``error`` (never raised), cancellation is re-raised once the run
    has ended; ``record``: see ``begin_run``, ``refresh_tools``: see ``Turns``."""
    control, journal = session.control, session.journal
    status: RunStatus = RunStatus.ERROR
    error: BaseException | None = None
    ahead = ask_window_ahead(session.model)  # beside the run's start (context_fit)
    before: PlacementTold | object | None = _UNTOLD  # nothing registered: nothing to give back
    try:
        await begin_run(control, journal, record, tally, prompt, where=session.executor)
        # a sandbox made by this run is named the moment it exists; a sub-agent's run on
        # the same executor gives the parent's back when it ends
        before = _tell_places(session.executor, functools.partial(_record_placed, journal))
        # limits.run_written_mib counts from here; a sub-agent's writes in its parent run's
        session.tools.written = session.tools.counted_in or WriteTally()
        session.tools.unplaced = None
        watch = budget_watch(session.agent.config.budget, session.state, tally.started)
        control.deadline = watch.deadline() if watch is not None else None
        limit = session.agent.config.max_turns if max_turns is None else max_turns
        tally.max_turns = limit or None  # what a sub-agent may use of it (sub_agents)
        turns = Turns(session, refresh_tools, tally, watch)
        driven = await turns.drive(prompt, limit or None)
        if driven is RunStatus.COMPLETED:
            _check_placed(session.tools.unplaced, _placement(session.executor))
        status = driven
    except asyncio.CancelledError:
        status = RunStatus.CANCELLED
        raise
    except Exception as exc:  # noqa: BLE001 - every failure must still end the run cleanly
        error = exc
    except BaseException as exc:  # KeyboardInterrupt: still raised, but the run says why
        error = exc
        raise
    finally:
        try:
            if before is not _UNTOLD:
                _tell_places(session.executor, cast("PlacementTold | None", before))
            if ahead is not None:
                await settle(ahead)
            ended_run = end_run(control, journal, tally, status, error, where=session.executor)
            result = session.last_result = await ended_run
        finally:  # a cancel landing in end_run (its fsync) still ends the run here
            ended()
    if session.agent.hooks.after_run:
        from rho_domain.loop.hooks_applied import after_run  # with the first hook

        with contextlib.suppress(Exception):  # a store failure: the result still returns
            await after_run(session.agent.hooks, journal, result)
    return result


async def begin_run(
    control: RunControl,
    journal: Journal,
    record: Callable[[], SessionRecord],
    tally: RunTally,
    prompt: str | None,
    *,
    where: Executor | None = None,
) -> None:
    """Start a run. ``record`` is called after ``control.start()``, so the stored session's
    ``created_at`` is read when it is created; ``where``'s placement is recorded (none when
    None). Store failures propagate."""
    await control.start()
    await journal.create(record())
    await journal.flush()
    if journal.state.open_run is not None and not journal.replaying:
        await _end_unrecorded(journal)
    placement = _placement(where)
    started = ev.RunStarted(
        at=journal.clock.now(), run_id=tally.id, prompt=prompt, placement=placement
    )
    await journal.emit(started)
    await journal.answer_all(journal.state.unanswered_calls(), DIED)


async def _end_unrecorded(journal: Journal) -> None:
    """End the run the trace leaves open (a ``run_start`` with no ``run_end``), before a new
    one starts: its process stopped, or its store refused the ``run_end`` at close and the
    session object that kept it is gone. The session is opened, so no live process holds it
    (the store's claim): the run is over, and its end is said as unrecorded, at its last
    event (its runs' time counts none of the time since). Before, the next run began with
    the earlier one still open: the trace, ``stats`` and the server's counts read it as
    running for good, and a trace reader found two runs started and one ended."""
    state = journal.state
    await journal.answer_all(state.unanswered_calls(), DIED)
    at = state.last_at if state.last_at is not None else journal.clock.now()
    ended = ev.RunEnded(
        at=at,
        run_id=state.open_run or "",
        status=RunStatus.ERROR,
        session_usage=state.usage,
        error=ENDED_UNRECORDED,
    )
    await journal.emit(ended)


_UNTOLD = object()  # bounded_run's executor was given no recorder (yet)


def _check_placed(unplaced: str | None, placement: Placement | None) -> None:
    """Raise ``PlacementFailed`` when a call of the run failed for want of the executor's
    place (``unplaced``: its result) and the place was never made: the model's answer
    stands on calls that all failed, which a caller must tell from a run that did its work
    (the CLI exits 2, ``RunResult.ok`` is False). A place made by a later call clears it."""
    if unplaced is None or (placement is not None and placement.id is not None):
        return
    where = f"the {placement.backend} sandbox" if placement is not None else "the executor's place"
    raise PlacementFailed(
        f"{where} could not be made, so every tool call that needed it failed: {unplaced}"
    )


def _tell_places(where: Executor, told: PlacementTold | None) -> PlacementTold | object | None:
    """``where.on_placed(told)``; ``_UNTOLD`` when the executor cannot (one of an older
    release without the member): its place is recorded at ``run_end``, as before."""
    try:
        return where.on_placed(told)
    except Exception:  # noqa: BLE001 - a listing's record never ends a run
        return _UNTOLD


async def _record_placed(journal: Journal, placement: Placement) -> None:
    """Record ``placement`` (``Executor.on_placed``), written before the executor goes on."""
    await journal.emit(ev.Placed(at=journal.clock.now(), placement=placement))


async def end_run(
    control: RunControl,
    journal: Journal,
    tally: RunTally,
    status: RunStatus,
    error: BaseException | None,
    *,
    where: Executor | None = None,
) -> RunResult:
    """End a run and return its result, recording ``where``'s placement as it is now (a
    sandbox the run created is named). Never raises for a store failure: the result (with
    the first error's message) must still reach the caller."""
    state, clock = journal.state, journal.clock
    message = _told(error) if error is not None else tally.reason
    if isinstance(error, RunSuperseded):
        journal.seal()  # the run's owner now retraces the trace as it stands, and ends the run
    with contextlib.suppress(Exception):
        stopped = error is None or isinstance(error, KeyboardInterrupt)
        left = CANCELLED_RESULT if stopped else ended_by(message or type(error).__name__)
        await journal.answer_all(state.unanswered_calls(), left)
        # before run_end: whoever asked sees the answer by the time the session looks idle
        await control.answer_exports()
        if error is not None:
            await journal.emit(
                ev.ErrorOccurred(
                    at=clock.now(),
                    error_type=type(error).__name__,
                    message=message_of(error) or _told(error),
                )
            )
    try:
        await journal.emit(
            ev.RunEnded(
                at=clock.now(),
                run_id=tally.id,
                status=status,
                text=tally.text,
                usage=tally.usage,
                session_usage=state.usage,
                error=message,
                output=tally.output,
                placement=_placement(where),
            )
        )
    except Exception as exc:  # noqa: BLE001 - the result must still reach the caller
        # a completed run's result said only the store's exception (its message perhaps
        # unreadable), its error_type None: not what failed, nor that nothing is lost
        message = message or (
            f"the run ended {status.value} but its run_end was not stored: {described(exc)}; "
            "it stays queued and is written by the next write or the session's close"
        )
        error = error or exc
    await control.stop()
    pending = state.waiting_approvals()
    return RunResult(
        session_id=journal.session_id,
        run_id=tally.id,
        status=status,
        text=tally.text,
        usage=tally.usage,
        session_usage=state.usage,
        error=message,
        error_type=type(error).__name__ if error is not None else None,
        pending=pending if status is RunStatus.AWAITING_APPROVAL else (),
        output=tally.output,
    )


def _told(error: BaseException) -> str:
    """The message a run ended by ``error`` records. A ``KeyboardInterrupt`` (a second
    Ctrl+C, or one raised by a tool's code) has none of its own: the run ended ``error`` with
    no word of why."""
    if isinstance(error, KeyboardInterrupt):
        return (
            f"{described(error)}: the run was interrupted (a second Ctrl+C, or code it called "
            "raised KeyboardInterrupt); resume the session to go on"
        )
    return described(error)


def _placement(where: Executor | None) -> Placement | None:
    """``where``'s placement; None when there is no executor or it cannot say (an executor
    of an older release without the member, or one whose property fails): a run is never
    ended by what only a listing shows."""
    if where is None:
        return None
    try:
        return where.placement
    except Exception:  # noqa: BLE001 - see above
        return None
