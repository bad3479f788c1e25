"""What surrounds an ``AgentHandle``: where it is (``HandleStatus``), the owner of a
finished handle (``FINISHED``: it opens nothing and is told nothing; a live handle's owner
is the runtime), and the ``RunResult``s a handle makes without a run: cancelled before or
between runs, an error before the run (its session would not open), calls still waiting
since an earlier run (a handle reopened on a session whose calls are undecided), and a
conversation the model has finished (``finished``); ``without_run`` chooses among them. Each
carries the session's usage so far.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Protocol

import attrs

from rho_domain import events as ev
from rho_domain.errors import SessionStateError
from rho_domain.messages import AssistantMessage, Usage
from rho_domain.run import PendingApproval, RunResult, RunStatus, new_id

if TYPE_CHECKING:
    from rho_domain.ports.signals import SignalSource
    from rho_domain.state import State
    from rho_entry.facade import Session
    from rho_entry.seed_api.state import State as DocumentState


class HandleOwner(Protocol):
    """What a handle calls back in the runtime that dispatched it (one object per handle,
    not three callbacks: each would be an object the garbage collector walks)."""

    def open_session(self, listener: Callable[[ev.Event], None]) -> Awaitable[Session]:
        """Open the handle's session with ``listener`` subscribed to its events."""

    def on_done(self, handle: Any) -> None:  # an AgentHandle (handle.py sits a floor up)
        """The handle reached a final status (called once)."""

    def leave_queue(self) -> None:
        """The handle gives its place back: it is done or awaits a human (idempotent)."""


class _Finished:
    """The owner of a finished handle: it opens nothing and is told nothing."""

    __slots__ = ()

    async def open_session(self, listener: Callable[[ev.Event], None]) -> Session:
        raise SessionStateError("a finished handle opens no session")

    def on_done(self, handle: object) -> None:
        """Nothing: the runtime was told when the handle finished."""

    def leave_queue(self) -> None:
        """Nothing: the place was given back when the handle finished."""


FINISHED = _Finished()


class HandleStatus(StrEnum):
    """Where a handle is. The last six are final and match ``RunStatus``."""

    QUEUED = "queued"
    RUNNING = "running"
    AWAITING_APPROVAL = "awaiting_approval"
    COMPLETED = "completed"
    CANCELLED = "cancelled"
    MAX_TURNS = "max_turns"
    BUDGET_EXCEEDED = "budget_exceeded"
    ERROR = "error"
    STUCK = "stuck"


def empty_result(
    session_id: str, session: Session | None, status: RunStatus, error: str | None, kind: str | None
) -> RunResult:
    """A result with no text and no usage of its own: ``status``, and ``error`` of type
    ``kind`` when given; ``session``'s usage so far (none without a session)."""
    usage = session.state.usage if session is not None else Usage()
    return RunResult(
        session_id=session_id,
        run_id=new_id(),
        status=status,
        text="",
        usage=Usage(),
        session_usage=usage,
        error=error,
        error_type=kind,
    )


def cancelled_result(
    previous: RunResult | None, session_id: str, session: Session | None
) -> RunResult:
    """The handle's ``previous`` result when it already says cancelled, else a new one."""
    if previous is not None and previous.status is RunStatus.CANCELLED:
        return previous
    return empty_result(session_id, session, RunStatus.CANCELLED, None, None)


def asked_again() -> bool:
    """Whether the current task was asked to stop more than once (a handle's ``cancel`` ended
    its wait for a run slot, and ``abort`` came too): ``cancel``'s request is taken back
    (``Task.uncancel``), and True says the rest must be raised."""
    task = asyncio.current_task()
    return task is None or task.uncancel() > 0


def unclosed_result(result: RunResult, failure: Exception) -> RunResult:
    """``result`` of a run whose session then failed to close (its last events not written:
    a full disk, a store gone), the failure added to its ``error``: raised instead, it ended
    the handle's task, which nobody awaits ("Task exception was never retrieved" in the
    service's log, at the collector's whim), and a run whose own result said nothing of it
    stayed ``completed`` with no word that its end was never stored."""
    said = f"{type(failure).__name__}: {failure}"
    if result.error is None:
        error = f"closing the session failed: {said}"
    else:
        error = f"{result.error}; then closing the session failed: {said}"
    return attrs.evolve(result, error=error, error_type=result.error_type or type(failure).__name__)


