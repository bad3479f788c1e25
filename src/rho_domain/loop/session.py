"""Session: owns the ports and the conversation State, and runs its prompts.

Its public API is here; what each call does lives in the module that owns it: a run's frame in
``run_boundaries.bounded_run``, a compaction asked for in ``compaction_run.compact_asked``, an
approval answered between runs in ``tool_approval.record_answer``, closing in
``Journal.release``, children in ``sub_agents``.

One run, top to bottom: ``begin_run`` → the turns (``rho_domain.loop.turns.Turns``: add the
user message → (pause, cancel, compaction, directives) → stream the model call → assemble the
assistant message → for each tool call: policy → approval → execute → append the result →
loop until a turn has no tool calls) → ``end_run``, however the run ended.

Every state change is an event, applied to State, persisted and announced by the Journal.
Replaying the persisted events rebuilds the session exactly.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import TYPE_CHECKING, NoReturn, SupportsIndex

from rho_domain import events as ev
from rho_domain.agent import Agent
from rho_domain.errors import ConfigError, SessionStateError
from rho_domain.loop.compaction_run import compact_asked
from rho_domain.loop.control import RunControl
from rho_domain.loop.journal import Journal, Listener
from rho_domain.loop.run_boundaries import bounded_run, stop_the_run
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
    from rho_domain.compaction_values import CompactResult, CompactTrigger
    from rho_domain.ports.approver import Approver
    from rho_domain.ports.database import Database
    from rho_domain.ports.durable import DurableSteps
    from rho_domain.ports.line_search import LineSearcher


class Session:
    """The execution context of an agent: runs prompts, keeps State, obeys signals.

    All ports are passed in, one by one or as a ``SessionPorts`` bundle (``from_ports``;
    ``rho_entry``'s ``open_session`` wires defaults). ``state`` with ``created=True`` resumes a
    stored session. One run at a time. ``tool_source``
    serves tools that may change (MCP servers): ``agent`` then includes the ones it served
    last, taken at each run's start and before each model call (``tool_refresh``).
    ``steps`` makes its runs durable (each model call and tool call one step,
    ``durable_steps``); ``replay``, the trace's events from the run being executed again
    (after a dead worker), is retraced by the Journal instead of written twice.
    """

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
        if is_sub_agent(parent_id, labels or {}):  # a delegated child, however it is resumed
            delegation = False
            if "delegate" in agent.registry:
                agent = agent.without_tools("delegate")
        self._agent = agent
        self.tool_source = tool_source
        self.model = model
        self.executor = executor
        self.clock = clock
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
        self.journal = Journal(self.id, self.state, clock, store, created=created, replay=replay)
        if on_event is not None:
            self.journal.listeners.append(on_event)
        self.control = RunControl(self.id, signals, self.journal)
        can_delegate = delegation and "delegate" in agent.registry
        self._sub_agents = SubAgents(self)
        self._running = False
        self._run_over: asyncio.Future[None] | None = None  # the run's end, on its loop
        self._run_task: asyncio.Task[object] | None = None
        self._compacting = False  # compact() waits for its summary (the history is read)
        self._closed = False  # close released the store's lock (a new run would not hold it)
        self._tally: RunTally | None = None
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
    ) -> Session:
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
        return self._tally

    @property
    def agent(self) -> Agent:
        """The agent, with the tools its ``tool_source`` served when last asked."""
        return self._agent

    # ------------------------------------------------------------------ public API

    def set_approver(self, approver: Approver | None) -> None:
        """Ask ``approver`` from now on (None: a call that needs an answer ends the run
        ``awaiting_approval``); a run in progress asks it from its next tool call."""
        self.approver = approver
        self.tools.approver = approver

    def cancel(self) -> None:
        """Stop the current run at its next checkpoint; a running tool is killed."""
        self.control.cancel()

    def resolve_approval(
        self,
        call_id: str,
        approved: bool,
        *,
        always: bool = False,
        reason: str = "",
        digest: str | None = None,
    ) -> None:
        """Answer a pending approval; the next ``run()`` (without a prompt) continues.
        ``reason`` (for a rejection) reaches the model in the call's result.

        ``digest`` binds the answer to the call its answerer was shown
        (``rho_domain.call_digest``): a surface that showed the call from stored data gives
        it, and a call held under ``call_id`` with another digest raises ``CallChanged``,
        nothing answered (the call still waits). None: the caller holds this session's call
        itself (in-process), so there is nothing between the showing and the answer."""
        from rho_domain.loop.tool_approval import record_answer  # with the first answer

        record_answer(self.journal, call_id, approved, always=always, reason=reason, digest=digest)

    async def run(
        self,
        prompt: str | None = None,
        *,
        max_turns: int | None = None,
        on_event: Listener | None = None,
        run_id: str | None = None,
    ) -> RunResult:
        """Run until the model answers without tool calls, or a limit, signal or error.

        ``max_turns`` None takes the config's; 0 means no limit. ``run_id`` names the run (a
        durable run's is its queue's; otherwise a new id). Model, tool and store failures,
        and a context window too small for the system prompt and tools (``ConfigError``), end
        the run with status ``error`` (never raised). A model repeating a tool call ends it
        ``stuck`` once told (``rho_domain.loop.stuck``); with an ``output_schema`` the final answer
        is parsed and checked, corrected once (``rho_domain.loop.output_check``).
        Raises ``SessionStateError`` if a run or a ``compact()`` is already in progress, or
        if the session is stored and was closed (its lock released: resume it).
        """
        if self._running:
            raise SessionStateError("this session is already running; wait or cancel it")
        if self._compacting:
            raise SessionStateError(
                "this session is compacting its history; wait for compact() to return"
            )
        if self._closed and self.journal.created and self.store is not None:
            # close gave the store's lock back: another process may have continued the
            # session since, and this one's history would be written over it.
            raise SessionStateError(
                f"session {self.id} was closed, which released its stored session to other "
                f"processes (run_sync closes it after each run); open it again to go on: "
                f"Session.resume({self.id!r}, store=...)"
            )
        self._running = True
        run_over = self._run_over = asyncio.get_running_loop().create_future()
        self._run_task = asyncio.current_task()
        if on_event is not None:
            self.journal.listeners.append(on_event)
        tally = self._tally = RunTally(
            id=run_id or new_id(),
            started=self.clock.monotonic(),
            tools_before=self.state.tool_calls,
        )

        def ended() -> None:
            if on_event is not None:
                self.journal.listeners.remove(on_event)
            self._running = False
            run_over.set_result(None)

        return await bounded_run(
            self,
            tally,
            prompt,
            max_turns,
            record=self._record,
            refresh_tools=self._refresh_tools,
            ended=ended,
        )

    async def stream(
        self, prompt: str | None = None, *, max_turns: int | None = None
    ) -> AsyncIterator[ev.Event]:
        """Run and yield every event as it happens; ``last_result`` then holds the result.
        Leaving the loop early cancels the run."""
        from rho_domain.loop.event_stream import stream_events  # with the first stream

        run = self.run
        async for event in stream_events(
            lambda listener: run(prompt, max_turns=max_turns, on_event=listener), self.cancel
        ):
            yield event

    async def compact(
        self, custom_instructions: str = "", *, trigger: CompactTrigger = "manual"
    ) -> CompactResult:
        """Summarise old history through the model and replace it.

        When nothing was compacted (too little history, or a summary that would not make the
        context smaller) the result says so: empty ``summary``, the reason in ``note``.
        Raises ``ModelError`` when the summary fails; history is then left untouched.
        Raises ``SessionStateError`` while a run or another compaction is in progress, or
        while tool calls wait for approval (``compact_asked``)."""
        if self._running or self._compacting:
            # its plan is the history read now; what a run adds while the summary is asked
            # for would be dropped when the history is replaced
            raise SessionStateError(
                "cannot compact while a run is in progress (or another compaction): compact "
                "after run() returns"
            )
        self._compacting = True
        try:
            return await compact_asked(
                self.agent, self.model, self.journal, custom_instructions, trigger
            )
        finally:
            self._compacting = False

    async def fork(self, *, at: int, agent: Agent | None = None) -> Session:
        """A new session whose history is this one's turns 1..``at`` (``fork.turns`` numbers
        them), sharing this session's ports, with ``agent`` (another model, say) or this one's.

        The new session records this one as its parent (``parent_id``, and the labels
        ``forked_from`` and ``fork_at``) and, with a store, is saved at once. This session is
        not changed. Raises SessionStateError for a turn that is not in the history or falls
        inside a tool batch (refused, naming the batch's boundaries; see ``rho_domain.fork``).
        """
        from rho_domain.fork import fork_labels, history_until  # with the first fork

        history = history_until(self.state.messages, at)
        child = self.related(
            agent if agent is not None else self.agent,
            signals=self.signals,
            labels=fork_labels(self.id, at, self.labels),
        )
        for message in history:
            child.journal.record(ev.MessageAdded(at=self.clock.now(), message=message))
        await child.save()
        return child

    async def save(self) -> None:
        """Create the stored session now (otherwise its first run does) and write its events.
        Without a store, does nothing."""
        await self.journal.create(self._record())
        await self.journal.flush()

    def close_with(self, resource: Closeable) -> None:
        """Close ``resource`` (an adapter the caller built for this session, such as a sandbox
        executor) when this session closes, as the adapters in ``owned``."""
        self._owned = (*self._owned, resource)

    async def close(self) -> None:
        """Persist anything pending and release the store's lock; tell listeners that end with
        the session (``EndsWithSession``); close the adapters built for it (``owned``; their
        failures to close are not raised). Idempotent. A stored session closed does not
        run again (``SessionStateError``: resume it); one without a store does.

        Called while a run is in progress (another task's), the run is cancelled and its end
        awaited first: released under it, the lock would let another process take the
        session while this run still writes. A run on another event loop (another thread)
        cannot be awaited from here: ``SessionStateError``, nothing closed."""
        if self._running:
            await stop_the_run(self.id, self.control, self._run_over, self._run_task)
        self._closed = True
        try:
            await self.journal.release()
        finally:
            owned, self._owned = self._owned, ()
            for resource in owned:
                with contextlib.suppress(Exception):
                    await resource.aclose()

    async def __aenter__(self) -> Session:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    # ------------------------------------------------------------ the tools, the record, relatives

    async def _refresh_tools(self) -> bool:
        """Take the tool source's current tools; False when the run was cancelled meanwhile."""
        if self.tool_source is None:
            return True
        from rho_domain.loop.tool_refresh import take_tools  # a session with a tool source

        agent = await take_tools(self._agent, self.tool_source, self.journal, self.control)
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
    ) -> Session:
        """A session on this one's ports with this one as its parent (a child or a fork);
        ``state`` given means it is already stored. This session keeps owning the adapters."""
        return Session.from_ports(
            agent,
            self.ports.for_child(signals=signals),
            session_id=session_id,
            state=state,
            created=state is not None,
            parent_id=self.id,
            labels=labels,
            delegation=delegation,
        )
