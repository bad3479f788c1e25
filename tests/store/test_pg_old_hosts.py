"""A host of an earlier rho-agent still running beside a store a newer host migrated.

A host checks the schema once, when it starts; one started before the migration goes on
writing as its own version. These tests write what a schema-1 host writes (its SQL, on a
connection that says nothing of its schema, as that version's connections do) on the shared
PostgreSQL server.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from pg_rig import pg_server_url, schema_url

from rho_adapters.pgstore import SCHEMA_VERSION, PgBackend, StoreAddress, of_backend
from rho_adapters.pgstore.schema import DECLARED, MIGRATIONS
from rho_domain.config import AgentConfig
from rho_domain.ports.store import SessionRecord

__all__ = ["pg_server_url"]

_REFUSED = (
    rf"runs a rho-agent older than the session store's schema \(version {SCHEMA_VERSION}\).*upgrade"
)


@pytest.fixture
def backend(pg_server_url: str) -> Iterator[PgBackend]:
    made = PgBackend(StoreAddress(schema_url(pg_server_url), "the test"), stale_after=1)
    yield made
    made.close()


async def test_a_host_older_than_the_store_cannot_claim(backend: PgBackend) -> None:
    """A schema-1 host creates a session without a lease and takes over a claim it judges
    stale by its own bound alone: both refused, naming the host and what to do; it may still
    release, and a newer host (or one that says it writes this schema) claims as before."""
    import psycopg

    pg = of_backend(backend)
    record = SessionRecord(id="new1", created_at=1000.0, config=AgentConfig(model="m1"))
    await pg.store.create(record)  # migrates the store; held by a host with a lease
    url = backend.address.url
    with psycopg.connect(url, autocommit=True) as old:
        with pytest.raises(psycopg.Error, match=_REFUSED) as created:
            old.execute(
                "INSERT INTO rho_sessions (id, created_at, config, meta, holder, beat)"
                " VALUES ('old1', 1000, '{}', '{}', 'an old host', now())"
            )
        assert "session old1: an old host runs" in str(created.value)
        with pytest.raises(psycopg.Error, match=_REFUSED):  # its takeover of a live claim
            old.execute("UPDATE rho_sessions SET holder = 'an old host', beat = now()")
        old.execute(f"SET {DECLARED} = '2'")  # a schema-2 host is older too
        with pytest.raises(psycopg.Error, match=_REFUSED):
            old.execute("UPDATE rho_sessions SET holder = 'an old host', beat = now()")
        old.execute("UPDATE rho_sessions SET cancel = true")  # a flag is no claim
        assert old.execute("SELECT holder, cancel FROM rho_sessions").fetchall() == [
            (backend.holder, True)
        ]
        old.execute(f"SET {DECLARED} = '{SCHEMA_VERSION}'")
        old.execute("UPDATE rho_sessions SET holder = 'a new host', beat = now()")
        schema = old.execute("SELECT current_schema()").fetchone()[0]  # type: ignore[index]
    with psycopg.connect(url.partition("?")[0], autocommit=True) as admin:  # no search_path
        admin.execute(f"UPDATE {schema}.rho_sessions SET cancel = false")  # a hand edit
    await pg.sessions.sessions()


async def test_an_old_hosts_claim_from_before_the_migration_beats_with_a_lease(
    backend: PgBackend,
) -> None:
    """The claim a schema-1 host holds keeps beating (its run goes on), and each beat
    leaves it a lease, so a host with a shorter bound never reads it as stale between beats."""
    import psycopg

    await of_backend(backend).sessions.sessions()
    with psycopg.connect(backend.address.url, autocommit=True) as old:
        old.execute(
            f"SET {DECLARED} = '{SCHEMA_VERSION}'; INSERT INTO rho_sessions"
            " (id, created_at, config, meta, holder, beat) VALUES"
            " ('old1', 1000, '{}', '{\"status\": \"running\"}', 'an old host', now());"
            " UPDATE rho_sessions SET lease = NULL; RESET rho.schema"
        )
        old.execute("UPDATE rho_sessions SET beat = now() WHERE holder = 'an old host'")
        assert old.execute("SELECT lease FROM rho_sessions").fetchall() == [(8.0,)]
        old.execute("UPDATE rho_sessions SET beat = now() - interval '5 s'")
    assert (await of_backend(backend).sessions.info("old1")).liveness == "running"


@pytest.mark.parametrize("reset", ["DISCARD ALL", "RESET ALL"])
async def test_a_pooler_resetting_the_connection_leaves_a_new_hosts_claims_alone(
    backend: PgBackend, reset: str
) -> None:
    """A pooler between host and server (PgBouncer) resets a server connection's settings
    between its clients, or runs each transaction on another one: the setting a connection
    made when it opened is gone, and the new host's create and open were refused as an old
    host's ('upgrade rho-agent'). Each claim says its schema in its own transaction."""
    pg = of_backend(backend)
    await pg.store.create(SessionRecord(id="a1", created_at=1000.0, config=AgentConfig(model="m")))
    await pg.store.release("a1")

    def pooler_reset() -> None:
        for conn in list(backend.pool._idle.queue):  # every connection the next claim may use
            conn.execute(reset)

    pooler_reset()
    await pg.store.create(SessionRecord(id="a2", created_at=1001.0, config=AgentConfig(model="m")))
    pooler_reset()
    await pg.store.open("a1")
    await pg.store.release("a1")
    await pg.store.release("a2")


