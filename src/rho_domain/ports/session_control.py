"""SessionCatalog and SessionControl: what an operator does to stored sessions, not the loop.

The loop writes through ``SessionStore`` and listens through ``SignalSource``. Everyone else (a
monitor, a server listing sessions another host started, ``kill``, ``export``, ``connect``)
reads and signals through these two ports, whatever keeps the sessions: files in one config
directory, or PostgreSQL shared by many hosts.

Liveness is judged here, once, and has two questions with two names:

- ``run_in_progress(liveness)``: a run is going on now (``running`` or ``paused``): a cancel
  has someone to stop, a followed trace will grow.
- ``held_by_live_process(liveness)``: some live process holds the session (a run in progress,
  or open and ``idle`` between runs): it cannot be driven from here. ``can_be_driven`` is its
  negation.

``judge_liveness`` turns an adapter's facts (the status the trace reached, whether a holder is
recorded and still beating, a pause request) into the one word every listing shows.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import AsyncIterator, Mapping
from typing import Literal, Protocol

from rho_domain import events as ev
from rho_domain.errors import ConfigError, StoreError
from rho_domain.ports.store import SessionInfo, SessionRecord
from rho_domain.ports.stored_approvals import PendingApproval as PendingApproval
from rho_domain.ports.stored_approvals import answer_through as answer_through
from rho_domain.ports.stored_approvals import approval_answer as approval_answer
from rho_domain.ports.stored_approvals import pending_approvals as pending_approvals
from rho_domain.ports.trace_reads import TraceLine as TraceLine
from rho_domain.ports.trace_reads import TraceRead, TraceTail, reads_by_digest

RUN_IN_PROGRESS = frozenset({"running", "paused"})
"""Liveness words that mean a run is going on now."""

HELD = RUN_IN_PROGRESS | {"idle"}
"""Liveness words that mean a live process holds the session (driving it or open between runs)."""

Signal = Literal["cancel", "pause", "resume"]


def check_request_id(request_id: str) -> None:
    """Raise ``StoreError`` unless ``request_id`` is a plain id (``is_plain_id``): a store
    makes a file or a row of it."""
    from rho_domain.run import is_plain_id

    if not is_plain_id(request_id):
        raise StoreError(
            f"an export request id is ASCII letters, digits, - and _; got {request_id!r}"
        )


def check_directive_text(text: str) -> None:
    """Raise ``ConfigError`` when a directive says nothing (empty or only white space): queued,
    it was announced as a directive for the next step and reached the model as an empty
    "[Directive from the operator]" message, or (a file store reading a blank line) not at
    all."""
    if not text.strip():
        raise ConfigError(
            f"a directive is an instruction for the session, in words; got {text!r}: "
            "nothing was queued"
        )


def run_in_progress(liveness: str) -> bool:
    """True when a run is going on now (running, or paused at a checkpoint)."""
    return liveness in RUN_IN_PROGRESS


def held_by_live_process(liveness: str) -> bool:
    """True when a live process holds the session: running, paused or idle (open, between
    runs). Such a session cannot be driven by anyone else."""
    return liveness in HELD


def can_be_driven(liveness: str) -> bool:
    """True when no live process holds the session, so this one may open and run it."""
    return not held_by_live_process(liveness)


def judge_liveness(*, status: str, held: bool, paused: bool) -> str:
    """The liveness word from an adapter's facts.

    ``status`` is what the trace reached (``running`` after a ``run_start`` without its
    ``run_end``, else the last run's status or ``created``); ``held`` is whether a holder is
    recorded AND still alive (the adapter's heartbeat bound, or a pid on this host). A session
    whose run was left ``running`` by a holder that is gone is ``stale``.
    """
    if held:
        if status == "running":
            return "paused" if paused else "running"
        return "idle"
    if status == "running":
        return "stale"
    return status


class SessionCatalog(Protocol):
    """Reading stored sessions without driving them: no lock is taken, nothing is written."""

    @abstractmethod
    async def sessions(self, *, limit: int = 50) -> tuple[SessionInfo, ...]:
        """Sessions, newest first, each with its ``liveness`` (``judge_liveness``)."""

    @abstractmethod
    async def info(self, session_id: str) -> SessionInfo:
        """One session. Every member takes an exact id or a unique prefix (adapters may also
        accept ``latest``). Raises ``SessionNotFound`` (an ambiguous prefix names the
        candidates)."""

    @abstractmethod
    async def record(self, session_id: str) -> SessionRecord:
        """The stored record (config, labels, parent). Raises ``SessionNotFound``;
        ``ConfigError`` when its stored config is invalid."""

    @abstractmethod
    async def recording(self, session_id: str) -> tuple[SessionRecord, tuple[ev.Event, ...]]:
        """The record and the persisted events, decoded (a torn or unreadable line skipped
        with a warning), without taking the lock: for fork, replay and export."""

    @abstractmethod
    async def trace(self, session_id: str, *, after: int = 0) -> tuple[TraceLine, ...]:
        """The persisted lines with ``seq > after``, in order (empty when none yet). Joined
        with newlines they are byte for byte the session's ``trace.jsonl``. Raises
        ``SessionNotFound``."""

    async def trace_reads(
        self, tails: Mapping[str, TraceTail | None]
    ) -> dict[str, TraceRead | None]:
        """For each ``id: tail`` (None: from the start), the lines after the tail of an
        earlier read of this store, or the whole trace (``restarted``) when the trace no
        longer holds that tail (replaced, rewritten); None for a session that cannot be read
        now. Adapters judge the tail without reading its line again (this default reads it
        and compares a digest: ``trace_reads.reads_by_digest``)."""
        return await reads_by_digest(lambda sid, after: self.trace(sid, after=after), tails)

    async def last_seq(self, session_id: str) -> int:
        """The number of the session's last persisted line (0 when none yet): where a live
        tail that must not repeat the past starts. Adapters may count it without reading the
        lines (this default reads them). Raises ``SessionNotFound``."""
        lines = await self.trace(session_id)
        return lines[-1].seq if lines else 0

    @abstractmethod
    def follow(self, session_id: str, *, after: int = 0) -> AsyncIterator[TraceLine]:
        """The lines after ``after``, then each new one as it is appended, until no run is in
        progress and every line was given (a live tail). The caller may stop it at any time."""


class SessionControl(Protocol):
    """Signals and answers to stored sessions, from any process (or host) that sees the store."""

    @abstractmethod
    async def request(self, session_id: str, signal: Signal) -> bool:
        """Ask for ``cancel`` (the run stops at its next checkpoint), ``pause`` (it waits
        before its next model call or tool) or ``resume`` (the pause is lifted). Returns False
        when there was nothing to do (``resume`` of a session not paused). Raises
        ``SessionNotFound`` for an unknown exact id."""

    @abstractmethod
    async def add_directive(self, session_id: str, text: str) -> int:
        """Queue an operator instruction; returns its offset in the session's directive log
        (the session applies it once, between steps). Raises ``SessionNotFound``, and
        ``ConfigError`` for a text that says nothing (``check_directive_text``)."""

    @abstractmethod
    async def request_export(self, session_id: str, request_id: str) -> None:
        """Ask a running session for a context export (``connect``) under ``request_id``
        (``new_id()``; an id that is not plain raises ``StoreError``), the id its answer is read
        and withdrawn by. The asker names it: an id the store made and returned was lost when
        an interrupt landed between the request and the return, and the request stayed for
        the session to answer unasked. Raises ``SessionNotFound``."""

    @abstractmethod
    async def export_answer(self, session_id: str, request_id: str) -> str | None:
        """The export the session gave for ``request_id``, or None while it has not."""

    @abstractmethod
    async def withdraw_export(self, session_id: str, request_id: str) -> None:
        """Take back an unanswered request (its asker stopped waiting: the session finished or
        did not answer in time), so nothing is left behind. An answered one: nothing to do."""

    @abstractmethod
    async def approvals(self, session_id: str) -> tuple[PendingApproval, ...]:
        """Calls of the session still waiting for a decision (``pending_approvals``)."""

    @abstractmethod
    async def answer(
        self,
        session_id: str,
        call_id: str,
        *,
        approved: bool,
        always: bool = False,
        reason: str = "",
    ) -> None:
        """Record a decision on a pending call of a session no live process holds, in its
        trace, as every recorded answer: the next ``--resume`` (on any host) runs on with a
        denial (the call is answered rejected), but asks again about an approval (and
        forgets ``always``), since whoever can write a trace can write an approval
        (``State.forget_recorded_approvals``, ``rho_entry.resume_policy``): the resumer
        approves with ``--approve CALL@DIGEST`` or ``Session.resolve_approval``. Raises
        ``SessionLocked`` naming the holder (it answers through its own session),
        ``SessionStateError`` for a call that is not pending."""


class SessionOperator(SessionCatalog, SessionControl, Protocol):
    """Both faces of one store, as an operator holds them (every adapter implements both)."""
