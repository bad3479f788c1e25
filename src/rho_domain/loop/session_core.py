"""SessionCore: what a session is made of, and how sessions related to it are made.

Its agent, its ports (one by one or as a ``SessionPorts`` bundle), its id, State, Journal,
RunControl, tool batch and run gate; a child's or a fork's session built on the same ports
(``related``); the record a store creates it with. What a session does with them (run,
compact, fork, close) is ``rho_domain.loop.session.Session``, the one class built from it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, NoReturn, Self, SupportsIndex, cast

from rho_domain import events as ev
from rho_domain.agent import Agent
from rho_domain.errors import ConfigError
from rho_domain.loop.control import RunControl
from rho_domain.loop.guarded_clock import GuardedClock
from rho_domain.loop.journal import Journal, Listener
from rho_domain.loop.listeners import refuse_non_listener
from rho_domain.loop.run_gate import RunGate
from rho_domain.loop.session_ports import Closeable, RunContext, SessionPorts
from rho_domain.loop.sub_agents import SubAgents, is_sub_agent
from rho_domain.loop.tally import RunTally
from rho_domain.loop.tool_batch import ToolBatch
from rho_domain.ports.clock import Clock
from rho_domain.ports.executor import Executor
from rho_domain.ports.model import ChatModel
from rho_domain.ports.signals import SignalSource
from rho_domain.ports.store import SessionRecord, SessionStore, label_problem
from rho_domain.run import RunResult, new_id
from rho_domain.state import State
from rho_domain.tools.source import ToolSource

if TYPE_CHECKING:
    from rho_domain.loop.sub_agents import ParentSession
    from rho_domain.loop.tool_refresh import ToolShapes
    from rho_domain.ports.approver import Approver
    from rho_domain.ports.database import Database
    from rho_domain.ports.durable import DurableSteps
    from rho_domain.ports.line_search import LineSearcher


class SessionCore:
    """A session's parts and construction (``Session``'s constructor, whose contract is
    ``Session``'s docstring); ``Session`` is the only class built on it."""

    def __init__(
        self,
        agent: Agent,
        *,
        model: ChatModel,
        executor: Executor,
        clock: Clock,
        store: SessionStore | None = None,
        signals: SignalSource | None = None,
        approver: Approver | None = None,
        databases: Mapping[str, Database] | None = None,
        session_id: str | None = None,
        state: State | None = None,
        created: bool = False,
        on_event: Listener | None = None,
        parent_id: str | None = None,
        labels: Mapping[str, str] | None = None,
        delegation: bool = True,
        owned: tuple[Closeable, ...] = (),
        tool_source: ToolSource | None = None,
        steps: DurableSteps | None = None,
        line_searcher: LineSearcher | None = None,
        replay: Sequence[ev.Event] = (),
    ) -> None:
        refuse_non_listener(on_event, "Session(...)")
        if is_sub_agent(parent_id, labels or {}):  # a delegated child, however it is resumed
            delegation = False
            if "delegate" in agent.registry:
                agent = agent.without_tools("delegate")
        self._agent = agent
        self.tool_source = tool_source
        self._shapes: ToolShapes | None = None
        self.model = model
        self.executor = executor
        self.clock: Clock = GuardedClock.of(clock)  # a failing clock said once, times kept
        self.store = store
        self.signals = signals
        self.approver = approver
        self.databases = dict(databases or {})
        self.id = session_id or new_id()
        self.state = state if state is not None else State()
        self.parent_id = parent_id
        self.labels = dict(labels or {})
        if not created and (problem := label_problem(self.labels)) is not None:
            raise ConfigError(f"session labels: {problem}")
        self.steps = steps
        self.line_searcher = line_searcher
        self.journal = Journal(
            self.id, self.state, self.clock, store, created=created, replay=replay
        )
        if on_event is not None:
            self.journal.listeners.append(on_event)
        self.control = RunControl(self.id, signals, self.journal)
        can_delegate = delegation and "delegate" in agent.registry
        # a parent runs its children (``related``'s sessions): only ``Session``, which adds
        # ``run`` and ``close``, is ever built on this class
        self._sub_agents = SubAgents(cast("ParentSession", self))
        self._gate = RunGate(self.id)  # one run at a time; no compaction under it
        self._owned = owned
        self.tools = ToolBatch(
            RunContext(
                session_id=self.id,
                agent=agent,
                journal=self.journal,
                control=self.control,
                ports=self.ports,
            ),
            self._sub_agents.run if can_delegate else None,
            self._sub_agents.resume if can_delegate else None,
        )
        self.last_result: RunResult | None = None

    def __reduce_ex__(self, protocol: SupportsIndex) -> NoReturn:
        # pickle, copy.copy and copy.deepcopy all ask this (fork returns this class, not the
        # facade that refused them): pickle and deepcopy failed deep inside ('weakref',
        # 'mappingproxy'), and copy.copy made a second Session sharing this one's journal and
        # store lock but not its "a run is in progress" guard, so both could run at once.
        raise TypeError(
            f"a Session cannot be pickled or copied: it holds its store's lock and open "
            f"adapters (the model client, the executor); keep its id ({self.id!r}) and open it "
            "again from its store (Session.resume(id, store=...)), or fork it"
        )

    @classmethod
    def from_ports(
        cls,
        agent: Agent,
        ports: SessionPorts,
        *,
        session_id: str | None = None,
        state: State | None = None,
        created: bool = False,
        on_event: Listener | None = None,
        parent_id: str | None = None,
        labels: Mapping[str, str] | None = None,
        delegation: bool = True,
        replay: Sequence[ev.Event] = (),
    ) -> Self:
        """A session of ``agent`` on ``ports``; it closes ``ports.owned`` when it closes.
        ``replay`` (a durable run executed again): see ``__init__``."""
        return cls(
            agent,
            model=ports.model,
            executor=ports.executor,
            clock=ports.clock,
            store=ports.store,
            signals=ports.signals,
            approver=ports.approver,
            databases=ports.databases,
            session_id=session_id,
            state=state,
            created=created,
            on_event=on_event,
            parent_id=parent_id,
            labels=labels,
            delegation=delegation,
            owned=ports.owned,
            tool_source=ports.tool_source,
            steps=ports.steps,
            line_searcher=ports.line_searcher,
            replay=replay,
        )

    @property
    def ports(self) -> SessionPorts:
        """The ports this session runs on, as they are now."""
        return SessionPorts(
            model=self.model,
            executor=self.executor,
            clock=self.clock,
            store=self.store,
            signals=self.signals,
            approver=self.approver,
            databases=self.databases,
            owned=self._owned,
            tool_source=self.tool_source,
            steps=self.steps,
            line_searcher=self.line_searcher,
        )

    @property
    def current_run(self) -> RunTally | None:
        """The tally of the run in progress (usage, its children's usage), None between
        runs: what a sub-agent's budget is taken from and its usage added to."""
        return self._gate.tally

    @property
    def agent(self) -> Agent:
        """The agent, with the tools its ``tool_source`` served when last asked."""
        return self._agent

    def close_with(self, resource: Closeable) -> None:
        """Close ``resource`` (an adapter the caller built for this session, such as a sandbox
        executor) when this session closes, as the adapters in ``owned``."""
        self._owned = (*self._owned, resource)

    # ------------------------------------------------------------ the tools, the record, relatives

    async def _refresh_tools(self) -> bool:
        """Take the tool source's current tools; False when the run was cancelled meanwhile."""
        if self.tool_source is None:
            return True
        from rho_domain.loop.tool_refresh import ToolShapes, take_tools  # with a tool source

        if self._shapes is None:  # what approvals approved (``ToolShapes``)
            self._shapes = ToolShapes()
        shapes = (self._shapes, self.state)
        agent = await take_tools(self._agent, self.tool_source, self.journal, self.control, shapes)
        if agent is None:
            return False
        self._agent = self.tools.agent = agent
        return True

    def _record(self) -> SessionRecord:
        """The stored session's record, as it is created (on the first run)."""
        return SessionRecord(
            id=self.id,
            created_at=self.clock.now(),
            config=self.agent.config,
            parent_id=self.parent_id,
            labels=self.labels,
        )

    def related(
        self,
        agent: Agent,
        *,
        signals: SignalSource | None = None,
        session_id: str | None = None,
        state: State | None = None,
        labels: Mapping[str, str] | None = None,
        delegation: bool = True,
    ) -> Self:
        """A session on this one's ports with this one as its parent (a child or a fork);
        ``state`` given means it is already stored. This session keeps owning the adapters."""
        return type(self).from_ports(
            agent,
            self.ports.for_child(signals=signals),
            session_id=session_id,
            state=state,
            created=state is not None,
            parent_id=self.id,
            labels=labels,
            delegation=delegation,
        )
