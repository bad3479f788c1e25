"""``DurableHandle``: what ``dispatch_prompt(runtime, prompt, durable=True)`` returns.

The run is on the runtime's queue, not in this process: a worker (``rho-agent worker``) on
any host runs it. The handle names it (``session_id``, ``run_id``), reads its status, waits for
it, and answers the approvals it waits for; answering continues the session in a new run on
the queue (``run_id`` then names that one), and cancels it (``cancel``).
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from rho_domain.errors import SessionStateError
from rho_domain.messages import ToolCall
from rho_domain.ports.durable import RunQueue
from rho_domain.ports.session_control import SessionControl
from rho_domain.ports.store import SessionStore
from rho_domain.state import State
from rho_domain.value_methods import value_eq, value_repr


@attrs.define
class DurableHandle:
    """A durable run of ``session_id`` on ``queue``; ``store`` is where its trace is."""

    __repr__ = value_repr
    __eq__ = value_eq

    queue: RunQueue
    store: SessionStore
    session_id: str
    run_id: str
    # the store's SessionControl: how ``cancel`` reaches a run that has started; None: the
    # store's own (``config.stores.control_of``; a store with none: its run reads the
    # queue's record of the cancel while it goes, ``durable.run_signals``)
    control: SessionControl | None = None

    async def status(self) -> str | None:
        """``queued``, ``running``, ``awaiting_approval`` or a final status."""
        return await self.queue.status(self.run_id)

    async def wait(self, timeout: float = 600.0) -> str:
        """Wait until the run ends or waits for approval; its status. Raises
        ``TimeoutError`` after ``timeout`` seconds."""
        return await self.queue.wait(self.run_id, timeout)

    async def cancel(self) -> str:
        """Stop the session's run on the queue (this run, or the continuation an answer
        queued): ``cancelled`` when no worker had taken it (it never runs), ``cancel
        requested`` when one had (it ends ``cancelled``: ``queueing.cancel_session_run``).
        Raises ``SessionStateError`` when no run of the session is queued or running."""
        from rho_entry.config.stores import control_of
        from rho_entry.durable.queueing import cancel_session_run

        control = self.control if self.control is not None else control_of(self.store)
        cancelled = await cancel_session_run(self.queue, self.session_id, control=control)
        self.run_id = cancelled.run_id
        return "cancel requested" if cancelled.taken else "cancelled"

    async def pending_approvals(self) -> tuple[str, ...]:
        """The ids of the calls the session waits for (read from its trace)."""
        return tuple(c.id for c in await self._waiting())

    async def approve(
        self, *call_ids: str, always: bool = False, digests: Mapping[str, str] | None = None
    ) -> None:
        """Approve ``call_ids`` (default: every waiting call); the session continues on a
        worker. ``always``: the tools of these calls (read from the session's trace) run
        without asking for the rest of the run, in this continuation and every later one
        (as "always" on a server or a terminal). Raises ``SessionStateError`` when the run
        does not wait for approval, or for a call it does not wait for.

        Each approval carries the digest of its call (``rho_domain.call_digest``), which the
        worker checks against the call it resumes: ``digests`` (call id → digest) binds
        them to the calls as you were shown them (``CallChanged`` here already when the trace
        holds another call now); without, to the calls as read from the trace now."""
        await self._answer(call_ids, approved=True, reason="", always=always, given=digests)

    async def deny(self, *call_ids: str, reason: str = "") -> None:
        """Reject ``call_ids`` (default: every waiting call), ``reason`` for the model."""
        await self._answer(call_ids, approved=False, reason=reason, always=False, given=None)

    async def _waiting(self) -> tuple[ToolCall, ...]:
        return (await self._state()).awaiting_decision()

    async def _state(self) -> State:
        _, events = await self.store.open(self.session_id)
        try:
            return State.from_events(events)
        finally:
            await self.store.release(self.session_id)

    async def _answer(
        self,
        call_ids: tuple[str, ...],
        *,
        approved: bool,
        reason: str,
        always: bool,
        given: Mapping[str, str] | None,
    ) -> None:
        state = await self._state() if approved or not call_ids else State()
        waiting = state.awaiting_decision()
        calls = call_ids or tuple(c.id for c in waiting)
        if not calls:
            raise SessionStateError(f"session {self.session_id} waits for no approval")
        held = {c.id: c for c in waiting}
        if approved and (unknown := [c for c in calls if c not in held]):
            raise SessionStateError(
                f"session {self.session_id} does not wait for {', '.join(unknown)} "
                f"(it waits for: {', '.join(held) or 'nothing'})"
            )
        digests: dict[str, str] = {}
        if approved:
            for call_id in calls:
                call = held[call_id]
                if given is not None and call_id in given:
                    state.check_digest(call, given[call_id])
                digests[call_id] = state.approval_digest(call)
        self.run_id = await self.queue.answer(
            self.run_id,
            dict.fromkeys(calls, approved),
            reasons={} if approved else dict.fromkeys(calls, reason),
            always=sorted({held[c].name for c in calls}) if always else (),
            digests=digests,
        )
