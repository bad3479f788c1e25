"""The PostgreSQL store's last write of a run, its ``run_end``, on a connection the server
terminated (``pg_terminate_backend``, as a database restart or an administrator does) just
before it: what the run says, what the trace keeps, and what the next resume finds.

The store is the real ``PgSessionStore``; the test's subclass only terminates every
connection of the store (by their ``application_name``) when the append that carries the
``run_end`` comes, then appends as the store does.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Sequence
from typing import Any

import pytest
from pg_rig import named, pg_server_url, schema_url

from rho_adapters.fakes import ScriptedModel, text
from rho_adapters.pgstore import PgBackend, StoreAddress, of_backend
from rho_adapters.pgstore.store import PgSessionStore
from rho_domain import events as ev
from rho_domain.config import AgentConfig
from rho_domain.errors import SessionLocked, StoreError
from rho_entry.facade import Agent, Session

__all__ = ["pg_server_url"]


class EndCut(PgSessionStore):
    """``PgSessionStore`` whose connections are terminated as the ``run_end`` is appended."""

    def __init__(
        self, backend: PgBackend, server_url: str, name: str, *, lock_out: str | None = None
    ) -> None:
        super().__init__(backend)
        self.server_url = server_url
        self.name = name
        self.lock_out = lock_out  # a role that may no longer log in from the cut on
        self.cuts = 0

    async def append(self, session_id: str, events: Sequence[ev.Event]) -> None:
        if any(isinstance(e, ev.RunEnded) for e in events) and not self.cuts:
            import psycopg

            with psycopg.connect(self.server_url, autocommit=True) as conn:
                if self.lock_out is not None:
                    conn.execute(f"ALTER ROLE {self.lock_out} NOLOGIN")
                gone = conn.execute(
                    "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                    "WHERE application_name = %s",
                    (self.name,),
                ).fetchone()
            assert gone is not None
            assert gone[0] >= 1  # the store's pooled connection
            self.cuts += 1
        await super().append(session_id, events)


async def test_a_run_end_written_on_a_terminated_connection(pg_server_url: str) -> None:
    name = "end-write"
    url = named(schema_url(pg_server_url), name)
    backend = PgBackend(StoreAddress(url, "the test"))
    store = EndCut(backend, pg_server_url, name)
    agent = Agent(AgentConfig(model="scripted"))
    session = Session(agent, model=ScriptedModel([text("done")]), store=store)
    try:
        result = await session.run("go")
    finally:
        await session.close()
    assert store.cuts == 1
    reader = of_backend(PgBackend(StoreAddress(url, "the reader")))
    try:
        _, events = await reader.sessions.recording(session.id)
    finally:
        await reader.aclose()
        await store.aclose()
    kinds = [e.kind for e in events]
    assert result.status.value == "completed", result
    assert kinds[-1] == "run_end", kinds
    assert [e.kind for e in events].count("run_end") == 1
    assert any(
        isinstance(e, ev.MessageAdded) and getattr(e.message, "text", None) == "done"
        for e in events
    )


async def test_a_run_end_the_database_refuses_for_good_is_named_and_the_session_goes_on(
    pg_server_url: str,
) -> None:
    """The store's role may no longer log in from the cut on (the database gone for this
    store): the run's result says its end was not stored and stays queued; the close, the
    last try, raises naming the session, what was not stored, the store and the database's
    reason, and what to do; the trace keeps everything before; once the database answers
    again and the dead claim is stale, the session is resumed and runs on."""
    import psycopg

    name = "end-gone"
    role, url, _ = _own_role(pg_server_url, "rho_end", name)
    store = EndCut(_leased(url, "the test"), pg_server_url, name, lock_out=role)
    session = Session(
        Agent(AgentConfig(model="scripted")), model=ScriptedModel([text("done")]), store=store
    )
    result = await session.run("go")
    with pytest.raises(StoreError) as closing:
        await session.close()
    await store.aclose()
    with psycopg.connect(pg_server_url, autocommit=True) as conn:
        conn.execute(f"ALTER ROLE {role} LOGIN")
    assert result.status.value == "completed"
    assert result.error is not None
    assert "its run_end was not stored" in result.error
    said = str(closing.value)
    assert said.startswith(f"session {session.id} closed with 1 event(s) not stored (run_end): ")
    assert f"{role}@127.0.0.1" in said  # the store, as its URL names it
    assert f'role "{role}" is not permitted to log in' in said  # the database's reason
    assert "once the store answers again, resume the session" in said
    again = of_backend(_leased(url, "the resumer"))
    try:
        resumed = await _resumed(again, session.id)
        assert (await resumed.run("go on")).status.value == "completed"
        await resumed.close()
        _, events = await again.sessions.recording(session.id)
    finally:
        await again.aclose()
    said_by_model = [
        e.message.text
        for e in events
        if isinstance(e, ev.MessageAdded) and e.message.role == "assistant"
    ]
    assert said_by_model == ["done", "again"]  # nothing of the first run was lost
    # the first run, left open by the close that could not store its end, is ended by the
    # resume before its own run starts (the session object that kept its end is gone)
    ends = [e for e in events if isinstance(e, ev.RunEnded)]
    assert [(e.run_id, e.status.value) for e in ends[:1]] == [(result.run_id, "error")]
    assert ends[0].error is not None
    assert ends[0].error.startswith("ended unrecorded: ")
    assert events[events.index(ends[0]) + 1].kind == "run_start"
    assert len(ends) == 2


def _own_role(pg_server_url: str, prefix: str, name: str) -> tuple[str, str, str]:
    """A new login role (``prefix`` and a random tail) that may use and create in the test's
    schema, the store URL of session ``name`` logging in as it (what ``EndCut`` locks out),
    and the schema."""
    import psycopg

    base = schema_url(pg_server_url)
    schema = base.rsplit("search_path%3D", 1)[1]
    role = f"{prefix}_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(pg_server_url, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN")
        conn.execute(f"GRANT USAGE, CREATE ON SCHEMA {schema} TO {role}")
    return role, named(base.replace("postgres@", f"{role}@", 1), name), schema


def _leased(url: str, who: str) -> PgBackend:
    """A backend whose claims go stale half a second after its beats stop."""
    return PgBackend(StoreAddress(url, who), heartbeat=0.1, stale_after=0.5)


async def _resumed(again: Any, session_id: str) -> Session:
    """The session resumed once the dead holder's claim is stale (its lease: 0.5 s)."""
    deadline = time.monotonic() + 30
    while True:
        try:
            return await Session.resume(
                session_id, store=again.store, model=ScriptedModel([text("again")])
            )
        except SessionLocked:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.1)  # the lease runs out on the server's clock


