"""Connect sessions: ask each for its context export and start a coordinating agent with all
of them (``connect(...)``; the command, ``rho-agent monitor connect A B [C...]
["instruction"]``, is ``rho_entry.cli.connect``).

A running or paused session is asked through the store's ``SessionControl`` (files: an
``exports/ID.request``; PostgreSQL: a row) and answers between steps, with no shared memory;
one that does not answer within ``wait`` seconds (an idle REPL waiting for input, a stuck
process), or that has finished, is exported from its trace, and so is one that finishes while
it is asked (no wait for the deadline: its trace is complete). The coordinator is a new stored
session whose first turn holds the combined exports; its labels record its sources
(``connected_from``: the ids, comma-separated; ``connect_sources``: how each export was
obtained). It takes the first source's config (but not its endpoint nor its auto-approval)
unless one is given, and is continued like any session (``--resume``, which checks its profile
like any other).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from pathlib import Path

import attrs

from rho_adapters.finish import finished
from rho_domain import events as ev
from rho_domain.config import AgentConfig
from rho_domain.context_export import ContextExport, combine_exports, export_context
from rho_domain.errors import ConfigError
from rho_domain.messages import AssistantMessage, UserMessage
from rho_domain.ports.session_control import SessionOperator, run_in_progress
from rho_domain.ports.store import SessionRecord
from rho_domain.run import new_id
from rho_domain.state import State
from rho_domain.value_methods import value_eq, value_hash, value_repr
from rho_entry.config.stores import StoreChoice, choose_store

WAIT_SECONDS = 30.0
POLL_SECONDS = 0.1


@attrs.frozen(kw_only=True)
class Connected:
    """The coordinating session (stored, not run yet) and the exports it was built from."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    session_id: str
    sources: tuple[ContextExport, ...]


async def export_session(
    sessions: SessionOperator,
    session_id: str,
    *,
    wait: float = WAIT_SECONDS,
    poll: float = POLL_SECONDS,
) -> ContextExport:
    """The context export of one session: asked of it while it runs, else from its trace (a
    request left unanswered is withdrawn)."""
    state = (await sessions.info(session_id)).liveness
    if run_in_progress(state) and wait > 0:  # it reaches checkpoints: it can answer
        # named before it is made: an interrupt (SIGHUP while the request's file was being
        # made) lands inside the try below, whose finally withdraws it by this id
        request_id = new_id()
        deadline = time.monotonic() + wait
        source = f"trace: it was {state} but did not answer within {wait:g} s"
        answer: str | None = None
        try:
            await sessions.request_export(session_id, request_id)
            while time.monotonic() < deadline:
                # read after the liveness: a run that ends answers what was asked of it first
                now = (await sessions.info(session_id)).liveness
                answer = await sessions.export_answer(session_id, request_id)
                if answer is not None:
                    return ContextExport(session_id=session_id, source="running", text=answer)
                if not run_in_progress(now):  # it finished while asked: its trace is complete
                    source = f"trace: it finished ({now}) while asked"
                    break
                await asyncio.sleep(poll)
        finally:  # unanswered (given up, failed, cancelled): nobody waits for it now
            if answer is None:
                await finished(
                    asyncio.ensure_future(sessions.withdraw_export(session_id, request_id))
                )
    else:
        source = "trace"
    _, events = await sessions.recording(session_id)
    text = export_context(session_id, State.from_events(events))
    return ContextExport(session_id=session_id, source=source, text=text)


async def connect(
    refs: Sequence[str],
    *,
    root: Path | str | None = None,
    wait: float = WAIT_SECONDS,
    config: AgentConfig | None = None,
    store: StoreChoice | None = None,
) -> Connected:
    """Export the sessions ``refs`` (ids, prefixes, ``latest``, directories) of ``store`` (or
    of the store ``root`` names: a sessions directory or a store URL, as ``--store`` takes)
    concurrently, and store a coordinating session holding them all.

    What it opens it closes on every path, an error's and a cancellation's too: the store it
    chose from ``root`` (``StoreChoice.aclose``: a PostgreSQL store's share of the pool; a
    caller's ``store`` stays open, the caller's to close), the coordinator's hold on its
    session (released) and each export request no answer was read for (withdrawn).

    Raises SessionNotFound for an unknown reference, ConfigError without any.
    """
    if not refs:
        raise ConfigError("connect needs at least one session id")
    if store is not None:
        return await _connect(refs, store, wait=wait, config=config)
    chosen = choose_store(root, {}, origin="root=")
    try:
        return await _connect(refs, chosen, wait=wait, config=config)
    finally:
        await finished(asyncio.ensure_future(chosen.aclose()))


async def _connect(
    refs: Sequence[str], chosen: StoreChoice, *, wait: float, config: AgentConfig | None
) -> Connected:
    sessions = chosen.sessions
    targets = [(await sessions.info(ref)).id for ref in refs]
    exports = tuple(
        await asyncio.gather(*(export_session(sessions, t, wait=wait) for t in targets))
    )
    if config is None:
        # A source's endpoint and auto-approval were its user's choices, not the
        # coordinator's: it runs where its resumer's configuration says (resume_policy).
        config = attrs.evolve(
            (await sessions.record(targets[0])).config,
            base_url=None,
            provider=None,
            api_key_env=None,
            auto_approve=False,
        )
    ids = [e.session_id for e in exports]
    now = time.time()
    record = SessionRecord(
        id=new_id(),
        created_at=now,
        config=config,
        labels={
            "connected_from": ",".join(ids),
            "connect_sources": "; ".join(f"{e.session_id}: {e.source}" for e in exports),
        },
    )
    seed = (
        UserMessage(combine_exports(exports)),
        AssistantMessage(text=f"I have the context of sessions {', '.join(ids)}. What next?"),
    )
    writer = chosen.store
    try:
        # a create cancelled midway goes on in its thread and holds the session when done:
        # waited for, so that the release below finds what it holds
        await finished(asyncio.ensure_future(writer.create(record)))
        await writer.append(record.id, [ev.MessageAdded(at=now, message=m) for m in seed])
    finally:
        await finished(asyncio.ensure_future(writer.release(record.id)))
    return Connected(session_id=record.id, sources=exports)
