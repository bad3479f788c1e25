"""The library's ``Session``: runs prompts for an ``Agent``, with real adapters wired by default.

Every port can be overridden by keyword (``model=``, ``executor=``, ``store=``, ``clock=``,
``signals=``, ``approver=``, ``databases=``); defaults are built in ``rho_entry.wiring``, the
one composition root. It holds the domain's session (``domain``) and never subclasses it: the
loop's objects stay the domain's, and this class adds only what it owns (wiring, the
documents' approval interrupt, ``run_sync``: ``rho_entry.run_modes``). Users import it from
``rho_entry`` (or ``rho_entry.facade``, where ``open_session`` is). What it shows and does
through the domain session (the ports, ``cancel``, ``resolve_approval``, ``compact``, ``fork``,
``save``, ``close``, refusing a copy) is ``SessionFace``'s (``rho_entry.session_face``), its
one base.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from rho_entry.agent import Agent, definition_of
from rho_entry.session_face import SessionFace

# The loop, the ports and the wiring are imported by what uses them (building a Session,
# resuming one): ``from rho_agent import Agent, AgentConfig, Session`` stays cheap.
if TYPE_CHECKING:
    from rho_domain import agent as domain_agent
    from rho_domain import events as ev
    from rho_domain.config import AgentConfig as DomainConfig
    from rho_domain.hooks import Hooks
    from rho_domain.loop.journal import Listener
    from rho_domain.ports.approver import Approver
    from rho_domain.ports.clock import Clock
    from rho_domain.ports.database import Database
    from rho_domain.ports.durable import DurableSteps
    from rho_domain.ports.executor import Executor
    from rho_domain.ports.model import ChatModel
    from rho_domain.ports.signals import SignalSource
    from rho_domain.ports.store import SessionStore
    from rho_domain.run import RunResult
    from rho_domain.state import State
    from rho_domain.tools.source import ToolSource
    from rho_entry.resume_policy import ResumeAuthority
    from rho_entry.seed_api.approval_callback import ApprovalCallback
    from rho_entry.seed_api.state import State as DocumentState

__all__ = ["Session"]


# What may be set on a built Session: settings it reads when they are used.
_SETTABLE = frozenset({"approval_callback", "last_result"})


class Session(SessionFace):
    """Runs prompts for an Agent. Use ``async with Session(agent) as s`` or call ``close()``.

    The agent config's MCP servers (``mcp_servers``; under a read-only profile only those
    the profile names) are started at the first run and stopped at ``close()``; pass
    ``tool_source=`` to serve tools another way.

    Without ``store=``, nothing is written to disk. With a store, every event is persisted and
    ``Session.resume(id, store=...)`` continues the session later or in another process.

    ``approval_callback`` (or ``approver=``) answers approvals. Without either, a call that
    needs one ends the run ``awaiting_approval`` (persisted: the pending calls are in the
    trace), and then, as the design documents say, ``run()`` raises ``ApprovalInterrupt``
    with the waiting calls (``.pending``) and the run's result (``.result``): answer with
    ``resolve_approval`` and call ``run()`` again. ``interrupt_on_approval=False`` returns
    the result instead (the runtime, the server, the CLI and replay do: they have their own
    ways to ask). Setting an attribute the session does not have raises ``AttributeError``
    instead of being silently ignored; pickling or copying one raises ``TypeError`` (reopen a
    stored session by its id instead).

    It drives a ``rho_domain.loop.session.Session`` (``domain``), built on the ports given and the
    defaults ``rho_entry.wiring`` fills in; every port and setting below reads through to it.
    """

    __slots__ = (
        "_approval_callback",
        "_given_agent",
        "_interrupt_on_approval",
        "_notices",
        "_state",
        "domain",
    )

    def __init__(
        self,
        agent: Agent | domain_agent.Agent,
        *,
        model: ChatModel | None = None,
        executor: Executor | None = None,
        store: SessionStore | str | os.PathLike[str] | None = None,
        clock: Clock | None = None,
        signals: SignalSource | None = None,
        approver: Approver | None = None,
        databases: Mapping[str, Database] | None = None,
        session_id: str | None = None,
        state: State | DocumentState | None = None,
        created: bool = False,
        on_event: Listener | None = None,
        parent_id: str | None = None,
        labels: Mapping[str, str] | None = None,
        approval_callback: ApprovalCallback | None = None,
        interrupt_on_approval: bool = True,
        tool_source: ToolSource | None = None,
        steps: DurableSteps | None = None,
        replay: Sequence[ev.Event] = (),
    ) -> None:
        from rho_domain.loop import session as domain_session
        from rho_domain.run import new_id
        from rho_entry import wiring
        from rho_entry.seed_api.state import State as DocumentState

        definition = definition_of(agent)
        if session_id is None:  # known before the ports: a Daytona sandbox is labelled with it
            session_id = new_id()
        ports = wiring.build_ports(
            definition,
            model=model,
            executor=executor,
            store=store,
            clock=clock,
            signals=signals,
            approver=approver,
            databases=databases,
            tool_source=tool_source,
            session_id=session_id,
            resumed=created,
        )
        if steps is not None:  # a durable run's (rho_entry.durable.runner)
            ports = attrs.evolve(ports, steps=steps)
        view = state if isinstance(state, DocumentState) else DocumentState(state)
        self.domain = domain_session.Session.from_ports(
            definition,
            ports,
            session_id=session_id,
            state=view.core,
            created=created,
            on_event=on_event,
            parent_id=parent_id,
            labels=labels,
            replay=replay,
        )
        # a conversation written by hand (State.add_user_message...) joins the trace
        self.domain.journal.adopt(view.take_written_events())
        view.persist = self.domain.journal.adopt
        self._state = view
        self._given_agent = agent
        self._interrupt_on_approval = interrupt_on_approval
        self._notices: tuple[str, ...] = ()
        self._approval_callback: ApprovalCallback | None = None
        if approval_callback is not None:
            self.approval_callback = approval_callback

    def __setattr__(self, name: str, value: object) -> None:
        # Ports are copied into the journal, control and tool batch when the session is built,
        # so replacing one afterwards would silently do nothing: only real settings may change.
        if name in _SETTABLE or name in Session.__slots__:
            object.__setattr__(self, name, value)
            return
        what = "cannot be replaced after construction" if hasattr(self, name) else "is unknown"
        raise AttributeError(
            f"Session attribute {name!r} {what}: setting it would do nothing "
            "(settable: approval_callback; pass ports such as approver= to Session())"
        )

    def __repr__(self) -> str:
        return f"<Session {self.id} of {self.agent.config.model!r}>"

    @property
    def approval_callback(self) -> ApprovalCallback | None:
        """``(tool_name, args) -> bool`` (sync or async) deciding approvals; see
        ``rho_entry.seed_api.approval_callback``. Setting it replaces the session's approver."""
        return self._approval_callback

    @approval_callback.setter
    def approval_callback(self, callback: ApprovalCallback | None) -> None:
        from rho_entry.seed_api.approval_callback import CallbackApprover

        approver = None if callback is None else CallbackApprover(callback)
        object.__setattr__(self, "_approval_callback", callback)
        self.domain.set_approver(approver)

    async def run(
        self,
        prompt: str | None = None,
        *,
        max_turns: int | None = None,
        on_event: Listener | None = None,
        record_events: bool = False,
        run_id: str | None = None,
    ) -> RunResult:
        """Run ``prompt`` (None: continue after approvals answered) until the model answers
        without tool calls, or a limit, signal or error, and return the ``RunResult``.
        ``max_turns``: model calls in this run (None: the config's, 0: no limit).
        ``record_events`` keeps every event of the run in ``RunResult.events`` (off by
        default: a long run's deltas cost memory). See ``rho_domain.loop.session.Session.run``.

        Model, tool and store failures end the run ``error`` (not raised). Raises
        ``ApprovalInterrupt`` when the run ended ``awaiting_approval`` with no approver to ask
        (see the class docstring), ``SessionStateError`` while another run is in progress or
        when a stored session was closed (``Session.resume`` it), ``TypeError`` / ``ValueError``
        for a prompt, ``max_turns`` or ``on_event`` of the wrong kind, nothing run."""
        from rho_domain.run import RunStatus

        if record_events:
            from rho_entry.run_modes import run_recording

            result = await run_recording(
                self.domain, prompt, max_turns=max_turns, on_event=on_event, run_id=run_id
            )
        else:
            result = await self.domain.run(
                prompt, max_turns=max_turns, on_event=on_event, run_id=run_id
            )
        if (
            result.status is RunStatus.AWAITING_APPROVAL
            and self.approver is None
            and self._interrupt_on_approval
        ):
            from rho_entry.run_modes import approval_interrupt

            raise approval_interrupt(result)
        return result

    def stream(
        self, prompt: str | None = None, *, max_turns: int | None = None
    ) -> AsyncIterator[ev.Event]:
        """Run and yield every event as it happens; ``last_result`` then holds the result.
        Leaving the loop early cancels the run. A run that waits for approval with no one
        to ask ends the loop with ``ApprovalInterrupt``, as ``run`` does."""
        from rho_domain.loop.event_stream import stream_events

        return stream_events(
            lambda listener: self.run(prompt, max_turns=max_turns, on_event=listener), self.cancel
        )

    @classmethod
    async def resume(
        cls,
        session_id: str,
        *,
        store: SessionStore | str | os.PathLike[str],
        overrides: Mapping[str, Any] | None = None,
        authority: ResumeAuthority | None = None,
        hooks: Hooks | None = None,
        replay_run: str | None = None,
        **ports: Any,
    ) -> Session:
        """Reopen a stored session (id, unique prefix or ``latest``), as
        ``facade.open_session(None, resume=session_id, ...)`` does through here; its docstring
        says what is inherited and what is not (hooks are never taken from the directory:
        ``hooks`` are the ones it runs; ``replay_run``: a durable run executed again)."""
        if "agent" in ports:  # as Session(agent, ...) is built: the stored agent is reopened
            raise TypeError(
                "Session.resume reopens the stored agent and takes none; change its settings "
                "with overrides={'model': ..., 'profile': ...} (the fields of AgentConfig)"
            )
        from rho_entry.reopening import open_stored, with_workspace_note  # with the first resume

        session, notices = await open_stored(
            session_id,
            store=store,
            overrides=overrides,
            authority=authority,
            hooks=hooks,
            replay_run=replay_run,
            options=ports,
            build=_reopened,
        )
        session._notices = await with_workspace_note(
            session.executor, session.domain.journal, notices, close=session.close
        )
        return session

    async def __aenter__(self) -> Session:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    def run_sync(self, prompt: str | None = None, **kwargs: Any) -> RunResult:
        """Blocking ``run`` for scripts: each call runs in an event loop of its own and closes
        the session after it; a later call runs it again, unless it is stored (closing gave
        its lock back: ``SessionStateError`` says to ``Session.resume`` it). Raises
        ``SessionStateError`` inside a running event loop (async code: a notebook cell, a
        server's handler), naming ``await run``."""
        from rho_entry.run_modes import run_blocking

        return run_blocking(lambda: self.run(prompt, **kwargs), self.close)


def _reopened(config: DomainConfig, *, hooks: Hooks | None, **keywords: Any) -> Session:
    """A stored session's ``Session``, of an ``Agent`` built from its authorised ``config``
    (no environment: its databases are the ones ``authorise`` kept)."""
    return Session(Agent(config, environ={}, hooks=hooks), **keywords)
