"""``latest`` in a shared PostgreSQL store is the asker's own newest session, not any host's.

Before schema 4, ``--resume latest`` (``export latest``, ``stats``...) on host A resolved to the
newest session of the whole store: a session a user on host B started a moment later was
resumed on A. Each row now names who created it (``user@host``, ``pgstore/creators.py``), and
``latest`` is the newest of the asker's. Rows made before the migration have no creator: they
are nobody's latest, and are still listed and reached by their ids.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from pg_rig import pg_server_url, schema_url

from rho_adapters.pgstore import SCHEMA_VERSION, PgBackend, StoreAddress, of_backend
from rho_adapters.pgstore.schema import MIGRATIONS
from rho_domain.config import AgentConfig
from rho_domain.errors import SessionNotFound
from rho_domain.ports.store import SessionRecord

__all__ = ["pg_server_url"]


@pytest.fixture
def url(pg_server_url: str) -> str:
    return schema_url(pg_server_url)


@pytest.fixture
async def backends(url: str) -> AsyncIterator[list[PgBackend]]:
    made: list[PgBackend] = []
    yield made
    for backend in made:
        backend.close()


def host(backends: list[PgBackend], url: str, creator: str) -> PgBackend:
    backend = PgBackend(StoreAddress(url, "the test"), creator=creator)
    backends.append(backend)
    return backend


async def created(backend: PgBackend, session_id: str, at: float) -> None:
    store = of_backend(backend).store
    config = AgentConfig(model="m1", working_dir="/srv/work")
    await store.create(SessionRecord(id=session_id, created_at=at, config=config))
    await store.release(session_id)


async def test_latest_is_the_askers_newest_session(url: str, backends: list[PgBackend]) -> None:
    alice = host(backends, url, "alice@host-a")
    bob = host(backends, url, "bob@host-b")
    await created(alice, "a1aaaaaaaaaa", 1000.0)
    await created(alice, "a2aaaaaaaaaa", 2000.0)
    await created(bob, "b1bbbbbbbbbb", 3000.0)  # the store's newest: bob's
    for backend, mine in ((alice, "a2aaaaaaaaaa"), (bob, "b1bbbbbbbbbb")):
        pg = of_backend(backend)
        assert (await pg.sessions.info("latest")).id == mine
        record, _ = await pg.store.open("latest")
        assert record.id == mine
        await pg.store.release(mine)
    # another user on alice's host is not alice
    carol = of_backend(host(backends, url, "carol@host-a"))
    with pytest.raises(SessionNotFound) as none:
        await carol.sessions.info("latest")
    assert str(none.value) == (
        "no session of carol@host-a in the store, so no latest (3 of other users or hosts: "
        "name one by its id)"
    )
    assert (await carol.sessions.info("b1bbbbbbbbbb")).id == "b1bbbbbbbbbb"  # by its id


async def test_a_store_of_schema_3_is_migrated_its_rows_nobodys_latest(
    url: str, backends: list[PgBackend]
) -> None:
    import psycopg

    with psycopg.connect(url) as conn:
        conn.execute("CREATE TABLE rho_schema (one boolean PRIMARY KEY DEFAULT true, version int)")
        conn.execute("INSERT INTO rho_schema (version) VALUES (3)")
        for statement in MIGRATIONS[1] + MIGRATIONS[2] + MIGRATIONS[3]:
            conn.execute(statement)
        conn.execute(  # a session a schema-3 host made (no claim left)
            "INSERT INTO rho_sessions (id, created_at, config, meta) VALUES"
            " ('old1oldoldol', 5000, '{}', '{}')"
        )
    alice = host(backends, url, "alice@host-a")
    pg = of_backend(alice)
    listed = [info.id for info in await pg.sessions.sessions(limit=10)]
    assert listed == ["old1oldoldol"]  # migrated on first use, and still listed
    with pytest.raises(SessionNotFound, match="no session of alice@host-a in the store"):
        await pg.sessions.info("latest")
    await created(alice, "a1aaaaaaaaaa", 1000.0)  # older than the old row, but alice's
    assert (await pg.sessions.info("latest")).id == "a1aaaaaaaaaa"
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT version FROM rho_schema").fetchone() == (SCHEMA_VERSION,)
        assert SCHEMA_VERSION == 4
        creators = conn.execute("SELECT id, creator FROM rho_sessions ORDER BY id").fetchall()
    assert creators == [("a1aaaaaaaaaa", "alice@host-a"), ("old1oldoldol", None)]


def test_a_backend_names_its_user_and_host_by_default(url: str) -> None:
    import os
    import pwd
    import socket

    backend = PgBackend(StoreAddress(url, "the test"))
    try:
        user = pwd.getpwuid(os.geteuid()).pw_name
        assert backend.creator == f"{user}@{socket.gethostname()}"
    finally:
        backend.close()
