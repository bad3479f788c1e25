"""One queued run on a worker: the body of the durable workflow.

The session lives in the shared session store (the trace is the truth); the engine's tables
only remember step results. A run executed for the first time opens (or creates) its session
and runs its prompt. A run executed again because its worker died opens the session with the
trace cut at the run's ``run_start`` (``Session.resume(replay_run=)``): the loop runs again
from there, each event it emits is checked against the trace instead of written twice, and
each model call and tool call the dead worker finished is answered from the engine's record
(never sent or run again); the call it died in is run again if it reads, else answered
``interrupted``. A continuation (approvals answered) records its answers first, once, and
allows the tools answered "always" (in it or an earlier continuation) for the whole run.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Mapping

import attrs

from rho_domain.config import AgentConfig
from rho_domain.errors import (
    CallChanged,
    SessionLocked,
    SessionNotFound,
    StoreError,
)
from rho_domain.ports.durable import CancelAsked, DurableSteps, QueuedRun, wrong_session
from rho_domain.ports.store import SessionStore
from rho_domain.value_methods import value_eq, value_hash, value_repr
from rho_entry.durable.run_signals import RunSignals
from rho_entry.executor_wiring import working_dir_of
from rho_entry.facade import Agent, Session
from rho_entry.resume_endpoint import Endpoint
from rho_entry.resume_limits import limits_of
from rho_entry.resume_policy import ResumeAuthority
from rho_entry.wiring import build_signals

log = logging.getLogger("rho_entry.durable")


@attrs.frozen(kw_only=True)
class WorkerSetup:
    """What every run on a worker shares: the session store (every worker's and every
    enqueuer's: a directory on one host, PostgreSQL for many) and the agent config new
    sessions get (an existing session keeps its own, within this profile and endpoint)."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    store: SessionStore
    config: AgentConfig
    # what a stored session may run with here; None: this worker's profile and endpoint
    # (a server gives its own: the profiles it allows, its roots)
    authority: ResumeAuthority | None = None
    # how long a session another process still holds is waited for: a dead holder's claim
    # on a shared store goes stale after a few seconds (PostgreSQL: 8), and the heartbeat
    # that hands its run over may notice the death first
    lock_wait: float = 30.0


class DurableRunner:
    """``run(queued, steps)`` → the run's status value (the workflow's result)."""

    def __init__(self, setup: WorkerSetup) -> None:
        self.setup = setup
        self.agent = Agent(setup.config)

    async def __call__(
        self, queued: QueuedRun, steps: DurableSteps, asked: CancelAsked | None = None
    ) -> str:
        """Run ``queued`` to its end (or until it waits for approval). ``asked``: whether the
        queue holds a cancel of this run (``RunQueue.cancel_asked``), read once the run has
        started: a cancel of a run taken before its session opened (``run_signals``)."""
        if (refused := wrong_session(queued)) is not None:
            raise refused
        if queued.settings.get("kind") == "bird":  # a question of `eval bird --durable`
            from rho_entry.evals.bird_durable import run_question

            return await run_question(
                queued, steps, config=self.setup.config, store=self.setup.store
            )
        signals = RunSignals(build_signals(self.setup.store), asked or _never, run_id=queued.run_id)
        session = await self._open(queued, steps, signals)
        async with session:
            _answer(session, queued.settings)
            result = await session.run(queued.prompt, run_id=queued.run_id)
        return result.status.value

    async def _open(self, queued: QueuedRun, steps: DurableSteps, signals: RunSignals) -> Session:
        """The run's session (a new one created here); while the store says another process
        or execution holds it (a dead worker's claim not yet stale, another execution of this
        run), asked again every half second for ``lock_wait``."""
        deadline = time.monotonic() + self.setup.lock_wait
        while True:
            try:
                return await self._open_once(queued, steps, signals)
            except SessionLocked:
                if time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.5)

    async def _open_once(
        self, queued: QueuedRun, steps: DurableSteps, signals: RunSignals
    ) -> Session:
        try:
            return await self._resume(queued, steps, signals)
        except SessionNotFound:  # a new session: its id was made by the one who enqueued it
            pass
        session = Session(
            self.agent,
            store=self.setup.store,
            session_id=queued.session_id,
            signals=signals,
            steps=steps,
            interrupt_on_approval=False,
        )
        # Created now, not by its run: another execution of this run (its worker taken for
        # dead, the run put back on the queue) may be creating it at the same moment, and
        # the one that loses must retrace the winner's run, not end its own in error.
        try:
            await session.save()
        except StoreError as exc:
            await session.close()  # the adapters it built (nothing was created)
            if isinstance(exc, SessionLocked):
                raise  # being created: waited for by ``_open``, then retraced
            try:
                return await self._resume(queued, steps, signals)  # created and released meanwhile
            except SessionNotFound:
                raise exc from None
        return session

    async def _resume(self, queued: QueuedRun, steps: DurableSteps, signals: RunSignals) -> Session:
        """The stored session, the trace from this run's ``run_start`` on to be retraced:
        the one the queued id names exactly (a store resolves a unique prefix too)."""
        session = await Session.resume(
            queued.session_id,
            store=self.setup.store,
            authority=self._authority(),
            replay_run=queued.run_id,
            signals=signals,
            steps=steps,
            interrupt_on_approval=False,
        )
        if (refused := wrong_session(queued, session.id)) is not None:
            await session.close()
            raise refused
        return session

    def _authority(self) -> ResumeAuthority:
        if self.setup.authority is not None:
            return self.setup.authority
        config = self.agent.config
        local = config.backend == "local"
        return ResumeAuthority(
            profiles=(self.agent.profile,),
            given={"auto_approve": config.auto_approve},
            endpoint=Endpoint.of(config, os.environ),
            databases=config.databases,
            # the store is every enqueuer's: a stored working_dir must be in this worker's
            workspace=working_dir_of(config) if local else None,
            workspace_hint="start the worker in {path!r} to work there",
            hint="start the worker with --profile {profile}",
            endpoint_hint="start the worker with the session's {flag}",
            system_prompt=config.system_prompt,
            **limits_of(config),
            backend=config.backend,
            backend_hint="start the worker with RHO_AGENT_BACKEND={backend}",
        )


