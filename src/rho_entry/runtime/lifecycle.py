"""The seeds' lifecycle functions over ``AgentRuntime``: the names services call.

``create_runtime`` / ``start_runtime`` / ``close_runtime``, and ``shutdown_on_signals`` for
services that own their event loop (the prompts sent to a started runtime, ``dispatch_prompt``
and ``run_prompt``, are ``prompts.py``'s).
"""

from __future__ import annotations

import asyncio
import gc
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rho_domain.agent import Agent as DomainAgent
from rho_domain.config import AgentConfig as DomainAgentConfig
from rho_domain.permissions import PermissionProfile
from rho_domain.ports.store import SessionStore
from rho_entry.agent import definition_of
from rho_entry.config.home import config_dir, expanded
from rho_entry.facade import Agent
from rho_entry.resume_policy import resolve_profiles
from rho_entry.runtime.collector import hold
from rho_entry.runtime.core import AgentRuntime
from rho_entry.runtime.dispatch_pool import WhenFull
from rho_entry.seed_api.approval_callback import ApprovalCallback

__all__ = [
    "close_runtime",
    "create_runtime",
    "shutdown_on_signals",
    "start_runtime",
]


def create_runtime(
    config: DomainAgentConfig | DomainAgent | Agent | None = None,
    *,
    store: SessionStore | str | os.PathLike[str] | None = None,
    max_concurrent: int = 32,
    max_queued: int = 1024,
    when_full: WhenFull = "wait",
    approval_callback: ApprovalCallback | None = None,
    record_events: bool = False,
    trace: bool = False,
    allowed_profiles: Sequence[PermissionProfile | str] = (),
    allowed_roots: Sequence[str | Path] = (),
    durable_db: str | None = None,
    durable_queue: str = "rho-runs",
    **ports: Any,
) -> AgentRuntime:
    """Build a runtime: resolve the profile, build the tools and prompt (once), keep the ports,
    and create the runtime's own session (``runtime.session_id``), where ``run_prompt`` and
    ``dispatch_prompt`` run prompts given without ``session_id`` or ``new_session``: one
    conversation, continued by each prompt (stored on its first run, with a store).

    ``config`` is an ``AgentConfig`` or a ready ``Agent``. ``store`` persists every session
    (``SessionStore()`` for the CLI's directory, or a URL such as ``postgresql://...``:
    ``rho_entry.config.stores``, which the runtime opens and ``close_runtime`` closes); without
    it nothing is written. ``ports`` are
    passed to every ``Session`` (``model=``, ``executor=``, ``clock=``, ``approver=``...).
    ``approval_callback`` answers approvals for every session; without one (and no
    ``approver=``), a call that needs approval leaves its handle ``awaiting_approval``.
    ``trace`` records OpenTelemetry spans of every session when the process has an SDK set up
    (``rho_entry.otel.instrument_if_configured``; ``rho-agent serve`` sets it).
    ``allowed_profiles`` (names, paths or profiles; default: the agent's) bound what a stored
    session continued with ``session_id=`` may run with: its stored profile must grant nothing
    beyond one of them, compared by content, never by name (``rho_entry.resume_policy``).
    ``allowed_roots`` (default: the agent's working directory) are the directories a stored
    session's working directory must lie in.
    ``durable_db`` (a SQLite path or a PostgreSQL URL, the ``dbos`` extra) and
    ``durable_queue`` are where ``dispatch_prompt(..., durable=True)`` enqueues runs for
    workers (``rho-agent worker``; docs/durable.md); they need a ``store`` the workers share.
    Raises ``ConfigError`` for a bad limit or profile. Nothing runs until ``start_runtime``.
    """
    agent = definition_of(config if isinstance(config, Agent | DomainAgent) else Agent(config))
    opened = None
    if isinstance(store, str | os.PathLike):  # a Path was taken for a store object
        from rho_entry.config.stores import choose_store

        opened = choose_store(os.fspath(store), os.environ, origin="create_runtime(store=...)")
        store = opened.store
    profiles = resolve_profiles(allowed_profiles, config_dir=config_dir(os.environ))
    runtime = AgentRuntime(
        agent,
        store=store,
        max_concurrent=max_concurrent,
        max_queued=max_queued,
        when_full=when_full,
        approval_callback=approval_callback,
        record_events=record_events,
        ports=ports,
        trace=trace,
        allowed_profiles=profiles,
        allowed_roots=tuple(expanded(r).resolve() for r in allowed_roots),
    )
    if opened is not None:
        runtime.own_store(opened)
    if durable_db is not None:
        runtime.durable = (durable_db, durable_queue)
    return runtime


async def start_runtime(runtime: AgentRuntime, *, freeze_start_up: bool = False) -> AgentRuntime:
    """Open the runtime for dispatches (idempotent while started). Returns it.

    ``freeze_start_up``: the service's start-up is over, so collect once and move every
    object left to the collector's permanent generation (``gc.freeze``), as ``rho-agent
    serve`` does once it listens; and hold the collector's full passes off until the runtime
    closes (``collector.hold``: one after 100 middle passes, not 10). A full collection holds
    the event loop, every session's stream with it, while it walks every object tracked: the
    modules, the runtime and the service's own start-up were ~39,000 of the 54,000-123,000
    objects of each full pass while 1,000 sessions ran (issue 33). The process's choice, never
    made for it: an object alive now that later becomes garbage in a cycle is never freed.
    That collection runs before the runtime's gauge starts: it is the service's start-up, and
    charged to its sessions' stall it read 18-163 ms (``stats().loop_lag``)."""
    if freeze_start_up:
        gc.collect()
        gc.freeze()
    started = await runtime.start()
    if freeze_start_up:
        hold(runtime)
    return started


async def close_runtime(
    runtime: AgentRuntime, *, deadline: float = 30.0, drain: bool = False
) -> None:
    """Stop the runtime within ``deadline`` seconds; every session ends resumable.

    New dispatches are refused at once. With ``drain``, running handles get until the
    deadline to finish; the rest (all of them without ``drain``) are cancelled: a running tool
    is killed, ``run_end`` (cancelled) is persisted and the store's lock released, so
    ``rho-agent --resume <id>`` continues each session. A handle still not done at the
    deadline has its task cancelled outright (its trace is repaired on resume).
    """
    await runtime.close(deadline=deadline, drain=drain)


def shutdown_on_signals(
    runtime: AgentRuntime, *, signals: tuple[int, ...] | None = None, deadline: float = 30.0
) -> None:
    """Close ``runtime`` when the process gets SIGTERM, SIGINT, SIGHUP or another signal whose
    default ends a process (SIGQUIT, SIGUSR1, ...: ``stop_signals.service_stops``; Unix event
    loops). Each of those killed the service with its sessions unended; one the process
    ignores (SIGHUP under ``nohup``) or already handles is left alone. ``signals`` chooses
    others.

    For services that own their loop; under a server (uvicorn, hypercorn...) call
    ``close_runtime`` from its shutdown hook instead. ``await runtime.wait_closed()`` returns
    once the close is done.
    """
    from rho_entry.stop_signals import service_stops

    loop = asyncio.get_running_loop()
    chosen = signals if signals is not None else service_stops()
    closing: list[asyncio.Task[None]] = []

    def on_signal() -> None:
        if not closing:
            closing.append(loop.create_task(close_runtime(runtime, deadline=deadline)))

    for number in chosen:
        loop.add_signal_handler(number, on_signal)
