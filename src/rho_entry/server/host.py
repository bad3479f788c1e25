"""SessionHost: the sessions a server drives, over the ordinary file store or a shared one.

With the file store (the default) the host reads session directories directly: listings from
meta.json, counts and streams from trace.jsonl by byte offset. With another store (``--store
postgresql://...``: several servers share one set of sessions) every read and signal goes
through the store's ``SessionCatalog`` / ``SessionControl``; each method's second branch.

A session is held (its store lock taken) only while a run is in progress; between runs it is
an ordinary session on disk that ``rho-agent --resume``, ``monitor`` and ``export`` see, and
that another server process (after a restart) picks up the same way. So an approval answered
after a restart takes the same path as one answered a second after the run stopped: open the
session, resolve the pending call from its trace, run on. A durable server (``durable``) puts
its runs on a queue instead, which its own worker and every other durable server's consume
(``rho_entry.server.durable_runs``).

What a client may touch is checked here: the profile is one the server allows and the working
directory lies in one of its roots, for new sessions and for stored ones (a session the CLI
started with an unrestricted profile or elsewhere cannot be driven, nor read, over HTTP). A
stored session's profile is judged by what its config.yaml grants, never by its name
(``rho_entry.resume_policy``), and the runtime checks it again when it opens the session.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import attrs

from rho_adapters.store.layout import SessionPaths, liveness, read_meta
from rho_adapters.store.trace import state_from_jsonl
from rho_domain.config import AgentConfig
from rho_domain.errors import ConfigError, SessionNotFound
from rho_domain.ports.session_control import held_by_live_process, run_in_progress
from rho_domain.ports.store import SessionInfo, SessionRecord
from rho_domain.run import new_id
from rho_domain.state import State
from rho_entry.config.stores import StoreChoice, choose_store
from rho_entry.resume_policy import authorise
from rho_entry.server.bodies import CreateSession, Decision
from rho_entry.server.durable_runs import DurableRuns, DurableSettings
from rho_entry.server.errors import Conflict, Forbidden, Invalid, NotFound
from rho_entry.server.feed import StoreFeed, TraceFeed
from rho_entry.server.runs import Runs
from rho_entry.server.settings import ServerSettings
from rho_entry.server.tally import Tallies
from rho_entry.server.views import (
    listing,
    pending_approvals,
    session_paths,
    summary,
    summary_of,
    valid_id,
)

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
        self.sessions = store.sessions
        self._files = store.root is not None
        self._base = base_config
        self._home = config_dir
        self._feeds: dict[str, TraceFeed] = {}
        self.tallies = Tallies()
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
        self.durable: DurableRuns | None = None
        if durable is not None:
            self.durable = DurableRuns(
                durable,
                store=self.store,
                config=self.runs.runtime.agent.config,
                authority=self.runs.runtime.resume_authority(),
            )

    async def start(self) -> None:
        """Start what runs beside the routes: a durable server's worker."""
        if self.durable is not None:
            await self.durable.start()

    # -- reading ------------------------------------------------------------------------------

    async def find(self, session_id: str) -> SessionInfo | None:
        """Check that this server may show the session (exact id, working directory within
        the roots); its listing line from a store that is not files. Raises ``NotFound``."""
        if self._files:
            self.paths(session_id)
            return None
        try:
            info = await self.sessions.info(session_id) if valid_id(session_id) else None
        except SessionNotFound:
            info = None
        if info is None or info.id != session_id or not self._visible(info.working_dir):
            raise NotFound(f"no session {session_id!r}; GET /api/sessions lists them")
        return info

    def paths(self, session_id: str) -> SessionPaths:
        """A session this server may show: exact id, working directory within the roots."""
        paths = session_paths(self.settings.sessions_root, session_id)
        if not self._visible(read_meta(paths).get("working_dir")):
            raise NotFound(f"no session {session_id!r}; GET /api/sessions lists them")
        return paths

    def _listed(self, active: dict[str, bool], limit: int) -> list[Any]:
        now = time.time()
        rows = listing(self.settings.sessions_root, active, now=now, limit=10_000)
        self.tallies.keep_only(r["id"] for r in rows)
        shown = [r for r in rows if self._visible(r["working_dir"])][:limit]
        return [{**r, **self._counts(r, now)} for r in shown]

    async def list(self, *, limit: int = 100) -> list[Any]:
        """Sessions under the allowed roots, newest first, with their trace's counts. The
        files are read in a thread: a first list of a large store reads every trace once,
        and the event loop (streams, other requests) must not wait for it."""
        active = {sid: True for sid in self.runs.handles if self.runs.active(sid)}
        if self._files:
            return await asyncio.to_thread(self._listed, active, limit)
        now = time.time()
        infos = await self.sessions.sessions(limit=10_000)
        self.tallies.keep_only(i.id for i in infos)
        shown = [i for i in infos if self._visible(i.working_dir)][:limit]
        rows = []
        for info in shown:
            row = summary_of(info, running_here=info.id in active)
            tally = await self.tallies.of_catalog(self.sessions, info.id)
            rows.append({**row, **tally.view(liveness=row["liveness"], now=now)})
        return rows

    def _counts(self, row: dict[str, Any], now: float) -> dict[str, Any]:
        paths = SessionPaths(self.settings.sessions_root / row["id"])
        return self.tallies.of(paths).view(liveness=row["liveness"], now=now)

    async def detail(self, session_id: str) -> dict[str, Any]:
        """A session's summary plus its pending approvals and its last trace line number."""
        now = time.time()
        info = await self.find(session_id)
        if info is None:
            paths = self.paths(session_id)
            view = summary(paths, running_here=self.runs.active(session_id), now=now)
            view.update(await asyncio.to_thread(self._counts, view, now))
            state = await asyncio.to_thread(state_from_jsonl, paths.trace)
        else:
            view = summary_of(info, running_here=self.runs.active(session_id))
            tally = await self.tallies.of_catalog(self.sessions, session_id)
            view.update(tally.view(liveness=view["liveness"], now=now))
            state = State.from_events((await self.sessions.recording(session_id))[1])
        feed = await self.feed(session_id)
        last_seq = feed.seq
        self.release_feed(session_id)  # a look must not leave a feed behind
        return {**view, "pending_approvals": pending_approvals(state), "last_seq": last_seq}

    async def running(self, session_id: str) -> bool:
        """A run is in progress: in this server, or in another process (its liveness)."""
        if self.runs.active(session_id):
            return True
        if not self._files:
            try:
                return run_in_progress((await self.sessions.info(session_id)).liveness)
            except SessionNotFound:
                return False
        paths = SessionPaths(self.settings.sessions_root / session_id)
        meta = read_meta(paths)
        return run_in_progress(liveness(meta, paused=paths.pause.exists(), now=time.time()))

    async def feed(self, session_id: str) -> TraceFeed:
        """The session's feed (one per session, created on first use)."""
        feed = self._feeds.get(session_id)
        if feed is None:
            buffer = self.settings.event_buffer
            if self._files:
                paths = SessionPaths(self.settings.sessions_root / session_id)
                started = await TraceFeed(paths.trace, buffer=buffer).start()
            else:
                started = await StoreFeed(self.sessions, session_id, buffer=buffer).start()
            feed = self._feeds.setdefault(session_id, started)  # first one wins a race
        return feed

    def release_feed(self, session_id: str) -> None:
        """Forget a feed nobody uses (no subscriber, no run): memory stays bounded."""
        feed = self._feeds.get(session_id)
        if feed is not None and not feed.subscribers and session_id not in self.runs.handles:
            del self._feeds[session_id]

    # -- acting -------------------------------------------------------------------------------

    async def create(self, request: CreateSession) -> str:
        """A new stored session; with a prompt (or a template), its first run starts."""
        config = self._config_for(request)
        prompt = request.prompt
        if request.template is not None:
            if prompt is not None:
                raise Invalid("give a prompt or a template, not both", field="template")
            prompt = self._render_template(request.template, request.vars)
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
        the CLI). 409 while a run is in progress."""
        await self._check_drivable(session_id)
        await self._start(session_id, prompt)

    async def resume(self, session_id: str, prompt: str | None) -> None:
        """Continue a stored session: with a prompt, or (without) its pending work. Without
        a prompt and with no call waiting for approval, 404 and nothing runs (no model call)."""
        await self._check_drivable(session_id)
        idle = not self.runs.active(session_id)  # else 409 below: a run is in progress
        if prompt is None and idle and not (await self._stored_state(session_id)).pending_calls:
            raise NotFound(
                f"session {session_id} has nothing pending to continue (no tool call awaits "
                'approval); send a prompt to continue it: {"prompt": "..."}'
            )
        await self._start(session_id, prompt)

    async def answer(self, session_id: str, call_id: str, decision: Decision) -> None:
        """Answer a pending approval; the run continues in this process, whichever process
        (or which server before a restart) asked for it."""
        await self._check_drivable(session_id)
        if self.durable is not None:
            await self._answer_durable(session_id, call_id, decision)
            return
        handle = self.runs.handles.get(session_id)
        if handle is not None:
            await self.runs.settle(handle, self.settings.answer_grace)
        if handle is None or handle.done:
            # asked before anything runs: a run dispatched to find out would call the model
            state = await self._stored_state(session_id)
            stored = [p["call_id"] for p in pending_approvals(state)]
            if call_id not in stored:
                raise NotFound(_not_waiting(call_id, stored))
            self.runs.check_capacity()
            handle = await self.runs.dispatch(
                session_id, None, await self._current_feed(session_id), done=self._done(session_id)
            )
            await self.runs.settle(handle, self.settings.answer_grace)
        waiting = [p.call.id for p in handle.pending_approvals]
        if call_id not in waiting:
            raise NotFound(_not_waiting(call_id, waiting))
        handle.approve(call_id, decision != "deny", always=decision == "always")

    async def cancel(self, session_id: str) -> str:
        """Stop the session's run: ``cancelling`` (here) or ``cancel requested`` (another
        process drives it; it stops at its next checkpoint). 409 when nothing runs."""
        await self.find(session_id)
        handle = self.runs.handles.get(session_id)
        if handle is not None and not handle.done:
            handle.cancel()
            return "cancelling"
        if await self.running(session_id):
            await self.sessions.request(session_id, "cancel")
            return "cancel requested"
        raise Conflict(f"session {session_id} has no run in progress")

    async def close(self, session_id: str) -> None:
        """Cancel a run in progress, wait for it to end, close the session's streams."""
        await self.find(session_id)
        await self.runs.stop(session_id, self.settings.shutdown_grace)
        feed = self._feeds.pop(session_id, None)
        if feed is not None:
            feed.close()

    async def aclose(self) -> None:
        """Shutdown: cancel every run and wait for them, so each session ends ``cancelled``
        on disk and ``--resume`` (or ``POST .../resume``) continues it."""
        await self.runs.aclose(self.settings.shutdown_grace)
        if self.durable is not None:
            await self.durable.aclose()
        for feed in self._feeds.values():
            feed.close()
        self._feeds.clear()

    # -- internals ----------------------------------------------------------------------------

    async def _stored_state(self, session_id: str) -> State:
        """The session as its trace has it (the file store: read in a thread; another store:
        through its catalog)."""
        if not self._files:
            return State.from_events((await self.sessions.recording(session_id))[1])
        return await asyncio.to_thread(state_from_jsonl, self.paths(session_id).trace)

    async def _start(self, session_id: str, prompt: str | None) -> None:
        if self.durable is not None:  # a worker (this server's or another's) runs it
            if await self.running(session_id):
                raise Conflict(f"session {session_id} is running; wait for it or cancel it")
            await self.durable.enqueue(session_id, prompt)
            return
        handle = self.runs.handles.get(session_id)
        if handle is not None and not handle.done:
            if self.runs.active(session_id):
                raise Conflict(f"session {session_id} is running; wait for it or cancel it")
            await self.runs.stop(session_id, self.settings.shutdown_grace)  # awaiting approval
        self.runs.check_capacity()
        feed = await self._current_feed(session_id)
        _ = await self.runs.dispatch(session_id, prompt, feed, done=self._done(session_id))

    async def _answer_durable(self, session_id: str, call_id: str, decision: Decision) -> None:
        """``answer`` on a durable server: the session's last run continues on the queue."""
        assert self.durable is not None
        _, events = await self.sessions.recording(session_id)
        stored = [p["call_id"] for p in pending_approvals(State.from_events(events))]
        if call_id not in stored:
            raise NotFound(_not_waiting(call_id, stored))
        await self.durable.answer(session_id, tuple(events), call_id, decision != "deny")

    async def _current_feed(self, session_id: str) -> TraceFeed:
        """The feed, caught up with the store before a run here: a ``StoreFeed`` numbers the
        lines this server writes from the last one it saw, so lines another server wrote
        since must be seen first (once the run holds the session, nobody else writes)."""
        feed = await self.feed(session_id)
        if not self._files:
            await feed.refresh()
        return feed

    def _done(self, session_id: str) -> Callable[[], None]:
        def done() -> None:
            feed = self._feeds.get(session_id)
            if feed is not None:
                feed.wake()
            self.release_feed(session_id)

        return done

    async def _check_drivable(self, session_id: str) -> None:
        """The session exists here, what its config.yaml asks for is allowed (a profile within
        an allowed one by content, the server's endpoint, a working directory in the roots:
        its name and meta.json are labels anyone writing the directory chooses), and no other
        process drives it."""
        info = await self.find(session_id)
        try:
            record = await self.sessions.record(session_id)
            # the working directory is checked below, to name that field in the 403
            authority = attrs.evolve(self.runs.runtime.resume_authority(), roots=None)
            config = authorise(record, authority, config_dir=self._home).config
        except ConfigError as exc:
            raise Forbidden(str(exc), field="profile") from None
        if not self._visible(config.working_dir):
            raise Forbidden(
                f"session {session_id} runs in {config.working_dir!r}, outside the server's roots",
                field="working_dir",
            )
        gone = config.working_dir is not None and not os.path.isdir(config.working_dir)  # noqa: ASYNC240 (one stat)
        if gone:  # else the run would fail after the 202, with nothing to show for it
            raise Conflict(
                f"session {session_id} cannot run: its working directory "
                f"{config.working_dir!r} does not exist (removed or moved); recreate it, "
                f"or start a new session"
            )
        if info is None:
            paths = self.paths(session_id)
            meta = read_meta(paths)
            pid = meta.get("pid")
            live = liveness(meta, paused=paths.pause.exists(), now=time.time())
            if pid is not None and pid != os.getpid() and held_by_live_process(live):
                raise Conflict(f"session {session_id} is driven by another process (pid {pid})")
        elif held_by_live_process(info.liveness) and session_id not in self.runs.handles:
            raise Conflict(f"session {session_id} is driven by another process ({info.holder})")

    def _config_for(self, request: CreateSession) -> AgentConfig:
        profile = request.profile or self.settings.profiles[0]
        if profile not in self.settings.profiles:
            allowed = ", ".join(self.settings.profiles)
            raise Forbidden(
                f"profile {profile!r} is not allowed here (allowed: {allowed})", field="profile"
            )
        changes: dict[str, Any] = {
            "profile": profile,
            "working_dir": self._working_dir(request.working_dir),
        }
        if request.model is not None:
            changes["model"] = request.model
        if request.max_turns is not None:
            changes["max_turns"] = request.max_turns
        if request.output_schema is not None:
            changes["output_schema"] = request.output_schema
        return attrs.evolve(self._base, **changes)

    def _working_dir(self, given: str | None) -> str:
        roots = self.settings.roots
        path = roots[0] if given is None else roots[0] / Path(given).expanduser()
        resolved = path.resolve()  # symlinks followed: a link out of a root is outside it
        if not self._inside_roots(resolved):
            shown = ", ".join(str(r) for r in roots)
            raise Forbidden(
                f"working_dir {given!r} is outside the server's roots ({shown})",
                field="working_dir",
            )
        if not resolved.is_dir():
            raise Invalid(f"working_dir {given!r} is not a directory", field="working_dir")
        return str(resolved)

    def _inside_roots(self, path: Path) -> bool:
        return any(path == root or root in path.parents for root in self.settings.roots)

    def _visible(self, working_dir: object) -> bool:
        # A relative directory (a library session's ".") names a place only in the process
        # that stored it: resolved here it would be judged against this server's cwd.
        if not isinstance(working_dir, str) or not Path(working_dir).is_absolute():
            return False
        return self._inside_roots(Path(working_dir).resolve())

    def _render_template(self, name: str, values: Mapping[str, str]) -> str:
        from rho_entry.config.templates import load_template, render_template

        prompts = self._home / "prompts"
        for candidate in (prompts / name, prompts / f"{name}.md"):
            if candidate.is_file():
                try:
                    return render_template(load_template(candidate), values).system_prompt.strip()
                except ConfigError as exc:
                    raise Invalid(str(exc), field="vars") from None
        raise Invalid(f"no template {name!r} in {prompts}", field="template")


def _not_waiting(call_id: str, waiting: list[str]) -> str:
    known = ", ".join(waiting) or "none"
    return f"no tool call {call_id!r} awaits approval (pending: {known})"
