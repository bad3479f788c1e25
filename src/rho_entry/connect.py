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

from rho_domain import events as ev
from rho_domain.config import AgentConfig
from rho_domain.context_export import ContextExport, combine_exports, export_context
from rho_domain.errors import ConfigError
from rho_domain.messages import AssistantMessage, UserMessage
from rho_domain.ports.session_control import SessionOperator, run_in_progress
from rho_domain.ports.store import SessionRecord
from rho_domain.run import new_id
from rho_domain.state import State
from rho_entry.stores import StoreChoice, choose_store

WAIT_SECONDS = 30.0
POLL_SECONDS = 0.1


@attrs.frozen(kw_only=True)
class Connected:
    """The coordinating session (stored, not run yet) and the exports it was built from."""

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
        request_id = await sessions.request_export(session_id)
        deadline = time.monotonic() + wait
        source = f"trace: it was {state} but did not answer within {wait:g} s"
        while time.monotonic() < deadline:
            # read after the liveness: a run that ends answers what was asked of it first
            now = (await sessions.info(session_id)).liveness
            if (text := await sessions.export_answer(session_id, request_id)) is not None:
                return ContextExport(session_id=session_id, source="running", text=text)
            if not run_in_progress(now):  # it finished while asked: its trace is complete
                source = f"trace: it finished ({now}) while asked"
                break
            await asyncio.sleep(poll)
        await sessions.withdraw_export(session_id, request_id)  # nobody waits for it now
    else:
        source = "trace"
    _, events = await sessions.recording(session_id)
    text = export_context(session_id, State.from_events(events))
    return ContextExport(session_id=session_id, source=source, text=text)


async def connect(
    refs: Sequence[str],
    *,
    root: Path | None = None,
    wait: float = WAIT_SECONDS,
    config: AgentConfig | None = None,
    store: StoreChoice | None = None,
) -> Connected:
    """Export the sessions ``refs`` (ids, prefixes, ``latest``, directories) of ``store`` (or
    of the file store under ``root``) concurrently, and store a coordinating session holding
    them all.

    Raises SessionNotFound for an unknown reference, ConfigError without any.
    """
    if not refs:
        raise ConfigError("connect needs at least one session id")
    chosen = store if store is not None else choose_store(root, {}, origin="root=")
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
    await writer.create(record)
    try:
        await writer.append(record.id, [ev.MessageAdded(at=now, message=m) for m in seed])
    finally:
        await writer.release(record.id)
    return Connected(session_id=record.id, sources=exports)
