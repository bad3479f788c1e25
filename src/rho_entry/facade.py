"""The library facade: Agent, AgentConfig and Session with real adapters wired by default.

``Agent(config)`` resolves the profile, builds the tool registry and renders the system prompt;
it holds no conversation. ``Session(agent)`` runs prompts; every port can be overridden by
keyword (``model=``, ``executor=``, ``store=``, ``clock=``, ``signals=``, ``approver=``,
``databases=``). Defaults are built in ``rho_entry.wiring``, the one composition root.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from rho_domain import agent as domain_agent
from rho_domain import config as domain_config
from rho_domain import events as ev
from rho_domain.loop import session as domain_session
from rho_domain.loop.journal import Listener
from rho_domain.permissions import PermissionProfile
from rho_domain.ports.approver import ApprovalInterrupt, Approver
from rho_domain.ports.clock import Clock
from rho_domain.ports.database import Database
from rho_domain.ports.durable import DurableSteps
from rho_domain.ports.executor import Executor
from rho_domain.ports.model import ChatModel
from rho_domain.ports.signals import SignalSource
from rho_domain.ports.store import SessionStore
from rho_domain.pricing import PriceTable
from rho_domain.run import RunResult, RunStatus
from rho_domain.state import State
from rho_domain.tools.base import ToolHandler
from rho_domain.tools.factory import build_registry
from rho_domain.tools.registry import ToolRegistry
from rho_entry import wiring
from rho_entry.approval_callback import ApprovalCallback, CallbackApprover
from rho_entry.config.databases_config import with_configured_databases
from rho_entry.config.home import config_dir
from rho_entry.resume_policy import ResumeAuthority, authorise, default_authority
from rho_entry.seed_state import State as DocumentState
from rho_entry.seed_tools import ToolHandler as DocumentToolHandler
from rho_entry.seed_tools import ToolRegistry as DocumentToolRegistry
from rho_entry.seed_tools import as_domain_handler


class AgentConfig(domain_config.AgentConfig):
    """``rho_domain.config.AgentConfig`` plus YAML files.

    ``from_file`` raises ConfigError naming the file, the key path and the expected type.
    """

    @classmethod
    def from_file(cls, path: str | Path) -> AgentConfig:
        """Read an AgentConfig YAML file."""
        from rho_entry.config.config_files import load_agent_config

        return cls.from_config(load_agent_config(Path(path)))

    @classmethod
    def from_config(cls, config: domain_config.AgentConfig) -> AgentConfig:
        """This class with the fields of a domain ``AgentConfig``."""
        return cls(**{a.name: getattr(config, a.name) for a in attrs.fields(type(config))})

    def to_file(self, path: str | Path) -> None:
        """Write this config as YAML (settings left at their defaults are omitted)."""
        from rho_entry.config.config_files import save_agent_config

        save_agent_config(self, Path(path))


class Agent(domain_agent.Agent):
    """An agent definition built from an AgentConfig (profile, tools, system prompt, and
    the price table: shipped prices plus ``<config dir>/prices.yaml`` unless ``prices`` is
    given).

    ``tools`` are more tools (domain handlers, or the design documents' ``ToolHandler``
    subclasses, ``rho_entry.seed_tools``), added to the profile's; they go through the same
    approval policy and truncation. A ``registry`` built the documents' way
    (``ToolRegistry().register(...)``) is copied: an agent's tools never change afterwards.

    A config that names no database gets the ones the environment configures, as the CLI's
    do (``databases_config.with_configured_databases``: ``$RHO_AGENT_DB_CONFIG`` or the config
    directory's ``databases.yaml``, and ``SQLITE_DB``, ``POSTGRES_HOST``...); ``environ``
    replaces ``os.environ`` for that (``{}``: none). ``agent.config.databases`` says which.
    """

    def __init__(
        self,
        config: domain_config.AgentConfig | None = None,
        *,
        profile: PermissionProfile | None = None,
        registry: ToolRegistry | None = None,
        system_prompt: str | None = None,
        prices: PriceTable | None = None,
        tools: Sequence[ToolHandler | DocumentToolHandler] = (),
        environ: Mapping[str, str] | None = None,
    ) -> None:
        config = config if config is not None else AgentConfig()
        config = with_configured_databases(config, os.environ if environ is None else environ)
        extra = tuple(as_domain_handler(tool) for tool in tools)
        if profile is None:
            profile = wiring.profile_of(config)
        if registry is None:
            registry = build_registry(
                profile,
                databases=config.databases,
                spreadsheet_reader=wiring.build_spreadsheet_reader(),
                line_searcher=wiring.build_line_searcher(),
                # the design documents: developer (and eval) add delegate, readonly has none
                delegation=not profile.read_only,
                extra=extra,
                output_limit=config.tool_output_limit,
            )
        else:
            if isinstance(registry, DocumentToolRegistry):
                registry = registry.frozen()  # the agent's tools never change under a session
            if extra:
                registry = registry.with_tools(*extra)
        if system_prompt is None:
            system_prompt = wiring.render_system_prompt(config, profile, registry.names)
        if prices is None:
            prices = wiring.load_prices()
        super().__init__(
            config=config,
            profile=profile,
            registry=registry,
            system_prompt=system_prompt,
            prices=prices,
        )


# What may be set on a built Session: settings it reads when they are used.
_SETTABLE = frozenset({"approval_callback", "last_result"})


class Session(domain_session.Session):
    """Runs prompts for an Agent. Use ``async with Session(agent) as s`` or call ``close()``.

    Without ``store=``, nothing is written to disk. With a store, every event is persisted and
    ``Session.resume(id, store=...)`` continues the session later or in another process.

    ``approval_callback`` (or ``approver=``) answers approvals. Without either, a call that
    needs one ends the run ``awaiting_approval`` (persisted: the pending calls are in the
    trace), and then, as the design documents say, ``run()`` raises ``ApprovalInterrupt``
    with the waiting calls (``.pending``) and the run's result (``.result``): answer with
    ``resolve_approval`` and call ``run()`` again. ``interrupt_on_approval=False`` returns
    the result instead (the runtime, the server, the CLI and replay do: they have their own
    ways to ask). Setting an attribute the session does not have raises ``AttributeError``
    instead of being silently ignored.
    """

    def __init__(
        self,
        agent: domain_agent.Agent,
        *,
        model: ChatModel | None = None,
        executor: Executor | None = None,
        store: SessionStore | None = None,
        clock: Clock | None = None,
        signals: SignalSource | None = None,
        approver: Approver | None = None,
        databases: Mapping[str, Database] | None = None,
        session_id: str | None = None,
        state: State | None = None,
        created: bool = False,
        on_event: Listener | None = None,
        parent_id: str | None = None,
        labels: Mapping[str, str] | None = None,
        approval_callback: ApprovalCallback | None = None,
        interrupt_on_approval: bool = True,
        steps: DurableSteps | None = None,
        replay: Sequence[ev.Event] = (),
    ) -> None:
        ports = wiring.build_ports(
            agent,
            model=model,
            executor=executor,
            store=store,
            clock=clock,
            signals=signals,
            databases=databases,
        )
        super().__init__(
            agent,
            model=ports.model,
            executor=ports.executor,
            clock=ports.clock,
            store=ports.store,
            signals=ports.signals,
            approver=approver,
            databases=ports.databases,
            session_id=session_id,
            state=state if state is not None else DocumentState(),
            created=created,
            on_event=on_event,
            parent_id=parent_id,
            labels=labels,
            steps=steps,
            replay=replay,
        )
        if isinstance(self.state, DocumentState):
            # a conversation written by hand (State.add_user_message...) joins the trace
            self.journal.adopt(self.state.take_written_events())
            self.state.persist = self.journal.adopt
        self._owned = ports.owned
        self._interrupt_on_approval = interrupt_on_approval
        self._notices: tuple[str, ...] = ()
        self._approval_callback: ApprovalCallback | None = None
        if approval_callback is not None:
            self.approval_callback = approval_callback
        object.__setattr__(self, "_sealed", True)

    def __setattr__(self, name: str, value: object) -> None:
        # Ports are copied into the journal, control and tool batch when the session is built,
        # so replacing one afterwards would silently do nothing: only real settings may change.
        if getattr(self, "_sealed", False) and not name.startswith("_") and name not in _SETTABLE:
            what = "cannot be replaced after construction" if hasattr(self, name) else "is unknown"
            raise AttributeError(
                f"Session attribute {name!r} {what}: setting it would do nothing "
                "(settable: approval_callback; pass ports such as approver= to Session())"
            )
        super().__setattr__(name, value)

    @property
    def approval_callback(self) -> ApprovalCallback | None:
        """``(tool_name, args) -> bool`` (sync or async) deciding approvals; see
        ``rho_entry.approval_callback``. Setting it replaces the session's approver."""
        return self._approval_callback

    @approval_callback.setter
    def approval_callback(self, callback: ApprovalCallback | None) -> None:
        approver = None if callback is None else CallbackApprover(callback)
        self._approval_callback = callback
        object.__setattr__(self, "approver", approver)
        self.tools.approver = approver

    async def run(
        self,
        prompt: str | None = None,
        *,
        max_turns: int | None = None,
        on_event: Listener | None = None,
        record_events: bool = False,
        run_id: str | None = None,
    ) -> RunResult:
        """``rho_domain.loop.session.Session.run``; ``record_events`` keeps every event of the run
        in ``RunResult.events`` (off by default: a long run's deltas cost memory).

        Raises ``ApprovalInterrupt`` when the run ended ``awaiting_approval`` with no approver
        to ask (see the class docstring)."""
        result = await self._run(prompt, max_turns, on_event, record_events, run_id)
        if (
            result.status is RunStatus.AWAITING_APPROVAL
            and self.approver is None
            and self._interrupt_on_approval
        ):
            names = ", ".join(f"{p.call.name} ({p.call.id})" for p in result.pending)
            raise ApprovalInterrupt(
                f"tool calls wait for approval: {names}; answer each with "
                "session.resolve_approval(call_id, approved) and call session.run() again",
                pending=result.pending,
                result=result,
            )
        return result

    async def _run(
        self,
        prompt: str | None,
        max_turns: int | None,
        on_event: Listener | None,
        record_events: bool,
        run_id: str | None = None,
    ) -> RunResult:
        if not record_events:
            return await super().run(prompt, max_turns=max_turns, on_event=on_event, run_id=run_id)
        seen: list[ev.Event] = []

        async def keep(event: ev.Event) -> None:
            seen.append(event)
            if on_event is not None and (outcome := on_event(event)) is not None:
                await outcome

        result = await super().run(prompt, max_turns=max_turns, on_event=keep, run_id=run_id)
        return attrs.evolve(result, events=tuple(seen))

    @classmethod
    async def resume(
        cls,
        session_id: str,
        *,
        store: SessionStore,
        overrides: Mapping[str, Any] | None = None,
        authority: ResumeAuthority | None = None,
        replay_run: str | None = None,
        **ports: Any,
    ) -> Session:
        """Reopen a stored session (id, unique prefix or ``latest``).

        ``replay_run`` (a durable run executed again after its worker died): when the trace
        holds that run's ``run_start``, the session's state is the trace before it and the
        events from it on are replayed by the run (``Session(replay=...)``).

        The stored config is data, not authority (``rho_entry.resume_policy``): its profile
        must be within what ``authority`` allows (by content; default: readonly, or the
        ``profile`` override), its endpoint and databases must be the caller's (from the
        environment, or given again in ``overrides``), and auto-approval is off unless
        ``overrides`` turn it on; approvals its trace records for calls not yet run, and
        "always" answers, are forgotten (they are asked again). ``overrides`` replace
        individual config fields (e.g. ``{"model": ...}``); every other saved setting is kept.
        Tool calls left without a result get an interrupted result. ``resume_notices`` says
        what was not inherited.
        Raises ``ConfigError`` when the stored session asks for more than is allowed.
        """
        if authority is None:
            authority = default_authority(overrides or {}, ports, os.environ)
        elif overrides:
            authority = attrs.evolve(authority, given={**authority.given, **overrides})
        record, events = await store.open(session_id)
        try:
            allowed = authorise(record, authority, config_dir=config_dir(os.environ))
            before, replay = _split_at_run(events, replay_run)
            state = DocumentState.from_events(before)
            notices = (*allowed.notices, *_forgotten(record.id, state))
            session = cls(
                # the databases were decided by ``authorise``: the resumer's, or none
                Agent(allowed.config, environ={}),
                store=store,
                session_id=record.id,
                state=state,
                created=True,
                parent_id=record.parent_id,
                labels=record.labels,
                replay=replay,
                **ports,
            )
        except BaseException:
            await store.release(record.id)
            raise
        session._notices = notices
        return session

    @property
    def resume_notices(self) -> tuple[str, ...]:
        """What a resumed session did not inherit from its directory (auto-approval)."""
        return self._notices

    async def close(self) -> None:
        """Persist, release the store lock, and close the adapters this session created."""
        try:
            await super().close()
        finally:
            for resource in self._owned:
                with contextlib.suppress(Exception):
                    await resource.aclose()
            self._owned = ()

    def run_sync(self, prompt: str | None = None, **kwargs: Any) -> RunResult:
        """Blocking ``run`` for scripts (not from inside a running event loop)."""

        async def _run() -> RunResult:
            try:
                return await self.run(prompt, **kwargs)
            finally:
                await self.close()

        return asyncio.run(_run())


def _split_at_run(
    events: Sequence[ev.Event], run_id: str | None
) -> tuple[Sequence[ev.Event], Sequence[ev.Event]]:
    """The events before ``run_id``'s ``run_start`` and those from it on (all and none when
    the trace does not hold that run)."""
    if run_id is not None:
        for index, event in enumerate(events):
            if isinstance(event, ev.RunStarted) and event.run_id == run_id:
                return events[:index], events[index:]
    return events, ()


def _forgotten(session_id: str, state: State) -> tuple[str, ...]:
    """Notices for the recorded approvals a resume does not inherit (``resume_policy``)."""
    again, tools = state.forget_recorded_approvals()
    notices: list[str] = []
    if again:
        notices.append(
            f"session {session_id} records approvals of {len(again)} call(s) not yet run "
            f"({', '.join(again)}); they are asked again (approve them with --approve)"
        )
    if tools:
        notices.append(
            f"session {session_id} records 'always' for {', '.join(tools)}; that is not "
            "inherited (answer 'always' again, or pass -y)"
        )
    return tuple(notices)
