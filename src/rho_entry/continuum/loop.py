"""The continuum loop: developer sessions, one after another, until the PRD is done.

Each session is a normal stored rho-agent session (labelled ``continuum=<run id>`` and
``continuum_session=<n>``: ``rho-agent ps``/``monitor``/``export`` see it). It reads the PRD
and the latest handoff, works, and ends with a verdict (``rho_domain.continuum.answers``):

- ``NEEDS_INPUT``: the user is asked (``ContinuumPorts.ask``) and the session runs again with
  the answer; with nobody to ask the run pauses, saying how to continue.
- ``PROJECT COMPLETE``: the checks run; all passing, the work is committed and the run is
  completed. A failing check sends the agent back, in the same session, with the check's
  output, at most ``CHECK_ROUNDS`` times; then the session ends as a handoff.
- anything else: the work is committed (``continuum: session N``) and the handoff saved as
  the next numbered ``.rho-agent/handoffs/NNN-<slug>.md``.

The state is saved (``ContinuumPorts.save``) before and after every session, so ``--resume``
continues the session count and the handoff numbering.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

import attrs

from rho_domain.config import AgentConfig
from rho_domain.continuum.answers import read_answer
from rho_domain.continuum.budget_gate import BudgetGate
from rho_domain.continuum.handoffs import handoff_name, latest_handoff, next_handoff_number
from rho_domain.continuum.prompt import checks_failed, session_prompt
from rho_domain.continuum.state import ContinuumState, Status
from rho_domain.ports.approver import Approver
from rho_domain.ports.executor import Executor
from rho_domain.ports.model import ChatModel
from rho_domain.ports.store import SessionStore
from rho_domain.run import RunResult
from rho_domain.run_status import RunStatus
from rho_domain.value_methods import value_eq, value_hash, value_repr
from rho_entry.continuum import workspace
from rho_entry.continuum.workspace import CheckCommand

if TYPE_CHECKING:
    from rho_entry.session import Session

CHECK_ROUNDS = 3
"""Times one session is sent back by failing checks before it ends as a handoff."""


@attrs.frozen(kw_only=True)
class ContinuumPlan:
    """What to build and how: the PRD's text, the sessions' config (developer profile, the
    workspace, the context window), the budget threshold, the session limit, the checks, and
    the branch to work on (None: the current one)."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    prd: str
    config: AgentConfig
    threshold: float
    max_sessions: int
    checks: tuple[CheckCommand, ...] = ()
    branch: str | None = None


