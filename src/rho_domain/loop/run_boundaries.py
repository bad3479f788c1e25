"""Run boundaries: what happens once when a run starts and once when it ends, whatever happens.

``begin_run`` listens for signals, creates the stored session on first use, records
``run_start`` and answers tool calls a dead process left running. ``end_run`` answers every call
still open, records the error and ``run_end``, stops listening (clearing the run's signals: a
pause or cancel left behind, export requests answered), and builds the ``RunResult``; a durable
run that another execution owns now (``RunSuperseded``) records none of it. ``stop_the_run``
ends a run in progress from outside it, for ``Session.close``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from rho_domain import events as ev
from rho_domain.errors import RunSuperseded, SessionStateError
from rho_domain.loop.control import RunControl
from rho_domain.loop.journal import Journal
from rho_domain.loop.tally import RunTally
from rho_domain.not_run import CANCELLED_RESULT, DIED
from rho_domain.ports.store import SessionRecord
from rho_domain.run import RunResult, RunStatus


async def begin_run(
    control: RunControl,
    journal: Journal,
    record: Callable[[], SessionRecord],
    tally: RunTally,
    prompt: str | None,
) -> None:
    """Start a run. ``record`` is called after ``control.start()``, so the stored session's
    ``created_at`` is read when it is created. Store failures propagate."""
    await control.start()
    await journal.create(record())
    await journal.flush()
    await journal.emit(ev.RunStarted(at=journal.clock.now(), run_id=tally.id, prompt=prompt))
    await journal.answer_all(journal.state.unanswered_calls(), DIED)


async def end_run(
    control: RunControl,
    journal: Journal,
    tally: RunTally,
    status: RunStatus,
    error: BaseException | None,
) -> RunResult:
    """End a run and return its result. Never raises for a store failure: the result (with
    the first error's message) must still reach the caller."""
    state, clock = journal.state, journal.clock
    message = f"{type(error).__name__}: {error}" if error is not None else tally.reason
    if isinstance(error, RunSuperseded):
        journal.seal()  # the run's owner now retraces the trace as it stands, and ends the run
    with contextlib.suppress(Exception):
        await journal.answer_all(state.unanswered_calls(), CANCELLED_RESULT)
        # before run_end: whoever asked sees the answer by the time the session looks idle
        await control.answer_exports()
        if error is not None:
            await journal.emit(
                ev.ErrorOccurred(
                    at=clock.now(), error_type=type(error).__name__, message=str(error)
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
            )
        )
    except Exception as exc:  # noqa: BLE001 - the result must still reach the caller
        message = message or f"{type(exc).__name__}: {exc}"
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


async def stop_the_run(
    session_id: str,
    control: RunControl,
    run_over: asyncio.Future[None] | None,
    run_task: asyncio.Task[object] | None,
) -> None:
    """Cancel the run in progress (in ``run_task``) and wait for its end (``run_over``, set
    as ``run`` returns).
    Raises ``SessionStateError``, the run left alone, when it cannot be awaited from here: it
    runs on another event loop (another thread), or the caller is inside the run itself (a
    listener or a tool: waiting would never end)."""
    if run_over is not None and run_over.done():
        return
    here = asyncio.get_running_loop()
    if run_over is None or run_over.get_loop() is not here:
        raise SessionStateError(
            f"session {session_id} has a run in progress on another event loop (another "
            f"thread): call cancel() and wait for its run() to return there before close()"
        )
    if asyncio.current_task() is run_task:
        raise SessionStateError(
            f"close() of session {session_id} from inside its own run (a listener or a "
            f"tool) would wait for itself: cancel() the run, and close after run() returns"
        )
    control.cancel()
    await asyncio.shield(run_over)