async def test_an_old_hosts_claim_written_during_the_migration_gets_its_lease(
    backend: PgBackend,
) -> None:
    """An old host's claim written while a new host migrates the store (committed after the
    migration's update of leases, before its trigger): it kept no lease until its next beat,
    and a reader with a shorter bound could take the live session over meanwhile."""
    import psycopg

    url = backend.address.url
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute("CREATE TABLE rho_schema (one boolean PRIMARY KEY DEFAULT true, version int)")
        admin.execute("INSERT INTO rho_schema (version) VALUES (2)")
        for statement in MIGRATIONS[1] + MIGRATIONS[2]:
            admin.execute(statement)
        with psycopg.connect(url) as old:  # a schema-2 host: its claim not yet committed
            old.execute(
                "INSERT INTO rho_sessions (id, created_at, config, meta, holder, beat)"
                " VALUES ('old1', 1000, '{}', '{}', 'an old host', now())"
            )
            migrating = threading.Thread(target=backend.ready)
            migrating.start()
            while not admin.execute(  # the migration waits for the old host's lock
                "SELECT 1 FROM pg_locks WHERE NOT granted AND relation = 'rho_sessions'::regclass"
            ).fetchone():
                migrating.join(0.01)
                assert migrating.is_alive(), "the migration did not wait for the claim"
            old.commit()
        migrating.join()
        assert admin.execute("SELECT lease FROM rho_sessions").fetchall() == [(8.0,)]
        assert admin.execute("SELECT version FROM rho_schema").fetchone() == (SCHEMA_VERSION,)


async def test_an_append_or_a_beat_keeping_its_claim_does_not_read_the_schema(
    backend: PgBackend,
) -> None:
    """The trigger read rho_schema (a dynamic EXECUTE) on every update of rho_sessions, every
    append and beat included, though an update keeping its holder (with a lease, or no claim)
    passes whatever the versions: 50-150 us of an append's 120-170 on the server. Counted by
    the table's scans in the transaction, not timed; a change of holder still reads it."""
    import psycopg

    pg = of_backend(backend)
    await pg.store.create(SessionRecord(id="s1", created_at=1000.0, config=AgentConfig(model="m")))
    scans = (
        "SELECT seq_scan + coalesce(idx_scan, 0) FROM pg_stat_xact_user_tables"
        " WHERE relid = 'rho_schema'::regclass"
    )
    for declared in (str(SCHEMA_VERSION), None):  # this build's host, and an older one's
        with psycopg.connect(backend.address.url) as conn:
            if declared is not None:
                conn.execute(f"SET {DECLARED} = '{declared}'")
            for _ in range(3):  # an append's update, then a beat's, as the store writes them
                conn.execute(
                    "UPDATE rho_sessions SET meta = '{}', last_seq = last_seq + 1"
                    " WHERE id = 's1' AND holder = %s",
                    (backend.holder,),
                )
                conn.execute(
                    "UPDATE rho_sessions SET beat = now() WHERE holder = %s", (backend.holder,)
                )
            conn.execute("UPDATE rho_sessions SET cancel = true WHERE id = 's1'")  # a flag
            assert conn.execute(scans).fetchone() == (0,), declared  # 7 before
            conn.execute(
                f"SET {DECLARED} = '{SCHEMA_VERSION}';"
                " UPDATE rho_sessions SET holder = 'another host' WHERE id = 's1'"
            )
            assert conn.execute(scans).fetchone() == (1,), declared
            conn.rollback()
    await pg.store.release("s1")
