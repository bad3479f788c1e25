"""What the library ``Session`` shows and does through the domain session it drives
(``domain``, a ``rho_domain.loop.session.Session``): its ports and loop objects, each read
through at every access (``Forward``), the conversation and the last result, and the calls
that are the domain session's own (cancel, answer an approval, compact, fork, save, close),
and the refusal to be copied (it holds the domain session's open adapters).

``SessionFace`` holds no state: ``rho_entry.session.Session`` has the slots and builds
``domain``; everything here is one read or one call through it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NoReturn, SupportsIndex

from rho_entry.agent import Agent, definition_of
from rho_entry.forwarding import Forward

if TYPE_CHECKING:
    from rho_domain import agent as domain_agent
    from rho_domain.compaction import CompactResult, CompactTrigger
    from rho_domain.loop import session as domain_session
    from rho_domain.loop.control import RunControl
    from rho_domain.loop.journal import Journal
    from rho_domain.loop.session_ports import SessionPorts
    from rho_domain.loop.tally import RunTally
    from rho_domain.loop.tool_batch import ToolBatch
    from rho_domain.ports.approver import Approver
    from rho_domain.ports.clock import Clock
    from rho_domain.ports.database import Database
    from rho_domain.ports.executor import Executor
    from rho_domain.ports.model import ChatModel
    from rho_domain.ports.signals import SignalSource
    from rho_domain.ports.store import SessionStore
    from rho_domain.run import RunResult
    from rho_entry.seed_api.state import State as DocumentState

_SESSION = "domain"


class SessionFace:
    """The members of ``Session`` that read or call through its domain session (see the
    module docstring); ``Session`` is the only subclass."""

    __slots__ = ()

    domain: domain_session.Session
    _given_agent: Agent | domain_agent.Agent
    _state: DocumentState
    _notices: tuple[str, ...]

    id: Forward[str] = Forward(_SESSION)
    model: Forward[ChatModel] = Forward(_SESSION)
    executor: Forward[Executor] = Forward(_SESSION)
    clock: Forward[Clock] = Forward(_SESSION)
    store: Forward[SessionStore | None] = Forward(_SESSION)
    signals: Forward[SignalSource | None] = Forward(_SESSION)
    approver: Forward[Approver | None] = Forward(_SESSION)
    databases: Forward[dict[str, Database]] = Forward(_SESSION)
    parent_id: Forward[str | None] = Forward(_SESSION)
    labels: Forward[dict[str, str]] = Forward(_SESSION)
    journal: Forward[Journal] = Forward(_SESSION)
    control: Forward[RunControl] = Forward(_SESSION)
    tools: Forward[ToolBatch] = Forward(_SESSION)
    ports: Forward[SessionPorts] = Forward(_SESSION)
    current_run: Forward[RunTally | None] = Forward(_SESSION)

    @property
    def agent(self) -> Agent | domain_agent.Agent:
        """The agent this session runs (as it was given)."""
        return self._given_agent

    @property
    def state(self) -> DocumentState:
        """The conversation: the domain State the loop keeps, with the design documents'
        methods (``rho_entry.seed_api.state.State``); what is written on it reaches the trace."""
        return self._state

    @property
    def last_result(self) -> RunResult | None:
        """The result of the last run (``stream`` leaves it here)."""
        return self.domain.last_result

    @last_result.setter
    def last_result(self, result: RunResult | None) -> None:
        self.domain.last_result = result

    def cancel(self) -> None:
        """Stop the current run at its next checkpoint; a running tool is killed. May be
        called from any thread (a UI, a watchdog beside ``run_sync``)."""
        self.domain.cancel()

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
        ``reason`` (for a rejection) reaches the model in the call's result. ``digest``: the
        digest of the call as its answerer was shown it (``rho_domain.call_digest``), given
        by every surface that showed it from stored data; another call held under
        ``call_id`` raises ``CallChanged`` and stays pending."""
        self.domain.resolve_approval(call_id, approved, always=always, reason=reason, digest=digest)

    async def compact(
        self, custom_instructions: str = "", *, trigger: CompactTrigger = "manual"
    ) -> CompactResult:
        """Summarise old history through the model and replace it
        (``rho_domain.loop.session.Session.compact``)."""
        return await self.domain.compact(custom_instructions, trigger=trigger)

    async def fork(
        self, *, at: int, agent: Agent | domain_agent.Agent | None = None
    ) -> domain_session.Session:
        """A new session with this one's turns 1..``at``
        (``rho_domain.loop.session.Session.fork``)."""
        return await self.domain.fork(at=at, agent=None if agent is None else definition_of(agent))

    async def save(self) -> None:
        """Create the stored session now (otherwise its first run does) and write its events.
        Without a store, does nothing."""
        await self.domain.save()

    @property
    def resume_notices(self) -> tuple[str, ...]:
        """What a resumed session did not inherit from its directory (auto-approval)."""
        return self._notices

    def close_with(self, resource: Any) -> None:
        """Close ``resource`` (an adapter the caller built and passed in, such as a sandbox
        executor) when this session closes, as the adapters it created itself."""
        self.domain.close_with(resource)

    async def close(self) -> None:
        """Persist, release the store lock, and close the adapters this session created."""
        await self.domain.close()

    def __reduce_ex__(self, protocol: SupportsIndex) -> NoReturn:
        # pickle, copy.copy and copy.deepcopy all ask this: pickle failed on an object deep
        # inside ("Can't pickle local object '_createenviron.<locals>.encode'"), deepcopy on
        # a 'mappingproxy', and copy.copy made a second facade driving the same session.
        raise TypeError(
            f"a Session cannot be pickled or copied: it holds open adapters (the model client, "
            f"the executor, its store's lock); keep its id ({self.id!r}) and reopen it with "
            "Session.resume(id, store=...), or start a new Session from the same Agent"
        )