async def test_a_run_end_kept_by_a_close_is_stored_by_the_next_once_logins_are_allowed(
    pg_server_url: str,
) -> None:
    """The close that could not store the ``run_end`` keeps it: once the store's role may
    log in again, closing the session again takes its lock back and stores it (it was lost
    with the session object: the trace never had its run's end). A session another process
    wrote since is refused, naming what is dropped (``test_unstored.py``). The claim the
    failed close left is this process's own: taken back at once, whatever its lease."""
    import psycopg

    name = "end-kept"
    role, url, _ = _own_role(pg_server_url, "rho_kept", name)
    # a lease far longer than the test: the claim the failed close left is this process's
    # own, taken back at once (it was refused, SessionLocked, until the lease ran out)
    long = PgBackend(StoreAddress(url, "the test"), heartbeat=0.1, stale_after=600)
    store = EndCut(long, pg_server_url, name, lock_out=role)
    session = Session(
        Agent(AgentConfig(model="scripted")), model=ScriptedModel([text("done")]), store=store
    )
    try:
        result = await session.run("go")
        with pytest.raises(StoreError) as closing:
            await session.close()
        assert "or close it again first, which stores them" in str(closing.value)
        with psycopg.connect(pg_server_url, autocommit=True) as conn:
            conn.execute(f"ALTER ROLE {role} LOGIN")
        await session.close()  # the lock taken back, the run_end stored
        reader = of_backend(_leased(url, "the reader"))
        try:
            _, events = await reader.sessions.recording(session.id)
        finally:
            await reader.aclose()
    finally:
        await store.aclose()
    assert result.status.value == "completed"
    ends = [e for e in events if isinstance(e, ev.RunEnded)]
    assert [(e.run_id, e.status.value) for e in ends] == [(result.run_id, "completed")]
    assert events[-1] is ends[0]


async def test_a_claim_a_failed_close_left_is_not_kept_alive_by_the_other_sessions_beats(
    pg_server_url: str,
) -> None:
    """The heartbeat renewed every row naming this process: a session whose release failed
    (logins refused at its close) was kept alive by the beats of the process's other held
    sessions, for as long as it held any (a server always does), so no other host could
    take it, and this process refused it too. Now only the sessions held here are beaten:
    its beat stands still while another session's goes on, and this process opens it again
    at once."""
    import psycopg

    name = "end-beats"
    role, url, schema = _own_role(pg_server_url, "rho_beats", name)
    long = PgBackend(StoreAddress(url, "the test"), heartbeat=0.05, stale_after=600)
    store = EndCut(long, pg_server_url, name, lock_out=role)
    agent = Agent(AgentConfig(model="scripted"))
    left = Session(agent, model=ScriptedModel([text("done")]), store=store)
    await left.run("go")
    with pytest.raises(StoreError):
        await left.close()
    with psycopg.connect(pg_server_url, autocommit=True) as conn:
        conn.execute(f"ALTER ROLE {role} LOGIN")
    held = Session(agent, model=ScriptedModel([text("held")]), store=store)
    try:
        await held.run("go")  # held, and beaten, until closed

        def beats() -> tuple[object, object]:
            with psycopg.connect(pg_server_url, autocommit=True) as conn:
                rows: dict[str, object] = dict(
                    conn.execute(
                        f"SELECT id, beat FROM {schema}.rho_sessions WHERE id IN (%s, %s)",
                        (left.id, held.id),
                    ).fetchall()
                )
            return rows[left.id], rows[held.id]

        before_left, before_held = beats()
        for _ in range(600):  # until the held session was beaten twice since
            now_left, now_held = beats()
            if now_held != before_held:
                before_held = now_held
                break
            await asyncio.sleep(0.05)
        for _ in range(600):
            now_left, now_held = beats()
            if now_held != before_held:
                break
            await asyncio.sleep(0.05)
        assert now_held != before_held  # the heartbeat runs
        assert now_left == before_left  # and does not renew the claim left behind
        again = await Session.resume(left.id, store=store, model=ScriptedModel([text("on")]))
        assert (await again.run("go on")).status.value == "completed"
        await again.close()
    finally:
        await held.close()
        await store.aclose()
