"""SessionHost: the sessions a server drives, over the file store or a shared one.

Every read and signal goes through the store's ``SessionCatalog`` / ``SessionControl``,
whatever keeps the sessions: files in the config directory (the default), or PostgreSQL
shared by several servers (``--store postgresql://...``). The file store answers the
dashboard's polls from meta.json and reads of its traces from where the last read ended, so
the server reads no file itself. A session's trace feed, while it is used, is kept by
``SessionFeeds`` (``feeds``).

A session is held (its store lock taken) only while a run is in progress; between runs it is
an ordinary session that ``--resume``, ``monitor``, ``export`` and another server process see.
So an approval answered after a restart takes the same path as one answered a second after
the run stopped: open the session, resolve the pending call from its trace, run on. A durable
server queues its runs for every durable server's worker (``server.durable_runs``).

What a client may touch is checked by ``Admission``: an allowed profile and a working directory
in one of the roots, for new sessions and stored ones (a session the CLI started with an
unrestricted profile or elsewhere cannot be driven, nor read, over HTTP).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from rho_domain.config import AgentConfig
from rho_domain.errors import SessionNotFound
from rho_domain.ports.session_control import held_by_live_process, run_in_progress
from rho_domain.ports.store import SessionInfo, SessionRecord
from rho_domain.run import new_id
from rho_domain.state import State
from rho_entry.config.stores import StoreChoice, choose_store
from rho_entry.runtime.handle_values import settled
from rho_entry.server.admission import Admission
from rho_entry.server.answers import Answer, answer_here, answer_on_queue
from rho_entry.server.bodies import CreateSession, Decision
from rho_entry.server.durable_runs import DurableRuns, DurableSettings
from rho_entry.server.errors import Conflict, Invalid, NotFound
from rho_entry.server.lookup import Placements, find_shown
from rho_entry.server.runs import Runs
from rho_entry.server.session_feeds import SessionFeeds
from rho_entry.server.settings import ServerSettings
from rho_entry.server.tally import Tallies
from rho_entry.server.views import pending_approvals, summary_of
from rho_entry.server.whole_ids import WholeIds

log = logging.getLogger("rho_entry.server")


class SessionHost:
    """Creates, runs, answers, cancels and lists sessions for the HTTP routes.

    ``base_config`` holds what clients cannot choose (endpoint, key variable, provider, ...);
    ``session_ports`` are passed to every session (tests: ``model=``, ``clock=``).
    """

    def __init__(
        self,
        settings: ServerSettings,
        *,
        base_config: AgentConfig,
        config_dir: Path,
        session_ports: Mapping[str, Any] | None = None,
        store: StoreChoice | None = None,
        durable: DurableSettings | None = None,
    ) -> None:
        self.settings = settings
        if store is None:
            store = choose_store(settings.sessions_root, {}, origin="the server's sessions")
        self.chosen = store
        self.store = store.store
        self.sessions = WholeIds(store.sessions)  # a client's ids are exact, short ones too
        self.tallies = Tallies()
        self.placements = Placements()
        self.runs = Runs(
            attrs.evolve(base_config, working_dir=str(settings.roots[0])),
            self.store,
            max_runs=settings.max_runs,
            retry_after=settings.retry_after,
            approval_hold=settings.approval_hold,
            ports=session_ports or {},
            allowed_profiles=settings.profiles,
            allowed_roots=settings.roots,
        )
        endpoint = self.runs.runtime.resume_authority().endpoint
        self.admission = Admission(settings, base_config, config_dir, endpoint)
        self.durable: DurableRuns | None = None
        if durable is not None:
            self.durable = DurableRuns(
                durable,
                store=self.store,
                config=self.runs.runtime.agent.config,
                authority=self.runs.runtime.resume_authority(),
            )
        self.feeds = SessionFeeds(self.sessions, self.runs.handles, settings)

    async def start(self) -> None:
        """Start what runs beside the routes: a durable server's worker."""
        if self.durable is not None:
            await self.durable.start()

    # -- reading ------------------------------------------------------------------------------

    async def find(self, session_id: str) -> SessionInfo:
        """The listing line of a session this server may show (exact id, working directory
        within the roots). Raises ``NotFound`` (``UnreadableSession``: unreadable summary)."""
        return await find_shown(self.sessions, self.admission, session_id)

    async def list(self, *, limit: int = 100) -> list[Any]:
        """Sessions under the allowed roots, newest first, with their trace's counts (each
        trace's new lines only: ``Tallies``)."""
        active = {sid for sid in self.runs.handles if self.runs.active(sid)}
        now = time.time()
        infos = await self.sessions.sessions(limit=10_000)
        self.tallies.keep_only(i.id for i in infos)
        shown = (await self.placements.shown(self.sessions, self.admission, infos, now=now))[:limit]
        tallies = await self.tallies.caught_up(self.sessions, [i.id for i in shown])
        rows = []
        for info in shown:
            row = summary_of(info, running_here=info.id in active)
            rows.append({**row, **tallies[info.id].view(liveness=row["liveness"], now=now)})
        return rows

    async def detail(self, session_id: str) -> dict[str, Any]:
        """A session's summary plus its pending approvals and its last trace line number."""
        now = time.time()
        info = await self.find(session_id)
        view = summary_of(info, running_here=self.runs.active(session_id))
        tally = await self.tallies.of_catalog(self.sessions, session_id)
        view.update(tally.view(liveness=view["liveness"], now=now))
        state = await self._stored_state(session_id)
        feed = await self.feeds.feed(session_id)
        last_seq = feed.seq
        self.feeds.release(session_id)  # a look must not leave a feed behind
        return {**view, "pending_approvals": pending_approvals(state), "last_seq": last_seq}

    async def running(self, session_id: str) -> bool:
        """A run is in progress: in this server, or in another process (its liveness)."""
        feed = self.feeds.get(session_id)
        if self.runs.active(session_id) or (feed is not None and feed.busy):
            return True  # a run here, or its last events still being published
        try:
            return run_in_progress((await self.sessions.info(session_id)).liveness)
        except SessionNotFound:
            return False

    # -- acting -------------------------------------------------------------------------------

    async def create(self, request: CreateSession) -> str:
        """A new stored session; with a prompt (or a template), its first run starts."""
        config = self.admission.config_for(request)
        prompt = request.prompt
        if request.template is not None:
            if prompt is not None:
                raise Invalid("give a prompt or a template, not both", field="template")
            prompt = self.admission.render_template(request.template, request.vars)
        if prompt is not None:
            self.runs.check_capacity()
        from rho_entry.wiring import profile_of

        profile_of(config)  # a bad profile fails now, before anything is stored
        session_id = new_id()
        labels = {**request.labels, "origin": "server"}
        record = SessionRecord(id=session_id, created_at=time.time(), config=config, labels=labels)
        await self.store.create(record)
        await self.store.release(session_id)
        if prompt is not None:
            await self._start(session_id, prompt)
        return session_id

    async def chat(self, session_id: str, prompt: str) -> None:
        """Start a run with the next user message (pending approvals are superseded, as in
        the CLI). 409 while a run is in progress; a session being let go as it awaited
        approval is waited for (``answer_grace``, then 409 'closing')."""
        await self._check_drivable(session_id)
        await self._start(session_id, prompt)

    async def resume(self, session_id: str, prompt: str | None) -> None:
        """Continue a stored session: with a prompt, or (without) its pending work: calls
        waiting for approval, or a tool's result or a message the model has not answered (a
        run that failed before its next model call). Without a prompt on a conversation the
        model has answered or that has no message, with no directive queued since its last
        run (``handle_values.settled``, as a reopened handle judges it), 404 and nothing
        runs."""
        await self._check_drivable(session_id)
        idle = not self.runs.active(session_id)  # else 409 below: a run is in progress
        if (
            prompt is None
            and idle
            and await settled(await self._stored_state(session_id), self.chosen.signals, session_id)
        ):
            raise NotFound(
                f"session {session_id} has nothing pending to continue (no tool call awaits "
                "approval, no tool's result or message awaits the model's answer, and no "
                'directive is queued); send a prompt to continue it: {"prompt": "..."}'
            )
        await self._start(session_id, prompt)

    async def answer(
        self, session_id: str, call_id: str, decision: Decision, digest: str | None
    ) -> None:
        """Answer a pending approval; the run continues in this process, whichever process
        (or which server before a restart) asked for it. ``digest`` is the call's as the
        answerer was shown it (``detail``'s ``pending_approvals``; None only for a denial):
        the session that runs the call checks it against the call it holds, and a changed
        call is a 409 that answers nothing (``CallChanged``; the call still waits)."""
        await self._check_drivable(session_id)
        answer = Answer(call_id=call_id, decision=decision, digest=digest)
        if self.durable is not None:
            async with self.runs.turn(session_id):  # beside a start, not at the same moment
                await answer_on_queue(self.durable, self.sessions, session_id, answer)
            return
        await answer_here(self.runs, self.feeds, self.sessions, session_id, answer, self.settings)

    async def cancel(self, session_id: str) -> str:
        """Stop the session's run: ``cancelling`` (here), ``cancel requested`` (another
        process drives it, or a worker took its durable run: ``DurableRuns.cancel``) or
        ``cancelled`` (a durable run still queued, taken off the queue: it never runs). 409
        when nothing runs; 403 for a session this server may not drive. A run of this server
        is stopped unread (a config.yaml edited since it began made the stop a 409 or 403)."""
        if self.runs.cancel_here(session_id):  # 409 for one held here awaiting approval
            return "cancelling"
        await self._check_allowed(session_id)
        if await self.running(session_id):
            await self.sessions.request(session_id, "cancel")
            return "cancel requested"
        if self.durable is not None and (
            said := await self.durable.cancel(session_id, self.sessions)
        ):
            return said
        raise Conflict(f"session {session_id} has no run in progress")

    async def close(self, session_id: str) -> None:
        """Cancel a run in progress, wait for it to end, close the session's streams."""
        await self.find(session_id)
        await self.runs.stop(session_id, self.settings.shutdown_grace)
        self.feeds.close(session_id)

    async def aclose(self) -> None:
        """Shutdown: cancel every run and wait for them, so each session ends ``cancelled``
        on disk and ``--resume`` (or ``POST .../resume``) continues it; then close the store
        (``StoreChoice.aclose``)."""
        await self.runs.aclose(self.settings.shutdown_grace)
        if self.durable is not None:
            await self.durable.aclose()
        self.feeds.close_all()
        await self.chosen.aclose()  # a shared store's pool and listener end with the server

    # -- internals ----------------------------------------------------------------------------

    async def _stored_state(self, session_id: str) -> State:
        """The session as its trace has it (through the store's catalog)."""
        return State.from_events((await self.sessions.recording(session_id))[1])

    async def _start(self, session_id: str, prompt: str | None) -> None:
        async with self.runs.turn(session_id):  # after an answer in progress, not beside it
            if self.durable is None:
                await self._start_here(session_id, prompt)
                return
            if await self.running(session_id):
                raise Conflict(f"session {session_id} is running; wait for it or cancel it")
            await self.durable.enqueue(session_id, prompt)

    async def _start_here(self, session_id: str, prompt: str | None) -> None:
        handle = self.runs.handles.get(session_id)
        if handle is not None and handle.closing:  # let go (approval_hold, a cancel)
            # no run is in progress: this was a 409 'is running' that a retry got past
            await self.runs.closed(handle, self.settings.answer_grace)
        if handle is not None and not handle.done:
            if self.runs.active(session_id):
                raise Conflict(f"session {session_id} is running; wait for it or cancel it")
            await self.runs.stop(session_id, self.settings.shutdown_grace)  # awaiting approval
        self.runs.check_capacity()
        feed = await self.feeds.current(session_id)
        _ = await self.runs.dispatch(session_id, prompt, feed, done=self.feeds.done(session_id))

    async def _check_drivable(self, session_id: str) -> None:
        """The session exists here, what its config.yaml asks for is allowed (``Admission``:
        its name and meta.json are labels anyone writing the directory chooses), and no other
        process drives it."""
        info = await self._check_allowed(session_id)
        if held_by_live_process(info.liveness) and session_id not in self.runs.handles:
            raise Conflict(f"session {session_id} is driven by another process ({info.holder})")

    async def _check_allowed(self, session_id: str) -> SessionInfo:
        """The session exists here and what its config.yaml asks for is allowed
        (``Admission``: its name and meta.json are labels anyone writing the directory
        chooses); its listing."""
        info = await self.find(session_id)
        record = await self.sessions.record(session_id)  # StoredConfigInvalid: 409, stored data
        authority = self.runs.runtime.resume_authority()
        self.admission.drivable_config(session_id, record, authority)
        return info
