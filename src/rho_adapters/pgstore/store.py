"""PgSessionStore: the SessionStore port on PostgreSQL (see ``schema.py`` for the tables).

- The trace is ``rho_events``, one row per line in the trace codec (``encode_event_line``
  without its newline): the lines joined with newlines are byte for byte the trace.jsonl a
  file store writes. ``open`` reads them as one text (``string_agg``) and parses it as a file
  trace is parsed.
- One driver per session across hosts: ``create`` / ``open`` claim the row (``holder``) when
  nobody holds it or its holder stopped beating; otherwise ``SessionLocked`` names the holder.
  Every append checks the claim in the same transaction (``WHERE holder = me``): a process
  whose claim was taken over (it hung past the stale bound) fails instead of interleaving.
- ``meta`` is meta.json's summary, folded from the events as the file store folds it
  (``store.meta``), written with each append; ``trace <id>`` is notified in the same
  transaction (live tails wake when the lines are committed).
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Sequence
from typing import Any

from rho_adapters.codec import config_to_dict, encode_event_line
from rho_adapters.pgstore.backend import PgBackend
from rho_adapters.pgstore.listing import list_sessions, record_columns, record_of, resolve_id
from rho_adapters.pgstore.schema import ALIVE, CHANNEL, bounded_text, declare_here
from rho_adapters.store.files import DURABLE_KINDS
from rho_adapters.store.meta import fold_events, initial_meta, stored_config, summarize_trace
from rho_adapters.store.trace import parse_trace
from rho_domain import events as ev
from rho_domain.errors import SessionLocked, StoreError
from rho_domain.ports.signals import SignalSource
from rho_domain.ports.store import SessionInfo, SessionRecord, SessionStore, SignalingStore

__all__ = ["PgSessionStore", "list_sessions", "record_of", "resolve_id"]


class PgSessionStore(SessionStore, SignalingStore):
    """Sessions in PostgreSQL, shared by every host that has the URL."""

    def __init__(self, backend: PgBackend) -> None:
        self.backend = backend
        self._meta: dict[str, dict[str, Any]] = {}  # the summaries of the sessions held here
        self._seq: dict[str, int] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._beating: set[str] = set()  # the held sessions with a listener use (``start``)
        self._closed = False
        backend.acquire()  # the pool is this object's (and its siblings') until aclose

    def signals(self) -> SignalSource:
        """Cancel, pause and directives of these sessions, as PostgreSQL notifications."""
        from rho_adapters.pgstore.signals import PgSignals

        return PgSignals(self.backend)

    async def create(self, record: SessionRecord) -> None:
        """See ``SessionStore.create``."""
        meta = initial_meta(record)
        try:  # taken first: an open here meanwhile would take this holder's new claim back
            self.backend.held.take(record.id, "this process")
        except SessionLocked:
            raise StoreError(
                f"session {record.id} already exists in {self.backend.address.shown}"
            ) from None
        try:
            await self.backend.call(self._create, record, meta)
        except BaseException:
            self.backend.held.let_go(record.id)
            raise
        await self._hold(record.id, meta, 0)

    def _create(self, conn: Any, record: SessionRecord, meta: dict[str, Any]) -> None:
        config = stored_config(config_to_dict(record.config))
        declare_here(conn)
        inserted = conn.execute(
            "INSERT INTO rho_sessions (id, created_at, parent_id, config, labels, meta, holder,"
            " beat, lease, creator) VALUES (%s, %s, %s, %s, %s, %s, %s, now(), %s, %s)"
            " ON CONFLICT (id) DO NOTHING",
            (
                record.id,
                record.created_at,
                record.parent_id,
                json.dumps(config),
                json.dumps(dict(record.labels)),
                json.dumps(self._held_meta(meta)),
                self.backend.holder,
                self.backend.stale_after,
                self.backend.creator,
            ),
        ).rowcount
        if not inserted:
            raise StoreError(f"session {record.id} already exists in {self.backend.address.shown}")

    def _held_meta(self, meta: dict[str, Any]) -> dict[str, Any]:
        return {**meta, "holder": self.backend.holder}

    async def _hold(self, session_id: str, meta: dict[str, Any], seq: int) -> None:
        self._meta[session_id] = meta
        self._seq[session_id] = seq
        self._locks[session_id] = threading.Lock()
        if session_id not in self._beating:
            # heartbeats while it is held, one use per session (``release`` gives it back);
            # the first call connects: not on the loop. A failed start took no use.
            await self.backend.start_off_loop()
            self._beating.add(session_id)

    async def open(self, session_id: str) -> tuple[SessionRecord, tuple[ev.Event, ...]]:
        """See ``SessionStore.open``."""
        record, events, seq, meta = await self.backend.call(self._open, session_id)
        await self._hold(record.id, meta, seq)
        return record, events

    def _open(
        self, conn: Any, ref: str
    ) -> tuple[SessionRecord, tuple[ev.Event, ...], int, dict[str, Any]]:
        """The claim, the trace read and the meta written in one transaction: written after
        it, by a process frozen in between, the meta named this process the holder over the
        one that had taken the session over since."""
        session_id = resolve_id(conn, ref, self.backend.creator)
        me = self.backend.holder
        self.backend.held.take(session_id, me)  # a claim of mine not held here is taken back
        try:
            return self._claim(conn, session_id, me)
        except BaseException:
            self.backend.held.let_go(session_id)
            raise

    def _claim(
        self, conn: Any, session_id: str, me: str
    ) -> tuple[SessionRecord, tuple[ev.Event, ...], int, dict[str, Any]]:
        stale = self.backend.stale_after  # the claim's lease, and the bound this side keeps
        declare_here(conn)
        row = conn.execute(
            "UPDATE rho_sessions s SET holder = %s, beat = now(), lease = %s"  # noqa: S608
            " FROM (SELECT holder FROM rho_sessions WHERE id = %s FOR UPDATE) AS was"
            # ALIVE is a constant of ours, no one's input; a claim of this holder on a
            # session not held here (``held_here``) is this process's own, left by a
            # release that failed: taken back at once
            f" WHERE s.id = %s AND (s.holder IS NULL OR s.holder = %s OR s.beat IS NULL"
            f" OR NOT {ALIVE})"
            f" RETURNING {record_columns('s.')}, s.last_seq,"
            " was.holder",
            (me, stale, session_id, session_id, me, stale),
        ).fetchone()
        if row is None:
            holder = conn.execute(
                "SELECT holder FROM rho_sessions WHERE id = %s", (session_id,)
            ).fetchone()
            raise SessionLocked(
                f"session {session_id} is held by {holder[0] if holder else 'another process'};"
                f" wait for it to finish, or cancel it (rho-agent monitor cancel {session_id}"
                " --store with this store's URL)"
            )
        if row[7] is not None and row[7] != self.backend.holder:
            # taken over from a holder whose claim went stale, which may still be running
            # it: its waiting run reads that it lost the session and stops (``PgSignals``)
            conn.execute("SELECT pg_notify(%s, %s)", (CHANNEL, f"cancel {session_id}"))
        text = bounded_text(conn, session_id, self.backend.trace_bytes)
        data = (text + "\n").encode() if text else b""
        events = parse_trace(data, source=f"session {session_id} in the store").events
        record = record_of(row[:6])
        meta = initial_meta(record)
        summarize_trace(meta, events)
        if meta["status"] == "running":
            meta["status"] = "interrupted"  # the process that drove that run is gone
        conn.execute(
            "UPDATE rho_sessions SET meta = %s WHERE id = %s",
            (json.dumps(self._held_meta(meta), default=_plain), session_id),
        )
        return record, events, int(row[6]), meta

    async def append(self, session_id: str, events: Sequence[ev.Event]) -> None:
        """See ``SessionStore.append``. Committed (durable) when it returns."""
        meta = self._meta.get(session_id)
        if meta is None:
            raise StoreError(f"session {session_id} is not open in this store; create or open it")
        persistent = [e for e in events if ev.is_persistent(e)]
        if not persistent:
            return
        lines = [encode_event_line(e)[:-1].decode() for e in persistent]
        writing = asyncio.ensure_future(
            asyncio.to_thread(self._append_sync, session_id, persistent, lines)
        )
        try:
            await asyncio.shield(writing)
        except asyncio.CancelledError:
            # The statement goes on in its thread: once it commits, the lines are taken and the
            # cancellation goes on (the port's contract: never appended again); a statement
            # that failed took none of them, and its failure is raised instead.
            await asyncio.wait([writing])
            failure = None if writing.cancelled() else writing.exception()
            if failure is not None:
                raise failure from None
            raise

    def _append_sync(self, session_id: str, events: list[ev.Event], lines: list[str]) -> None:
        # one writer per session here: line numbers are given and committed in order
        with self._locks[session_id]:
            meta = self._meta[session_id]
            first = self._seq[session_id] + 1
            changed = fold_events(meta, events)
            durable = changed or any(e.kind in DURABLE_KINDS for e in events)
            payload = json.dumps(self._held_meta(meta), default=_plain)
            self.backend.run(
                self._insert, session_id, first, lines, payload, durable, transaction=False
            )
            self._seq[session_id] = first + len(lines) - 1

    def _insert(
        self, conn: Any, session_id: str, first: int, lines: list[str], meta: str, durable: bool
    ) -> None:
        # One statement, so one round trip and one commit: the claim is checked, the lines
        # inserted and live tails notified together, or nothing happens. As in the file store,
        # only run boundaries, status changes, compaction and approvals wait for the disk
        # (``synchronous_commit``); other lines are committed and visible at once, and a crash
        # of the database server may lose the last fraction of a second of them.
        last = first + len(lines) - 1
        claimed = conn.execute(
            "WITH claimed AS (UPDATE rho_sessions SET meta = %(meta)s, last_seq = %(last)s"
            " WHERE id = %(id)s AND holder = %(holder)s RETURNING id),"
            " added AS (INSERT INTO rho_events (session_id, seq, line)"
            " SELECT claimed.id, s, l FROM claimed,"
            " unnest(%(seqs)s::bigint[], %(lines)s::text[]) AS t(s, l))"
            " SELECT pg_notify(%(channel)s, 'trace ' || id),"
            " set_config('synchronous_commit', %(sync)s, true) FROM claimed",
            {
                "meta": meta,
                "last": last,
                "id": session_id,
                "holder": self.backend.holder,
                "seqs": list(range(first, last + 1)),
                "lines": lines,
                "channel": CHANNEL,
                "sync": "on" if durable else "off",
            },
        ).fetchall()
        if not claimed:
            holder = conn.execute(
                "SELECT holder FROM rho_sessions WHERE id = %s", (session_id,)
            ).fetchone()
            raise SessionLocked(
                f"session {session_id} is no longer held by this process (now: "
                f"{holder[0] if holder and holder[0] else 'nobody'}); its events were not written"
            )

    async def list(self, *, limit: int = 50) -> tuple[SessionInfo, ...]:
        """See ``SessionStore.list``."""
        return await list_sessions(self.backend, limit=limit)

    async def release(self, session_id: str) -> None:
        """See ``SessionStore.release``."""
        meta = self._meta.pop(session_id, None)
        self._seq.pop(session_id, None)
        self._locks.pop(session_id, None)
        if meta is not None:
            try:
                await self.backend.call(self._release, session_id, meta)
            finally:
                self._stop_beating(session_id)
                self.backend.held.let_go(session_id)  # no longer beaten; opened here again

    def _stop_beating(self, session_id: str) -> None:
        if session_id in self._beating:
            self._beating.discard(session_id)
            self.backend.stop()  # no more heartbeats for it: the last use ends the thread

    async def aclose(self) -> None:
        """Stop beating for the sessions still held here (their claims go stale, as a dead
        process's do; ``release`` them first to hand them over at once) and give back this
        object's share of the backend: when no store object of this URL is left open in the
        process, the listener thread ends and the pool's connections close. Idempotent; a
        closed store still works (each call then connects, and closes that connection)."""
        if self._closed:
            return
        self._closed = True
        for session_id in list(self._beating):
            self._stop_beating(session_id)
        for session_id in self._meta:
            self.backend.held.let_go(session_id)  # their claims go stale
        self._meta.clear()
        self._seq.clear()
        self._locks.clear()
        await asyncio.to_thread(self.backend.release)

    def _release(self, conn: Any, session_id: str, meta: dict[str, Any]) -> None:
        conn.execute(
            "UPDATE rho_sessions SET holder = NULL, beat = NULL, lease = NULL, meta = %s"
            " WHERE id = %s AND holder = %s",
            (json.dumps({**meta, "holder": None}, default=_plain), session_id, self.backend.holder),
        )
        conn.execute("SELECT pg_notify(%s, %s)", (CHANNEL, f"trace {session_id}"))


def _plain(value: Any) -> Any:
    import attrs

    if attrs.has(type(value)):
        return attrs.asdict(value)
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")