def waiting_result(session_id: str, session: Session | None) -> RunResult:
    """Awaiting approval, pending the calls ``session`` still waits on (each with the digest
    its answer must carry), without a run."""
    waiting = session.state.awaiting_decision() if session is not None else ()
    return attrs.evolve(
        empty_result(session_id, session, RunStatus.AWAITING_APPROVAL, None, None),
        pending=tuple(
            PendingApproval(
                call=call,
                reason="waiting since an earlier run",
                digest="" if session is None else session.state.approval_digest(call),
                working_dir="" if session is None else session.state.asked_places.get(call.id, ""),
            )
            for call in waiting
        ),
    )


async def without_run(
    session_id: str,
    session: Session | None,
    prompt: str | None,
    previous: RunResult | None,
    cancelled: Callable[[], bool],
) -> RunResult | None:
    """The result of a handle's segment that runs nothing, or None when ``prompt`` must run on
    ``session`` (None: it was not opened). ``previous`` is the handle's last result;
    ``cancelled`` says whether the handle was cancelled (asked again after each wait). A
    cancelled handle without a prompt ends cancelled: it asked nothing the store does not
    hold. One with a prompt runs it, to be recorded cancelled (``AgentHandle._heard``)."""
    if session is None or (prompt is None and cancelled()):
        return cancelled_result(previous, session_id, session)
    if prompt is not None or previous is not None:
        return None
    if session.state.awaiting_decision():  # reopened with calls still undecided
        return waiting_result(session_id, session)
    if await finished(session):  # reopened on a finished conversation: no run
        return empty_result(session_id, session, RunStatus.COMPLETED, None, None)
    return cancelled_result(previous, session_id, session) if cancelled() else None


def still_pending(session: Session | None, result: RunResult | None) -> tuple[PendingApproval, ...]:
    """``result``'s pending calls that ``session`` still waits on (a handle awaiting approval)."""
    if session is None or result is None:
        return ()
    waiting = {call.id for call in session.state.awaiting_decision()}
    return tuple(p for p in result.pending if p.call.id in waiting)


def nothing_to_continue(state: State | DocumentState) -> bool:
    """Whether ``state`` has nothing to continue without a new message: no call pending, and
    no message yet or the model's last one a final answer. Not so when the last message is a
    tool's result or the user's (a run that failed or stopped before the model's next call):
    that conversation is continued as it is, so the model sees what it has not answered."""
    last = state.messages[-1] if state.messages else None
    if state.pending_calls:
        return False
    return last is None or (isinstance(last, AssistantMessage) and not last.tool_calls)


async def finished(session: Session) -> bool:
    """Whether ``session`` has nothing to continue without a new message (``nothing_to_
    continue``), and no operator directive queued since its last run (a run applies it
    before its first model call; ``monitor directive`` on an idle session waits for that
    run). A handle
    reopened on it (``prompt=None``) runs nothing: run, it sent the whole conversation again
    for an answer nobody asked for. Two servers answering one call each saw it pending in
    the store; the one that opened the session second, after the first had run it to its
    end, continued it with a model call."""
    return await settled(session.state, session.signals, session.id)


async def settled(
    state: State | DocumentState, signals: SignalSource | None, session_id: str
) -> bool:
    """Whether the stored session ``session_id`` (its ``state``) has nothing to continue
    without a new message and no directive queued in ``signals`` since its last run: the
    one test a reopened handle (``finished``) and the server's prompt-less resume share. The
    server asked ``nothing_to_continue`` alone, so ``POST .../resume {}`` answered 404 on a
    session whose operator had queued a directive that a handle reopened on it applied."""
    if not nothing_to_continue(state):
        return False
    if signals is None:
        return True
    return not await signals.directives(session_id, after=state.directive_offset)
