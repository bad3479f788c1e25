"""Durable runs: a run that outlives the process driving it, as ports.

Two roles. ``DurableSteps`` is what the loop sees while a durable run executes: each model
call and each tool call is a step run once, whose result is remembered, so that a run
re-executed after its worker died gets the results of the steps that had finished without
doing them again. ``RunQueue`` is what a caller sees: put a run on a queue that workers on
any host consume, answer the approvals a queued run waits for, read its status.

The domain never knows the engine behind them (``rho_adapters.durable`` is DBOS); a session
without ``DurableSteps`` runs every step directly, as always.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Awaitable, Callable, Collection, Mapping
from typing import TYPE_CHECKING, Protocol, TypeVar

import attrs

from rho_domain.value_methods import value_eq, value_hash, value_repr

if TYPE_CHECKING:
    from rho_domain.errors import ConfigError

T = TypeVar("T")

# whether the queue holds a cancel of the run a worker runs (``RunQueue.cancel_asked`` of it)
CancelAsked = Callable[[], Awaitable[bool]]


class DurableSteps(Protocol):
    """Runs a durable run's steps once each, in the order the run asks for them."""

    @abstractmethod
    async def once(self, name: str, run: Callable[[], Awaitable[T]]) -> T:
        """The result of this step: ``run()``'s, remembered.

        When an earlier execution of the run recorded this step's result, that result is
        returned and ``run`` is not called; otherwise ``run`` is called (again, if an earlier
        execution died inside it: the caller decides beforehand what ``run`` does then, from
        the trace). Steps are identified by their order in the run; ``name`` must be the same
        when the run is executed again (an engine refuses a different one). An exception from
        ``run`` propagates and is not recorded: the next execution calls ``run`` again."""


@attrs.frozen(kw_only=True)
class QueuedRun:
    """A prompt for a stored session, to run on a worker.

    ``run_id`` names the run everywhere (the trace's ``run_start`` and the engine's workflow);
    ``session_id`` is a session in the shared store, new or existing; ``prompt`` None continues
    the session (its approvals answered). ``settings`` are the worker-side overrides of the
    stored config (model, profile) as the resume policy understands them."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    run_id: str
    session_id: str
    prompt: str | None
    settings: Mapping[str, str] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class CancelledRun:
    """What ``RunQueue.cancel_queued`` cancelled: the run ``run_id``, and whether a worker had
    taken it (``taken``: its cancel is recorded for it, and it ends ``cancelled`` once its
    run starts, ``RunQueue.cancel_asked``) or it still waited (it never runs)."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    run_id: str
    taken: bool


class RunQueue(Protocol):
    """A named queue of durable runs, consumed by workers on any host."""

    @abstractmethod
    async def enqueue(self, run: QueuedRun) -> None:
        """Put ``run`` on the queue. Enqueuing the same ``run_id`` twice runs it once. One
        run of a session at a time: raises ``SessionStateError`` while another run of
        ``run.session_id`` is queued or running (one that waits for approval has ended)."""

    @abstractmethod
    async def answer(
        self,
        run_id: str,
        answers: Mapping[str, bool],
        *,
        reasons: Mapping[str, str],
        always: Collection[str] = (),
        digests: Mapping[str, str] | None = None,
    ) -> str:
        """Answer the approvals the run ``run_id`` waits for (call id → approved; a rejection's
        reason in ``reasons``; ``digests``: call id → the digest of the call as its answerer
        was shown it, ``rho_domain.call_digest``, which the worker checks against the call it
        resumes: an approval without one, or of a call changed since, is not taken and the
        call waits again): the session continues in a new run on a worker with capacity
        (a run waiting for approval holds no worker slot); its id. ``always`` names tools
        allowed without asking from then on: in that continuation and every continuation of
        it (as "always" holds for the rest of a run that is not durable). A run is answered
        once: answering it again with the same answers returns the same continuation, with
        other answers raises ``SessionStateError`` naming the answers it already has. Raises
        ``SessionStateError`` when the run does not wait for approval."""

    @abstractmethod
    async def cancel_queued(self, session_id: str) -> CancelledRun | None:
        """Cancel the run of ``session_id`` that is on the queue; what was cancelled, None
        when no run of the session is queued or running (none at all, or every one ended).

        A run no worker took yet never runs: its status is ``cancelled`` and the session may
        be queued again at once (``taken`` False). A run a worker took (``taken`` True) may
        not have opened its session yet, and a run clears the session's stop signal as it
        starts: its cancel is recorded on the queue for that run id (``cancel_asked``), which
        the run reads once it has started, so it ends ``cancelled`` whenever its worker opens
        the session. The caller also requests the session's stop signal after this (a run
        started before the record reads that one): between them, no timing loses it."""

    @abstractmethod
    async def cancel_asked(self, run_id: str) -> bool:
        """True when ``cancel_queued`` cancelled the run ``run_id`` while a worker had it and
        the run has not ended yet: what the worker's run reads once it has started (after
        clearing the session's stop signal), and ends ``cancelled`` for. False for any other
        run, known or not, and once the run has ended (the record is forgotten with it)."""

    @abstractmethod
    async def status(self, run_id: str) -> str | None:
        """The run's status (``queued``, ``running``, ``awaiting_approval`` or a final
        ``RunStatus`` value); None for a run this queue never had."""

    @abstractmethod
    async def statuses(self, run_ids: Collection[str]) -> Mapping[str, str | None]:
        """Each run's status as ``status`` gives it (None for a run this queue never had),
        read at once: a caller waiting on many runs asks once per poll, not once per run."""

    @abstractmethod
    async def wait(self, run_id: str, timeout: float) -> str:
        """Wait until the run settles (ends, or waits for approval); its status. Raises
        ``TimeoutError`` after ``timeout`` seconds."""


class InlineSteps(DurableSteps):
    """Steps run directly, nothing remembered: what a session does without durability."""

    async def once(self, name: str, run: Callable[[], Awaitable[T]]) -> T:
        """``run()``, every time."""
        return await run()


def wrong_session(queued: QueuedRun, resolved: str | None = None) -> ConfigError | None:
    """The refusal of a queued run whose session id does not name one session exactly: not
    an id as ``run.new_id`` makes them (a store resolves ``latest`` or a path), or resolved by
    the store to another session (``resolved``: the id it opened, from a unique prefix); None
    when it does. A queue is data: its id is never a person's shorthand."""
    from rho_domain.errors import ConfigError
    from rho_domain.run import is_plain_id

    named = f"queued run {queued.run_id} names session {queued.session_id!r}, which"
    if not is_plain_id(queued.session_id):
        why = f"{named} is not a session id"
    elif resolved is not None and resolved != queued.session_id:
        why = f"{named} the store resolves to session {resolved}"
    else:
        return None
    return ConfigError(
        f"{why}: a queued run names its session by its exact id (a prefix, latest or a path "
        "is a person's shorthand, not the queue's); nothing was run"
    )