async def _never() -> bool:
    """No cancel on the queue: a runner given no reader of it."""
    return False


def _answer(session: Session, settings: Mapping[str, str]) -> None:
    """Record a continuation's answers (once, also when the run is executed again) and the
    tools answered "always" in this continuation or an earlier one of the same run: the
    queue carries them, since a resumed session does not take "always" from its trace
    (``forget_recorded_approvals``: the trace is data; the queue holds what a person said).

    Each answer is bound to the call its answerer was shown by its digest: the call this
    worker resumed from the store must have it (``CallChanged`` otherwise). An approval
    without a digest (queued by a version before them) or of a changed call is not taken:
    the call waits again, asked anew, and a warning says why (a denial without one is
    taken: it runs nothing). Nor is an "always" for its tool: it came with that approval,
    and would approve the call asked anew unseen."""
    always = {key.removeprefix("always:") for key in settings if key.startswith("always:")}
    names = {call.id: call.name for call in session.state.pending_calls}
    refused: set[str | None] = set()  # tools of approvals not taken here
    for key, value in settings.items():
        if key.startswith("answer:"):
            call_id = key.removeprefix("answer:")
            if session.state.approvals.get(call_id) is None:  # once, also if re-run
                approved = value == "yes"
                digest = settings.get(f"digest:{call_id}")
                if approved and digest is None:
                    log.warning(
                        "session %s: the approval of %s carries no digest of the call it "
                        "answers (queued by an older version): not taken; it waits for an "
                        "answer again",
                        session.id,
                        call_id,
                    )
                    refused.add(names.get(call_id))
                    continue
                try:
                    session.resolve_approval(
                        call_id,
                        approved,
                        always=approved and names.get(call_id) in always,
                        reason=settings.get(f"reason:{call_id}", ""),
                        digest=digest,
                    )
                except CallChanged as exc:
                    log.warning("session %s: answer not taken: %s", session.id, exc)
                    refused.add(names.get(call_id))
    session.state.always_allowed.update(always - refused)
