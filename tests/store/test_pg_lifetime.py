"""The PostgreSQL store's listener thread and pool have an owner and an end.

On the real server of ``pg_rig``: the listener runs while a session is held or a cancel wait
is under way, and no longer (so a database that goes away afterwards brings no endless
"retrying" lines); closing the last store object of a URL leaves the server no connection
from this process (``pg_stat_activity``, counted by an ``application_name`` of the test's
own); a store used again afterwards connects and listens again.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import time
import uuid
from pathlib import Path

import pytest
from pg_rig import connections, named, pg_server_url, schema_url

from rho_adapters.fakes import ScriptedModel, text
from rho_adapters.pgstore import PgBackend, StoreAddress, of_backend, postgres_store
from rho_adapters.pgstore.connection import Pool
from rho_domain.config import AgentConfig
from rho_domain.ports.store import SessionRecord
from rho_entry import AgentConfig as EntryConfig
from rho_entry.facade import Agent, Session
from rho_entry.stored import SessionStore

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))
from cli_support import rho as rho_here

__all__ = ["pg_server_url"]


def record(session_id: str) -> SessionRecord:
    return SessionRecord(id=session_id, created_at=1000.0, config=AgentConfig(model="m1"))


async def settles(check: object, within: float = 5.0) -> bool:
    """True once ``check()`` is true (the server drops a closed connection's row shortly).
    It waits as the program around a store does, with its loop running: a listener use that a
    cancelled wait took while it started is given back by a callback on the loop (backend.py,
    ``start_off_loop``), which a loop held in ``time.sleep`` would never run."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if check():  # type: ignore[operator]
            return True
        await asyncio.sleep(0.05)
    return bool(check())  # type: ignore[operator]


async def test_the_last_close_ends_the_listener_and_every_connection(
    pg_server_url: str,
) -> None:
    name = f"rho-life-{uuid.uuid4().hex[:8]}"
    backend = PgBackend(StoreAddress(named(schema_url(pg_server_url), name), "the test"))
    one, two = of_backend(backend), of_backend(backend)
    await one.store.create(record("s1"))
    await two.store.create(record("s2"))
    assert backend.listening
    assert connections(pg_server_url, name) >= 2  # the pool's and the LISTEN connection
    await one.aclose()  # s1 stops beating; s2 is still held by ``two``, which beats for it
    assert backend.listening
    assert connections(pg_server_url, name) >= 2
    await two.store.release("s2")
    await two.aclose()  # the last store object of the backend
    assert not backend.listening
    assert await settles(lambda: connections(pg_server_url, name) == 0)

    again = of_backend(backend)  # used again: connects and listens again
    await again.store.create(record("s3"))
    assert backend.listening
    assert len(await again.sessions.sessions()) == 3
    assert connections(pg_server_url, name) >= 2
    await again.store.release("s3")
    await again.aclose()
    assert not backend.listening
    assert await settles(lambda: connections(pg_server_url, name) == 0)


async def test_the_listener_runs_only_while_a_session_is_held_or_a_wait_is_on(
    pg_server_url: str,
) -> None:
    backend = PgBackend(StoreAddress(schema_url(pg_server_url), "the test"), heartbeat=0.2)
    pg = of_backend(backend)
    try:
        assert len(await pg.sessions.sessions()) == 0  # a listing needs no listener
        assert not backend.listening
        await pg.store.create(record("held"))
        assert backend.listening
        await pg.store.release("held")
        assert await settles(lambda: not backend.listening, 2.0)

        waiting = asyncio.create_task(pg.signals.wait_for_cancel("held"))
        await asyncio.sleep(0.3)
        assert backend.listening
        assert await pg.sessions.request("held", "cancel")
        await asyncio.wait_for(waiting, 2)
        assert await settles(lambda: not backend.listening, 2.0)
    finally:
        await pg.aclose()


async def test_the_listener_wakes_for_a_notification_and_ends_at_once_between_beats(
    pg_server_url: str,
) -> None:
    # a beat a minute away: the listener waits on its connection and on the halting bell,
    # so a notification still arrives at once and the last release ends the thread (and its
    # connection) without waiting out the beat
    name = f"rho-bell-{uuid.uuid4().hex[:8]}"
    url = named(schema_url(pg_server_url), name)
    backend = PgBackend(StoreAddress(url, "the test"), heartbeat=60.0)
    pg = of_backend(backend)
    try:
        await pg.store.create(record("bell"))
        waiting = asyncio.create_task(pg.signals.wait_for_cancel("bell"))
        await asyncio.sleep(0.3)
        assert await pg.sessions.request("bell", "cancel")
        await asyncio.wait_for(waiting, 5)
        await pg.store.release("bell")
        # a wait given up sends no notification: only the halt can end the listener's wait
        await pg.store.create(record("quiet"))
        await pg.store.release("quiet")
        waiting = asyncio.create_task(pg.signals.wait_for_cancel("quiet"))
        await asyncio.sleep(0.3)
        assert backend.listening
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
    finally:
        closing = time.monotonic()
        await pg.aclose()  # joins the listener: it must not be waiting out the beat
    assert time.monotonic() - closing < 15.0  # a minute when the wait is the beat's
    assert await settles(lambda: connections(pg_server_url, name) == 0, 5.0)


async def test_a_wait_cancelled_while_the_listener_starts_leaves_no_listener(
    pg_server_url: str,
) -> None:
    # the listener's start runs in a thread that a cancel cannot stop: the use it takes must
    # be given back, or the thread and its connection outlive every owner
    backend = PgBackend(StoreAddress(schema_url(pg_server_url), "the test"), heartbeat=0.2)
    pg = of_backend(backend)
    try:
        await pg.store.create(record("quick"))
        await pg.store.release("quick")
        assert await settles(lambda: not backend.listening, 2.0)
        for _ in range(3):
            waiting = asyncio.create_task(pg.signals.wait_for_cancel("quick"))
            await asyncio.sleep(0)  # the wait is in the listener's start, in a thread
            waiting.cancel()
            with pytest.raises(asyncio.CancelledError):
                await waiting
        # the give-back runs on the loop once the thread is done: wait without blocking it
        for _ in range(60):
            if not backend.listening:
                break
            await asyncio.sleep(0.05)
        assert not backend.listening
    finally:
        await pg.aclose()


async def test_a_database_gone_after_release_brings_no_retry_lines(
    pg_server_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    # the database "goes away" for this store's role: it may no longer log in
    import psycopg

    role = f"rho_gone_{uuid.uuid4().hex[:8]}"
    base = schema_url(pg_server_url)
    schema = base.rsplit("search_path%3D", 1)[1]
    with psycopg.connect(pg_server_url, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN")
        conn.execute(f"GRANT USAGE, CREATE ON SCHEMA {schema} TO {role}")
    url = base.replace("postgres@", f"{role}@", 1)

    def lock_out() -> None:
        with psycopg.connect(pg_server_url, autocommit=True) as conn:
            conn.execute(f"ALTER ROLE {role} NOLOGIN")
            conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s",
                (role,),
            )

    made = postgres_store(url, origin="the test", heartbeat=0.2)
    caplog.set_level(logging.WARNING, logger="rho_adapters.pgstore")
    await made.store.create(record("held"))
    lock_out()
    # held, the listener must reconnect to beat: it says so (the test can see the noise)
    assert await settles(lambda: "retrying in" in caplog.text, 5.0)
    await made.store.aclose()  # the beats stop (the claim goes stale, as a dead host's)
    await made.sessions.aclose()
    assert not made.store.backend.listening
    caplog.clear()
    await asyncio.sleep(1.5)  # several backoffs of a loop that would still be running
    assert "retrying" not in caplog.text
    assert "listener" not in caplog.text


def test_a_connection_lent_across_a_close_is_closed_when_given_back(pg_server_url: str) -> None:
    # a query still running in a thread its caller stopped waiting for (a cancelled wait's
    # check) when the store closes: it gives its connection back to a closed pool
    name = f"rho-pool-{uuid.uuid4().hex[:8]}"
    pool = Pool(StoreAddress(named(schema_url(pg_server_url), name), "the test"))
    with pool.connection(transaction=False) as conn:
        conn.execute("SELECT 1")
        pool.close()
        assert pool.opened == 1  # lent: not closed under its user
    assert conn.closed
    assert pool.opened == 0
    assert gone(pg_server_url, name)  # the server ends its backend a moment after the close
    with pool.connection(transaction=False) as again:  # the pool stays usable
        assert again.execute("SELECT 1").fetchone() == (1,)
    assert pool.opened == 1
    pool.close()
    assert pool.opened == 0


async def test_the_library_closes_what_it_opened_and_aclose_closes_the_rest(
    pg_server_url: str,
) -> None:
    name = f"rho-lib-{uuid.uuid4().hex[:8]}"
    url = named(schema_url(pg_server_url), name)
    agent = Agent(EntryConfig(profile="readonly", model="scripted"))
    session = Session(agent, store=url, model=ScriptedModel([text("stored")]))
    assert (await session.run("remember me")).ok
    assert connections(pg_server_url, name) >= 1
    await session.close()  # the store it opened from the URL closes with it
    assert await settles(lambda: connections(pg_server_url, name) == 0)

    again = await Session.resume(session.id, store=url, model=ScriptedModel([text("again")]))
    assert (await again.run("and again")).text == "again"
    await again.close()
    assert await settles(lambda: connections(pg_server_url, name) == 0)

    store = SessionStore(url)  # the caller's object: open until its aclose
    assert await store.get_latest_id() == session.id
    assert connections(pg_server_url, name) >= 1
    await store.aclose()
    assert await settles(lambda: connections(pg_server_url, name) == 0)


async def test_a_runtime_closes_the_store_it_opened_from_a_url(pg_server_url: str) -> None:
    from rho_entry.runtime import close_runtime, create_runtime, run_prompt, start_runtime

    name = f"rho-rt-{uuid.uuid4().hex[:8]}"
    url = named(schema_url(pg_server_url), name)
    runtime = create_runtime(
        EntryConfig(profile="readonly", model="scripted"),
        store=url,
        model=ScriptedModel([text("one"), text("two")]),
    )
    await start_runtime(runtime)
    assert (await run_prompt(runtime, "first")).text == "one"
    assert (await run_prompt(runtime, "second", new_session=True)).text == "two"
    assert connections(pg_server_url, name) >= 1
    await close_runtime(runtime)
    assert await settles(lambda: connections(pg_server_url, name) == 0)


def gone(server_url: str, name: str, within: float = 5.0) -> bool:
    """``settles`` for synchronous tests: True once the server has no connection of ``name``."""
    deadline = time.monotonic() + within
    while connections(server_url, name) and time.monotonic() < deadline:
        time.sleep(0.05)
    return connections(server_url, name) == 0


async def test_a_store_used_after_its_close_keeps_no_connection(pg_server_url: str) -> None:
    # The catalog beside a store holds no share of its own: used after the store's close,
    # its query connected, and the connection stayed idle in the pool of a backend nobody
    # would close again, open until the process ended (garbage-collected then: psycopg's
    # "deleted while still open" ResourceWarning).
    name = f"rho-after-{uuid.uuid4().hex[:8]}"
    backend = PgBackend(StoreAddress(named(schema_url(pg_server_url), name), "the test"))
    made = of_backend(backend)
    await made.store.create(record("s1"))
    await made.store.release("s1")
    await made.aclose()
    assert await settles(lambda: connections(pg_server_url, name) == 0)
    assert [i.id for i in await made.sessions.sessions()] == ["s1"]  # still works
    assert backend.pool.opened == 0
    assert await settles(lambda: connections(pg_server_url, name) == 0)


def test_commands_run_in_process_give_back_the_store_they_opened(
    pg_server_url: str, tmp_path: Path
) -> None:
    # ``main`` in a process that goes on (a library caller, the CLI tests): each command
    # opened the store of its URL and never closed it, so the process's pool for the URL
    # kept its connections open until the process ended (5 of them garbage-collected open
    # at the end of a tests/store run).
    name = f"rho-cli-{uuid.uuid4().hex[:8]}"
    url = named(schema_url(pg_server_url), name)
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()

    def rho(*words: str) -> str:
        result = rho_here(*words, "--store", url, home=home, cwd=work)
        assert result.returncode == 0, (words, result.stderr)
        assert gone(pg_server_url, name), words
        return result.stdout

    rho("-m", "demo", "hello there")
    [row] = json.loads(rho("--list", "--json"))
    rho("--resume", row["id"], "-m", "demo", "and more")
    rho("stats", "--all", "--json")
    rho("export", row["id"])
    rho("monitor", "ps", "--json")