@attrs.frozen(kw_only=True)
class ContinuumPorts:
    """Where the loop acts: the workspace's executor, the session store, the model (None:
    the config's endpoint), the approver, ``ask`` (the user's answer to a question, None when
    nobody can answer), ``save`` (the state, atomically) and ``say`` (a progress line)."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    executor: Executor
    store: SessionStore
    model: Callable[[], ChatModel | None]
    approver: Approver | None
    ask: Callable[[str], Awaitable[str | None]]
    save: Callable[[ContinuumState], None]
    say: Callable[[str], None]


async def run_continuum(
    plan: ContinuumPlan, ports: ContinuumPorts, state: ContinuumState
) -> ContinuumState:
    """Run sessions from ``state`` on; the final state (also saved; a cancelled run's is
    saved ``paused``, saying so, before the cancellation goes on). Raises
    ``WorkspaceGitError`` (saved as status ``error`` first) when git fails; one for a
    workspace outside a git work tree before anything runs or is saved."""
    await workspace.require_repository(ports.executor)
    try:
        await workspace.ignore_own_files(ports.executor)
        if plan.branch is not None:
            await workspace.switch_branch(ports.executor, plan.branch)
        while state.session_count < plan.max_sessions:
            state = attrs.evolve(
                state, status="running", reason="", session_count=state.session_count + 1
            )
            ports.save(state)
            state = await _session(plan, ports, state)
            ports.save(state)
            if state.status != "running":
                return state
    except Exception as exc:
        ports.save(attrs.evolve(state, status="error", reason=str(exc)))
        raise
    except (KeyboardInterrupt, asyncio.CancelledError):
        # Ctrl+C or SIGTERM left the file "running" with the last pause's reason
        why = f"cancelled in session {state.session_count}; --resume goes on"
        ports.save(attrs.evolve(state, status="paused", reason=why))
        raise
    state = attrs.evolve(
        state,
        status="paused",
        reason=f"used all {plan.max_sessions} sessions (--max-sessions); --resume with a "
        "higher --max-sessions to go on",
    )
    ports.save(state)
    return state


async def _session(
    plan: ContinuumPlan, ports: ContinuumPorts, state: ContinuumState
) -> ContinuumState:
    from rho_domain.hooks import Hooks
    from rho_entry.agent import Agent
    from rho_entry.session import Session

    number = state.session_count
    names = await workspace.handoff_names(ports.executor)
    latest = latest_handoff(names)
    handoff = None if latest is None else await workspace.read_handoff(ports.executor, latest)
    checks = [check.text for check in plan.checks]
    prompt = session_prompt(plan.prd, handoff, checks, ports.executor.working_dir)
    gate = BudgetGate(window=plan.config.context_window, threshold=plan.threshold)
    session = Session(
        Agent(plan.config, hooks=Hooks(before_model=(gate,))),
        model=ports.model(),
        executor=ports.executor,
        store=ports.store,
        approver=ports.approver,
        on_event=gate.observe,
        labels={"continuum": state.run_id, "continuum_session": str(number)},
    )
    ports.say(f"session {number}: {session.id}")
    try:
        result, state = await _converse(plan, ports, session, prompt, state)
    finally:
        await session.close()
    if state.status != "running":
        return state
    if result is None:
        return attrs.evolve(state, status="completed", reason="PROJECT COMPLETE, checks passed")
    answer = read_answer(result.text)
    await _commit(ports, f"continuum: session {number}")
    handoff_number = next_handoff_number(names, state.last_handoff)
    name = handoff_name(handoff_number, answer.slug, number)
    path = await workspace.write_handoff(ports.executor, name, answer.document)
    ports.say(f"session {number}: handoff {path}")
    return attrs.evolve(state, last_handoff=handoff_number)


async def _converse(
    plan: ContinuumPlan, ports: ContinuumPorts, session: Session, prompt: str, state: ContinuumState
) -> tuple[RunResult | None, ContinuumState]:
    """Run the session until it hands off (its last result), completes (None) or stops the
    run (the state says why)."""
    check_rounds = 0
    message = prompt
    while True:
        result: RunResult = await session.run(message)
        state = _counted(state, result)
        if result.status is not RunStatus.COMPLETED:
            why = result.error or result.status.value
            return result, _stopped(state, "error", f"session {session.id} ended {why}")
        answer = read_answer(result.text)
        if answer.verdict == "needs_input":
            reply = await ports.ask(result.text)
            if reply is None:
                why = (
                    f"session {session.id} asks for input (NEEDS_INPUT) and stdin is not a "
                    "terminal: run the same command with --resume in a terminal to answer"
                )
                return result, _stopped(state, "paused", why)
            message = reply
            continue
        if answer.verdict != "complete":
            return result, state
        report = await workspace.run_checks(ports.executor, plan.checks)
        if report is None:
            await _commit(ports, "continuum: project complete")
            return None, state
        check_rounds += 1
        ports.say(f"checks failed ({check_rounds} of {CHECK_ROUNDS})")
        if check_rounds >= CHECK_ROUNDS:
            return attrs.evolve(result, text=f"HANDOFF: checks-failing\n\n{report}"), state
        message = checks_failed(report)


async def _commit(ports: ContinuumPorts, message: str) -> None:
    """Commit the work as ``message``, saying which secrets files were left out of it."""
    _, secret = await workspace.commit_all(ports.executor, message)
    if secret:
        ports.say(f"not committed, the secrets policy names them: {', '.join(secret)}")


def _counted(state: ContinuumState, result: RunResult) -> ContinuumState:
    usage = result.usage
    return attrs.evolve(
        state,
        input_tokens=state.input_tokens + usage.input_tokens,
        output_tokens=state.output_tokens + usage.output_tokens,
        cost_usd=state.cost_usd + (usage.cost_usd or 0.0),
    )


def _stopped(state: ContinuumState, status: Status, reason: str) -> ContinuumState:
    return attrs.evolve(state, status=status, reason=reason)
