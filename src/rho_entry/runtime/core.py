"""AgentRuntime: what the seeds' functions (``lifecycle.py``, ``prompts.py``) drive; for services.

::

    runtime = create_runtime(AgentConfig(...), store=SessionStore(), max_concurrent=32)
    await start_runtime(runtime)
    handle = await dispatch_prompt(runtime, "Summarise the logs")   # returns at once
    async for event in handle.events(): ...                          # replay, then live
    result = await handle                                            # RunResult
    result = await run_prompt(runtime, "Another task")               # dispatch + wait
    await close_runtime(runtime, deadline=10)                        # cancel, persist, release

One runtime is one agent definition, its ports, its own session and a bounded pool of run
slots. A dispatch runs in the runtime's own session (``runtime.session_id``, known when the
runtime is created: prompts dispatched one after another continue one conversation), in a
new session (``new_session=True``: one conversation per dispatch), or in a stored session
(``session_id=``); the handle closes it when it is done. Back-pressure: at most
``max_concurrent`` runs at once; up to ``max_queued`` more handles wait for a slot; beyond
that ``dispatch_prompt`` waits for room (``when_full="wait"``, the default) or raises
``RuntimeFull`` (``when_full="raise"``). Many runtimes can share one event loop; they share
the process (its collector: ``collector.py``). This module decides where a dispatch runs and
whether the runtime takes it (its state, its event loop); the bounds, the handles not done and
each dispatch's ticket are ``dispatch_pool.py``'s, the sessions' opening ``opening.py``'s.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from rho_adapters.loop_lag import LoopLag
from rho_domain.agent import Agent as DomainAgent
from rho_domain.errors import ConfigError, RhoError, RuntimeClosed, SessionStateError
from rho_domain.json_schema import check_schema
from rho_domain.loop.output_check import check_patterns
from rho_domain.permissions import PermissionProfile
from rho_domain.ports.store import SessionStore
from rho_domain.run import is_plain_id, new_id
from rho_entry.runtime.collector import let_go
from rho_entry.runtime.dispatch_pool import DispatchPool, WhenFull, in_use, settle
from rho_entry.runtime.handle import AgentHandle
from rho_entry.runtime.opening import SessionOpener, exact_id
from rho_entry.runtime.stats import RuntimeStats
from rho_entry.seed_api.approval_callback import ApprovalCallback

if TYPE_CHECKING:
    from rho_entry.resume_policy import ResumeAuthority


class ClosableStore(Protocol):
    """What a runtime may own and close (``StoreChoice``)."""

    async def aclose(self) -> None:
        """Close what the store holds open; idempotent."""


RuntimeState = Literal["created", "started", "closing", "closed"]


class AgentRuntime:
    """Runs prompts of one agent in the background with bounded concurrency.

    Build with ``create_runtime``; ``start_runtime`` before dispatching; ``close_runtime`` at
    shutdown. Usable as ``async with create_runtime(...) as runtime``.
    """

    __slots__ = ("_closed", "_lag", "_loop", "_owned_store", "_pool", "_state", "durable")

    def __init__(
        self,
        agent: DomainAgent,
        *,
        store: SessionStore | None,
        max_concurrent: int,
        max_queued: int,
        when_full: WhenFull,
        approval_callback: ApprovalCallback | None,
        record_events: bool,
        ports: Mapping[str, Any],
        trace: bool = False,
        allowed_profiles: tuple[PermissionProfile, ...] = (),
        allowed_roots: tuple[Path, ...] = (),
    ) -> None:
        opener = SessionOpener(
            agent=agent,
            store=store,
            ports=dict(ports),
            trace=trace,
            profiles=allowed_profiles or (agent.profile,),
            roots=allowed_roots,
        )
        self._pool = DispatchPool(
            opener,
            max_concurrent=max_concurrent,
            max_queued=max_queued,
            when_full=when_full,
            approval_callback=approval_callback,
            record_events=record_events,
        )
        self._state: RuntimeState = "created"
        self._closed = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None  # the loop it was started on
        self._lag = LoopLag()  # ticks on that loop from start to close
        # where dispatch_prompt(durable=True) enqueues: (database, queue), set by create_runtime
        self.durable: tuple[str, str] | None = None
        self._owned_store: ClosableStore | None = None  # opened from a URL: closed with us

    def own_store(self, store: ClosableStore) -> None:
        """Close ``store`` when the runtime closes (a store ``create_runtime`` opened from a
        URL: its PostgreSQL pool and listener belong to the runtime, not to the caller)."""
        self._owned_store = store

    def __repr__(self) -> str:
        return f"<AgentRuntime {self._state} handles={len(self._pool.live)}>"

    @property
    def agent(self) -> DomainAgent:
        """The agent definition every session of this runtime runs."""
        return self._pool.opener.agent

    @property
    def session_id(self) -> str:
        """The runtime's own session: where ``dispatch_prompt`` and ``run_prompt`` run a
        prompt given without ``session_id`` or ``new_session``."""
        return self._pool.opener.own_id

    @property
    def store(self) -> SessionStore | None:
        """Where sessions are persisted (None: nowhere)."""
        return self._pool.opener.store

    @property
    def max_concurrent(self) -> int:
        """How many runs may run at once."""
        return self._pool.max_concurrent

    @property
    def max_queued(self) -> int:
        """How many more handles may wait for a run slot."""
        return self._pool.max_queued

    @property
    def when_full(self) -> WhenFull:
        """What ``dispatch_prompt`` does when the runtime is full: wait, or raise."""
        return self._pool.when_full

    @property
    def approval_callback(self) -> ApprovalCallback | None:
        """What answers approvals for every session this runtime opens from now on."""
        return self._pool.approval_callback

    @approval_callback.setter
    def approval_callback(self, callback: ApprovalCallback | None) -> None:
        self._pool.approval_callback = callback

    @property
    def state(self) -> RuntimeState:
        """created, started, closing or closed."""
        return self._state

    @property
    def handles(self) -> tuple[AgentHandle, ...]:
        """The handles not done yet (queued, running or awaiting approval)."""
        return tuple(self._pool.live.values())

    def get_handle(self, session_id: str) -> AgentHandle | None:
        """The live handle (not done) of ``session_id``, or None: what a service looks up to
        cancel, approve or stream a run by id."""
        return self._pool.live.get(session_id)

    async def __aenter__(self) -> AgentRuntime:
        return await self.start()

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def start(self) -> AgentRuntime:
        """See ``start_runtime``."""
        if self._state in ("closing", "closed"):
            raise RuntimeClosed(f"runtime is {self._state}; create a new one")
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
        self._check_loop("start_runtime")
        self._state = "started"
        self._lag.start()
        return self

    def stats(self) -> RuntimeStats:
        """The sessions not done and the event loop's longest stall since ``start``."""
        return RuntimeStats(sessions_active=len(self._pool.live), loop_lag=self._lag.stats())

    def _check_loop(self, action: str) -> None:
        """Refuse use from an event loop other than the one the runtime was started on: its
        handles, queues and sessions' tasks belong to that loop."""
        if self._loop is not None and asyncio.get_running_loop() is not self._loop:
            raise SessionStateError(
                f"{action}: this runtime was started on another event loop; a runtime serves "
                "one loop: create and start a runtime on each loop (or thread) that dispatches"
            )

    async def wait_closed(self) -> None:
        """Return once ``close_runtime`` has finished (e.g. one started by a signal)."""
        await self._closed.wait()

    async def dispatch(
        self,
        prompt: str | None,
        *,
        session_id: str | None = None,
        new_session: bool = False,
        max_turns: int | None = None,
        labels: Mapping[str, str] | None = None,
        output_schema: Mapping[str, Any] | None = None,
    ) -> AgentHandle:
        """See ``dispatch_prompt``."""
        self._check_loop("dispatch_prompt")
        if output_schema is not None:  # refused here, not inside the handle
            check_schema(output_schema)
            from rho_entry.wiring import build_line_searcher

            # compiled in a worker: check_schema never compiles a pattern on this loop
            await check_patterns(output_schema, build_line_searcher())
        if self._state != "started":
            hint = ": await start_runtime(runtime) first" if self._state == "created" else ""
            raise RuntimeClosed(f"runtime is {self._state}{hint}")
        if new_session and session_id is not None:
            raise ConfigError("give session_id= (a stored session) or new_session=True, not both")
        own = session_id is None and not new_session
        if own and session_id is None:
            session_id = self._pool.opener.own_id
        resume = session_id is not None and not own
        if prompt is None and not (resume or (own and self._pool.opener.own_opened())):
            raise ConfigError(
                "a new session needs a prompt (prompt=None continues a session: its own once "
                "the runtime has run a prompt, or a stored one with session_id=)"
            )
        if resume and not is_plain_id(session_id or ""):
            raise ConfigError(exact_id(session_id or ""))
        if resume and self._pool.opener.store is None:
            raise ConfigError(
                f"continuing session {session_id!r} needs a store: create_runtime(store=...)"
            )
        if session_id is not None and session_id in self._pool.live:
            raise SessionStateError(in_use(session_id, own=own))
        self._pool.refuse_if_full()
        await self._pool.places.acquire()
        refusal = self._refusal_after_wait(session_id, own=own)
        if refusal is not None:
            self._pool.places.release()
            raise refusal
        sid = session_id if session_id is not None else new_id()
        handle = self._pool.add(
            sid,
            own=own,
            resume=resume,
            max_turns=max_turns,
            labels=labels,
            schema=output_schema,
        )
        handle.start(prompt)
        return handle

    def _refusal_after_wait(self, session_id: str | None, *, own: bool) -> RhoError | None:
        """Why a dispatch that waited for room must not go on: the runtime closed, or another
        dispatch took the same session meanwhile."""
        if self._state != "started":
            return RuntimeClosed(f"runtime is {self._state}")
        if session_id is not None and session_id in self._pool.live:
            return SessionStateError(in_use(session_id, own=own))
        return None

    def resume_authority(self) -> ResumeAuthority:
        """What a stored session continued here may run with (``SessionOpener.authority``)."""
        return self._pool.opener.authority()

    async def close(self, *, deadline: float = 30.0, drain: bool = False) -> None:
        """See ``close_runtime``."""
        self._check_loop("close_runtime")
        if self._state in ("closing", "closed"):
            await self._closed.wait()
            return
        self._state = "closing"
        loop = asyncio.get_running_loop()
        end = loop.time() + max(deadline, 0.0)
        if drain:
            await settle(self.handles, end - loop.time(), running_only=True)
        for handle in self.handles:
            handle.cancel()
        await settle(self.handles, end - loop.time(), running_only=False)
        for handle in self.handles:  # the deadline passed: stop what is left outright
            await handle.abort()
        self._state = "closed"
        self._lag.stop()
        let_go(self)  # the collector, held by start_runtime(..., freeze_start_up=True)
        if self._owned_store is not None:
            owned, self._owned_store = self._owned_store, None
            await owned.aclose()
        self._closed.set()
