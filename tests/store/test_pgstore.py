"""What only the PostgreSQL store has to show: schema versions, one driver across hosts,
heartbeats, a cancel from another process woken by its notification, a bounded pool, hidden
passwords.

Two ``PgBackend``s on one URL are two hosts: each has its own pool, listener, heartbeat and
holder name, exactly as two processes on two machines would.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import secrets
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from pg_rig import as_a_host, pg_server_url, schema_url

from rho_adapters.pgstore import SCHEMA_VERSION, PgBackend, StoreAddress, of_backend
from rho_adapters.pgstore.connection import shown_url
from rho_adapters.pgstore.schema import _MIGRATION_LOCK as MIGRATION_LOCK
from rho_adapters.pgstore.schema import CHANNEL, MIGRATIONS
from rho_adapters.pgstore.signals import RECHECK_SECONDS
from rho_adapters.store import FileSessionStore
from rho_adapters.store.layout import META_BYTES
from rho_adapters.store.recording import CONFIG_BYTES
from rho_adapters.store.signals import DIRECTIVES_BYTES, EXPORT_BYTES
from rho_domain import events as ev
from rho_domain.config import AgentConfig
from rho_domain.errors import SessionLocked, StoreError
from rho_domain.messages import Usage, UserMessage
from rho_domain.ports.store import SessionRecord
from rho_domain.run import RunStatus

__all__ = ["pg_server_url"]
SRC = Path(__file__).resolve().parents[2] / "src"


@pytest.fixture
def url(pg_server_url: str) -> str:
    return schema_url(pg_server_url)


@pytest.fixture
def hosts(url: str) -> Iterator[list[PgBackend]]:
    made: list[PgBackend] = []
    yield made
    for backend in made:
        backend.close()


def host(hosts: list[PgBackend], url: str, **options: float) -> PgBackend:
    backend = PgBackend(StoreAddress(url, "the test"), **options)  # type: ignore[arg-type]
    hosts.append(backend)
    return backend


def record(session_id: str) -> SessionRecord:
    return SessionRecord(id=session_id, created_at=1000.0, config=AgentConfig(model="m1"))


def run_events(prompt: str = "hello") -> list[ev.Event]:
    return [
        ev.RunStarted(at=1001.0, run_id="r1", prompt=prompt),
        ev.MessageAdded(at=1001.0, message=UserMessage(prompt)),
        ev.UsageRecorded(at=1001.0, usage=Usage(input_tokens=7), prompt_tokens=7),
    ]


async def test_a_new_store_gets_the_current_schema(url: str, hosts: list[PgBackend]) -> None:
    import psycopg

    backend = host(hosts, url)
    await of_backend(backend).sessions.sessions()
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT version FROM rho_schema").fetchone() == (SCHEMA_VERSION,)
    await of_backend(host(hosts, url)).sessions.sessions()  # a second host finds it made


async def test_a_store_of_schema_1_gets_its_claims_leases(url: str, hosts: list[PgBackend]) -> None:
    """A store an earlier version made (schema 1, a session held without a lease) is
    migrated: the column is added, and the old claim gets the lease earlier versions kept by
    default (8 s), so a reader with a shorter bound does not take a live old host's session."""
    import psycopg

    with psycopg.connect(url) as conn:
        conn.execute("CREATE TABLE rho_schema (one boolean PRIMARY KEY DEFAULT true, version int)")
        conn.execute("INSERT INTO rho_schema (version) VALUES (1)")
        for statement in MIGRATIONS[1]:
            conn.execute(statement)
        conn.execute(
            "INSERT INTO rho_sessions (id, created_at, config, meta, holder, beat) VALUES"
            " ('old1', 1000, '{}', %s, 'an old host', now() - interval '5 s')",
            ('{"status": "running"}',),
        )
    pg = of_backend(host(hosts, url, stale_after=1))
    assert (await pg.sessions.info("old1")).liveness == "running"
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT version FROM rho_schema").fetchone() == (SCHEMA_VERSION,)
        assert conn.execute("SELECT lease FROM rho_sessions").fetchall() == [(8.0,)]


async def test_a_newer_schema_is_refused_and_left_alone(url: str, hosts: list[PgBackend]) -> None:
    import psycopg

    await of_backend(host(hosts, url)).sessions.sessions()
    with psycopg.connect(url) as conn:
        conn.execute("UPDATE rho_schema SET version = 99")
    with pytest.raises(
        StoreError, match=r"schema version 99, newer than this rho-agent knows"
    ) as e:
        await of_backend(host(hosts, url)).sessions.sessions()
    assert "the test" in str(e.value)  # the setting to fix
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT version FROM rho_schema").fetchone() == (99,)


async def test_one_driver_across_hosts_and_the_holder_is_named(
    url: str, hosts: list[PgBackend]
) -> None:
    a = of_backend(host(hosts, url, heartbeat=0.1, stale_after=0.6))
    b = of_backend(host(hosts, url, heartbeat=0.1, stale_after=0.6))
    await a.store.create(record("shared1"))
    await a.store.append("shared1", run_events())
    await asyncio.sleep(1.0)  # longer than the stale bound: A's heartbeats keep its claim
    with pytest.raises(SessionLocked, match=r"held by \S+ pid \d+"):
        await b.store.open("shared1")
    assert (await b.sessions.info("shared1")).liveness == "running"
    a.store.backend.close()  # host A dies: no more heartbeats
    # Stale once the beats stop (the bound itself is the store's rule; how soon B's polls see
    # it is the machine's load too): 30 s is a claim that never goes stale.
    deadline = time.monotonic() + 30
    while (await b.sessions.info("shared1")).liveness != "stale":
        assert time.monotonic() < deadline, "A's claim never went stale"
        await asyncio.sleep(0.05)
    _, events = await b.store.open("shared1")  # B takes it over
    assert [e.kind for e in events] == ["run_start", "message", "usage"]
    with pytest.raises(SessionLocked, match="no longer held by this process"):
        await a.store.append(
            "shared1", [ev.RunEnded(at=1002.0, run_id="r1", status=RunStatus.COMPLETED)]
        )
    await b.store.release("shared1")
    lines = await b.sessions.trace("shared1")
    assert len(lines) == 3  # A's late write did not interleave


async def test_a_session_taken_over_stops_its_old_holder_and_keeps_its_signals(
    url: str, hosts: list[PgBackend]
) -> None:
    """A's claim goes stale while A still runs the session (a frozen VM, a network cut: here
    A beats once an hour) and B takes it over. Before, A's run went on: its cancel waiter
    slept on (it ran tools beside B until its next append was refused), and ending, it
    cleared the pause and cancel B's operator had asked for and answered B's export request
    with its own history. Now B's takeover wakes A's waiter, which reads the session lost,
    and A's writes to B's signals change nothing."""
    import psycopg

    a = of_backend(host(hosts, url, heartbeat=3600, stale_after=0.2))
    b = of_backend(host(hosts, url, stale_after=0.2))
    await a.store.create(record("taken1"))
    await a.store.append("taken1", run_events())
    waiting = asyncio.create_task(a.signals.wait_for_cancel("taken1"))
    assert not await a.signals.cancel_requested("taken1")
    # the notification itself, heard on a connection of our own: A's waiter also reads the
    # row every RECHECK_SECONDS, which finds the session lost without any notification
    with psycopg.connect(url, autocommit=True) as listener:
        listener.execute(f"LISTEN {CHANNEL}")
        await _take_over(b, "taken1")
        # sent in the takeover's own transaction, so it is here once open returned
        heard = [n.payload for n in listener.notifies(timeout=10, stop_after=1)]
    assert heard == ["cancel taken1"], heard
    await asyncio.wait_for(waiting, 3 * RECHECK_SECONDS)  # before: asleep until cancelled
    assert await a.signals.cancel_requested("taken1")
    assert not await b.signals.cancel_requested("taken1")
    await b.sessions.request("taken1", "pause")
    await b.sessions.request("taken1", "cancel")
    asked = "asked1"
    await b.sessions.request_export("taken1", asked)
    await a.signals.clear_pause("taken1")  # what A's run does as it ends
    await a.signals.clear_cancel("taken1")
    await a.signals.answer_export("taken1", asked, "# A's stale context\n")
    assert await b.signals.is_paused("taken1")
    assert await b.signals.cancel_requested("taken1")
    assert await b.sessions.export_answer("taken1", asked) is None
    await b.signals.clear_cancel("taken1")  # the holder's own writes still work
    await b.signals.clear_pause("taken1")
    assert not await b.signals.cancel_requested("taken1")
    assert not await b.signals.is_paused("taken1")
    await b.store.release("taken1")


async def test_a_claim_is_judged_by_its_holders_lease_not_the_takers_bound(
    url: str, hosts: list[PgBackend]
) -> None:
    """A holds a session with a 60 s stale bound (it may beat that rarely); B is configured
    with 1 s. A's last beat was 5 s ago: live by A's lease, stale by B's bound. Before, B
    judged by its own bound alone: its listing said 'stale' and its open took A's live
    session over (A's run cancelled). Now each claim keeps its holder's lease, and B judges
    it by the longer of the two, in the listing, the control's reads and the takeover."""
    import psycopg

    a = of_backend(host(hosts, url, heartbeat=3600, stale_after=60))
    b = of_backend(host(hosts, url, stale_after=1))
    await a.store.create(record("leased1"))
    await a.store.append("leased1", run_events())
    with psycopg.connect(url) as conn:  # A's last beat, 5 s ago (no waiting for it)
        conn.execute("UPDATE rho_sessions SET beat = now() - interval '5 s' WHERE id = 'leased1'")
    assert (await b.sessions.info("leased1")).liveness == "running"
    assert [s.liveness for s in await b.sessions.sessions() if s.id == "leased1"] == ["running"]
    with pytest.raises(SessionLocked, match=rf"held by {re.escape(a.store.backend.holder)}"):
        await b.store.open("leased1")
    with psycopg.connect(url) as conn:  # past A's lease too: gone for everyone
        conn.execute("UPDATE rho_sessions SET beat = now() - interval '61 s' WHERE id = 'leased1'")
    assert (await b.sessions.info("leased1")).liveness == "stale"
    await b.store.open("leased1")
    await b.store.release("leased1")


async def test_a_lease_no_reader_can_count_with_does_not_break_the_store(
    url: str, hosts: list[PgBackend]
) -> None:
    """A row's lease is whatever its holder wrote: a library user's ``stale_after`` of
    ``inf``, NaN or 1e300 (no setting checks it there), or a hand edit. A lease past what an
    interval holds made every reader's query fail ('interval out of range'): no host could
    list, read or open any session. A lease counts up to an hour, as the setting allows; one
    below the reader's own bound (0, negative) counts as that bound, so a live claim stays
    live."""
    import psycopg

    pg = of_backend(host(hosts, url, stale_after=1))
    await pg.store.create(record("odd1"))
    await pg.store.release("odd1")
    await pg.store.create(record("odd2"))
    for lease in ("NaN", "Infinity", "1e300", "-1", "-Infinity", "0"):
        with psycopg.connect(as_a_host(url)) as conn:
            conn.execute(
                "UPDATE rho_sessions SET holder = 'elsewhere', beat = now() - interval '2 h',"
                " lease = %s::float WHERE id = 'odd1'",
                (lease,),
            )
        assert [s.id for s in await pg.sessions.sessions()] == ["odd2", "odd1"], lease
        assert (await pg.sessions.info("odd1")).liveness != "running", lease
        await pg.store.open("odd1")  # silent for 2 h: past an hour's lease
        await pg.store.release("odd1")
    for lease in ("-1", "-Infinity", "0"):  # a live claim: the reader's own bound still counts
        with psycopg.connect(as_a_host(url)) as conn:
            conn.execute(
                "UPDATE rho_sessions SET holder = 'elsewhere', beat = now(), lease = %s::float,"
                " meta = '{\"status\": \"running\"}' WHERE id = 'odd1'",
                (lease,),
            )
        assert (await pg.sessions.info("odd1")).liveness == "running", lease
        with pytest.raises(SessionLocked, match="held by elsewhere"):
            await pg.store.open("odd1")
    await pg.store.release("odd2")


async def test_two_hosts_of_one_hostname_and_pid_never_share_a_holder_name(
    url: str, hosts: list[PgBackend], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two containers with one hostname and pid 1 were told apart by 24 random bits only
    (``host pid 1 (token)``); here both hosts are in one process and the bits are forced
    equal. A's claim goes stale while A is frozen and B takes the session over. Before, with
    one name, B's takeover told A nothing (it takes over from itself), A read no cancel and
    its next append went in beside B's (every claim check is ``holder = me``). Now a holder
    is named by a transaction id of the server, never given twice."""
    import psycopg

    monkeypatch.setattr(secrets, "token_hex", lambda nbytes=None: "c0ffee")
    a = of_backend(host(hosts, url, heartbeat=3600, stale_after=0.2))
    b = of_backend(host(hosts, url, stale_after=0.2))
    await a.store.create(record("twin1"))
    await a.store.append("twin1", run_events())
    # A's last beat, 5 s ago: frozen past its lease. A's listener beats once as it starts
    # (its next beat is an hour away); under load that beat can land after the back-dating,
    # and B is then refused as it should be: back-date again until B has taken over.
    for _ in range(50):
        with psycopg.connect(url) as conn:
            conn.execute("UPDATE rho_sessions SET beat = now() - interval '5 s' WHERE id = 'twin1'")
        try:
            await b.store.open("twin1")
            break
        except SessionLocked:
            continue
    else:
        pytest.fail("B never took the session over from A's back-dated claim")
    assert await a.signals.cancel_requested("twin1")
    with pytest.raises(SessionLocked, match="no longer held by this process"):
        await a.store.append("twin1", run_events("A again"))
    assert a.store.backend.holder != b.store.backend.holder
    assert re.fullmatch(r".+ pid \d+ \(xid \d+\)", b.store.backend.holder)
    await b.store.release("twin1")


async def test_a_huge_value_in_a_row_is_refused_not_read_whole(
    url: str, hosts: list[PgBackend]
) -> None:
    """A row holds what its writer wrote (a peer with the store's password), as a session
    directory holds what its writers put there. Before, each value was read whole by every
    reader: a meta past 1 MiB by every listing of every host (here its summary was shown),
    a config, a directive and an export's answer past their bounds by the open, each step
    of the run and the export's reader. Now the file store's bounds apply: that session is
    listed without its summary, and the others are refused with a StoreError naming the
    row, none of them read."""
    import psycopg

    pg = of_backend(host(hosts, url))
    await pg.store.create(record("big1"))
    await pg.store.release("big1")
    with psycopg.connect(url) as conn:
        conn.execute(
            "UPDATE rho_sessions SET meta = %s || repeat('x', %s) || '\"}' WHERE id = 'big1'",
            ('{"status": "completed", "first_prompt": "', META_BYTES),
        )
    assert [s.status for s in await pg.sessions.sessions()] == ["created"]
    with psycopg.connect(url) as conn:
        conn.execute(
            "UPDATE rho_sessions SET config = '{}' || repeat(' ', %s) WHERE id = 'big1'",
            (CONFIG_BYTES,),
        )
        conn.execute(
            "INSERT INTO rho_directives (session_id, seq, text, at)"
            " VALUES ('big1', 0, repeat('x', %s), 0)",
            (DIRECTIVES_BYTES + 1,),
        )
        conn.execute(
            "INSERT INTO rho_exports (session_id, request_id, answer)"
            " VALUES ('big1', 'x1', repeat('x', %s))",
            (EXPORT_BYTES + 1,),
        )
    config = f"session big1's config in the store holds more than {CONFIG_BYTES} bytes"
    with pytest.raises(StoreError, match=config):
        await pg.store.open("big1")
    with pytest.raises(StoreError, match=config):
        await pg.sessions.record("big1")
    directives = f"session big1's directives from 0 on .* hold more than {DIRECTIVES_BYTES}"
    with pytest.raises(StoreError, match=directives):
        await pg.signals.directives("big1", after=0)
    with pytest.raises(StoreError, match="the export x1 of session big1 holds more than"):
        await pg.sessions.export_answer("big1", "x1")


async def test_directives_and_export_requests_are_read_within_bounds(
    url: str, hosts: list[PgBackend]
) -> None:
    """Each directive row was bounded alone (16 MiB): a peer's rows, each under it, were all
    read by every checkpoint of the run holding the session (a thousand of 15 MiB, or
    millions of empty ones), where the file store bounds the whole directives.jsonl. Now what
    the rows after the offset cost together (their text, and 64 bytes a row) is judged in
    the statement that reads them; what comes after the offset is judged alone."""
    import psycopg

    pg = of_backend(host(hosts, url))
    await pg.store.create(record("many1"))
    await pg.store.release("many1")
    size = DIRECTIVES_BYTES // 4  # four rows fit; five do not
    with psycopg.connect(url) as conn:
        conn.execute(
            "INSERT INTO rho_directives (session_id, seq, text, at)"
            " SELECT 'many1', n, repeat('x', %s), 0 FROM generate_series(0, 4) AS n",
            (size - 64,),
        )
    with pytest.raises(StoreError, match=r"session many1's directives from 0 on .* hold more"):
        await pg.signals.directives("many1", after=0)
    assert [d.offset for d in await pg.signals.directives("many1", after=1)] == [1, 2, 3, 4]
    # export requests: only what request_export makes (a plain id, as the file store reads
    # only such names), a page at a time; before, every row, whatever its id, at once
    with psycopg.connect(url) as conn:
        conn.execute(
            "INSERT INTO rho_exports (session_id, request_id) SELECT 'many1', id FROM"
            " (SELECT 'r' || lpad(n::text, 3, '0') FROM generate_series(1, 70) AS n"
            " UNION ALL VALUES ('a b'), ('latest'), (repeat('x', 300)), ('0/..')) AS ids (id)"
        )
    asked = await pg.signals.export_requests("many1")
    assert asked == tuple(f"r{n:03}" for n in range(1, 65))


async def test_a_trace_past_its_bound_is_refused_not_read_whole(
    url: str, hosts: list[PgBackend]
) -> None:
    """``rho_events`` rows hold what their writer wrote: a gigabyte line (or many) was read
    whole by the open (``string_agg`` of every line), a watch or a stream from the start and
    the approvals' listing; the count a server's stream asks for before its 200 let it
    start, to end on an error event (a file-backed session's stream is a 409). Now a trace
    past the backend's bound (``TRACE_BYTES``, 1 GiB; 300 bytes here) is a StoreError naming
    the session, its claim left untaken; what comes after a line already read is judged
    alone."""
    pg = of_backend(host(hosts, url))
    await pg.store.create(record("long1"))
    await pg.store.append("long1", run_events("x" * 400))
    await pg.store.release("long1")
    small = of_backend(host(hosts, url, trace_bytes=300))
    refused = r"session long1's trace \(its rho_events rows\) holds more than 300 bytes"
    for read in (
        lambda: small.store.open("long1"),
        lambda: small.sessions.trace("long1"),
        lambda: small.sessions.approvals("long1"),
        lambda: small.sessions.last_seq("long1"),  # a server's stream asks before its 200
    ):
        with pytest.raises(StoreError, match=refused):
            await read()
    assert [line.seq for line in await small.sessions.trace("long1", after=2)] == [3]
    await pg.store.open("long1")  # the claim was not taken
    await pg.store.release("long1")


async def test_a_streams_idle_poll_sums_only_the_rows_it_has_not_counted(
    url: str, hosts: list[PgBackend]
) -> None:
    """A server's stream counts the trace at each idle poll, and the count summed every
    row's size: 158 ms of the database's time a poll for 100,000 rows. Now a row is summed
    once: the proof, a row counted already and made larger in place is not seen by the next
    count (it read no such row), while the reads of that row still refuse it; the rows
    added since are summed, and rows deleted make the count start again."""
    import psycopg

    pg = of_backend(host(hosts, url))
    await pg.store.create(record("sum1"))
    await pg.store.append("sum1", run_events("x"))
    small = of_backend(host(hosts, url, trace_bytes=400))  # 327 stored
    assert await small.sessions.last_seq("sum1") == 3
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("UPDATE rho_events SET line = repeat('y', 500) WHERE seq = 1")
    assert await small.sessions.last_seq("sum1") == 3  # row 1 not summed again
    refused = r"session sum1's trace \(its rho_events rows\) holds more than 400 bytes"
    with pytest.raises(StoreError, match=refused):
        await small.sessions.trace("sum1")
    await pg.store.append("sum1", [ev.MessageAdded(at=1002.0, message=UserMessage("z" * 300))])
    with pytest.raises(StoreError, match=refused):  # rows added since, summed
        await small.sessions.last_seq("sum1")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DELETE FROM rho_events WHERE seq > 1")
    with pytest.raises(StoreError, match=refused):  # fewer rows: summed from the start
        await small.sessions.last_seq("sum1")
    await pg.store.release("sum1")


class _GrowsAfterTheSum:
    """A backend's pool whose connections let a peer make row 1 of a trace larger right
    after the first statement that sums its rows' sizes, as a racing writer would."""

    def __init__(self, pool: Any, url: str) -> None:
        self.pool, self.url, self.fired = pool, url, False

    @contextlib.contextmanager
    def connection(self, *, transaction: bool = True) -> Iterator[Any]:
        with self.pool.connection(transaction=transaction) as conn:
            yield self._Conn(conn, self)

    class _Conn:
        def __init__(self, conn: Any, pool: _GrowsAfterTheSum) -> None:
            self.conn, self.pool = conn, pool

        def execute(self, query: Any, params: Any = None) -> Any:
            import psycopg

            result = self.conn.execute(query, params)
            if "sum(octet_length(line))" in str(query) and not self.pool.fired:
                self.pool.fired = True
                with psycopg.connect(self.pool.url, autocommit=True) as peer:
                    peer.execute("UPDATE rho_events SET line = repeat('y', 500) WHERE seq = 1")
            return result

        def __getattr__(self, name: str) -> Any:
            return getattr(self.conn, name)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.pool, name)


async def test_a_row_grown_between_the_sum_and_the_read_is_not_read(
    url: str, hosts: list[PgBackend]
) -> None:
    """READ COMMITTED: the rows' sizes were summed in one statement and the rows read in
    the next, each its own snapshot, so a row a peer made larger in between (a gigabyte, up
    to the bound's check) was read whole, by a stream's read and by the open. Now both are
    judged in the statement that reads them: what is read is what was summed."""
    import psycopg

    pg = of_backend(host(hosts, url))
    await pg.store.create(record("race1"))
    await pg.store.append("race1", run_events("x"))
    await pg.store.release("race1")
    first = (await pg.sessions.trace("race1"))[0].data.decode()
    for read in ("trace", "open"):
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("UPDATE rho_events SET line = %s WHERE seq = 1", (first,))
        small = of_backend(host(hosts, url, trace_bytes=400))  # 327 stored
        racing = _GrowsAfterTheSum(small.sessions.backend.pool, url)
        small.sessions.backend.pool = racing  # type: ignore[assignment]  # a pool's part
        if read == "trace":
            lines = await small.sessions.trace("race1")
            assert sum(len(line.data) for line in lines) <= 400
        else:
            _, events = await small.store.open("race1")  # row 1 as it was summed
            assert isinstance(events[0], ev.RunStarted)  # not 500 bytes of y (set aside)
            await small.store.release("race1")
        assert racing.fired


async def test_a_created_at_column_edited_to_no_time_is_listed_as_none(
    url: str, hosts: list[PgBackend]
) -> None:
    """``created_at`` is double precision, which holds NaN and the infinities; a row edited
    so (with a summary that gives no time) was listed with that time: ``--list`` raised
    'cannot convert float NaN to integer' for -Infinity, and ``--list --json`` printed NaN
    and Infinity, which no JSON parser reads. Such a column now counts as no time (0)."""
    import psycopg

    from rho_entry.cli.sessions import format_sessions

    pg = of_backend(host(hosts, url))
    odd = {"nan1": "NaN", "inf1": "Infinity", "minf1": "-Infinity"}
    for session_id in odd:
        await pg.store.create(record(session_id))
        await pg.store.release(session_id)
    with psycopg.connect(url) as conn:
        for session_id, value in odd.items():
            conn.execute(
                "UPDATE rho_sessions SET created_at = %s::float, meta = '{}' WHERE id = %s",
                (value, session_id),
            )
    infos = await pg.sessions.sessions()
    assert {info.id: info.created_at for info in infos} == dict.fromkeys(odd, 0.0)
    assert len(format_sessions(infos)) == 4  # the header and each session


async def test_huge_labels_or_parent_id_in_a_row_are_refused_not_read_whole(
    url: str, hosts: list[PgBackend]
) -> None:
    """The meta, config, directive and export bounds left a row's ``labels`` and
    ``parent_id`` read whole (``id`` and ``holder`` are indexed, and a btree entry holds
    8 kB compressed): labels of any size by every listing of every host (the dashboard
    polls it every 2 s), both by the record and the open. In the file store they are in
    meta.json, under ``META_BYTES``; here too now. Before, the listing showed the planted
    label and the open and the record read both."""
    import psycopg

    pg = of_backend(host(hosts, url))
    for sid in ("lab1", "par1"):
        await pg.store.create(record(sid))
        await pg.store.release(sid)
    with psycopg.connect(url) as conn:
        conn.execute(
            "UPDATE rho_sessions SET labels = %s || repeat('x', %s) || '\"}' WHERE id = 'lab1'",
            ('{"team": "', META_BYTES),
        )
        conn.execute(
            "UPDATE rho_sessions SET parent_id = repeat('p', %s) WHERE id = 'par1'",
            (META_BYTES + 1,),
        )
    listed = {s.id: s.labels for s in await pg.sessions.sessions()}
    assert (listed["lab1"], listed["par1"]) == ({}, {})
    for sid, name in (("lab1", "labels"), ("par1", "parent id")):
        said = f"session {sid}'s {name} in the store holds more than {META_BYTES} bytes"
        with pytest.raises(StoreError, match=said):
            await pg.sessions.record(sid)
        with pytest.raises(StoreError, match=said):
            await pg.store.open(sid)


def test_two_hosts_start_together_on_a_serializable_database(pg_server_url: str) -> None:
    """A database whose ``default_transaction_isolation`` is serializable (a DBA's choice):
    two hosts starting together both waited for the migration's lock with the snapshot of
    their first statement, taken before the first host created the tables; the second then
    read the store as empty and failed creating them ('relation already exists'). The
    store's connections are READ COMMITTED whatever the server's default."""
    import psycopg

    url = schema_url(pg_server_url) + quote(" -cdefault_transaction_isolation=serializable")
    name = f"serializable-{secrets.token_hex(4)}"  # the server is shared: our hosts only
    url = f"{url}&application_name={name}"
    backends = [PgBackend(StoreAddress(url, "the test")) for _ in range(2)]
    failures: list[BaseException] = []

    def start(backend: PgBackend) -> None:
        try:
            backend.ready()
        except Exception as exc:  # noqa: BLE001 - collected for the assertion
            failures.append(exc)

    waiting = (
        "SELECT count(*) FROM pg_locks JOIN pg_stat_activity USING (pid)"
        " WHERE locktype = 'advisory' AND NOT granted AND application_name = %s"
    )
    try:
        with psycopg.connect(pg_server_url, autocommit=True) as gate:
            gate.execute("SELECT pg_advisory_lock(%s)", (MIGRATION_LOCK,))
            threads = [threading.Thread(target=start, args=(b,)) for b in backends]
            for thread in threads:
                thread.start()
            deadline = time.monotonic() + 30  # a hang bound
            while gate.execute(waiting, (name,)).fetchall() != [(2,)]:
                assert time.monotonic() < deadline, "the hosts never waited for the lock"
                time.sleep(0.02)
            gate.execute("SELECT pg_advisory_unlock(%s)", (MIGRATION_LOCK,))
            for thread in threads:
                thread.join(30)
    finally:
        for backend in backends:
            backend.close()
    assert failures == []
    assert backends[0].holder != backends[1].holder


async def _take_over(b: Any, session_id: str) -> None:
    """``b`` opens ``session_id`` as soon as its holder's claim is stale for ``b``."""
    deadline = time.monotonic() + 30  # a hang bound: 0.2 s is B's stale bound
    while True:
        try:
            await b.store.open(session_id)
            return
        except SessionLocked:
            assert time.monotonic() < deadline, "the holder's claim never went stale for B"
            await asyncio.sleep(0.05)


class FrozenAfterACall(PgBackend):
    """A process frozen right after one store call (a paused VM, a long pause of its loop):
    ``then`` runs there, once."""

    then: Callable[[], Awaitable[None]] | None = None

    async def call(self, work: Any, *args: Any) -> Any:
        """``PgBackend.call``, then ``then``."""
        result = await super().call(work, *args)
        if self.then is not None:
            then, self.then = self.then, None
            await then()
        return result


async def test_a_session_taken_over_while_it_opened_keeps_its_new_holders_meta(
    url: str, hosts: list[PgBackend]
) -> None:
    """A claims the session, freezes, B takes it over and starts a run. Before, A's open
    wrote the session's meta in a second transaction, with no holder in its condition:
    waking, A wrote its summary (the run 'interrupted', itself the holder) over B's, which
    listings showed until B's next append."""
    import psycopg

    frozen = FrozenAfterACall(StoreAddress(url, "the test"), heartbeat=3600, stale_after=0.2)
    hosts.append(frozen)
    taker = host(hosts, url, stale_after=0.2)
    a, b = of_backend(frozen), of_backend(taker)
    await a.store.create(record("opened1"))
    await a.store.append("opened1", run_events())
    await a.store.release("opened1")

    async def take_over_and_run() -> None:
        await _take_over(b, "opened1")
        await b.store.append("opened1", [ev.RunStarted(at=1002.0, run_id="r2", prompt="go")])

    frozen.then = take_over_and_run
    await a.store.open("opened1")
    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT holder, meta::jsonb->>'holder', meta::jsonb->>'status' FROM rho_sessions"
            " WHERE id = 'opened1'"
        ).fetchone()
    assert row == (taker.holder, taker.holder, "running"), row
    await b.store.release("opened1")


async def test_export_from_postgres_is_the_file_trace_byte_for_byte(
    url: str, hosts: list[PgBackend], tmp_path: Path
) -> None:
    pg = of_backend(host(hosts, url))
    files = FileSessionStore(tmp_path / "sessions")
    events: list[ev.Event] = [
        *run_events('naïve \u2028 "quoted" \\ tab\t nul\x00 emoji 🦀'),
        ev.RunEnded(at=1002.0, run_id="r1", status=RunStatus.COMPLETED),
    ]
    for store in (pg.store, files):
        await store.create(record("same1"))
        await store.append("same1", events[:2])
        await store.append("same1", events[2:])
        await store.release("same1")
    exported = b"".join(line.data + b"\n" for line in await pg.sessions.trace("same1"))
    assert exported == (tmp_path / "sessions" / "same1" / "trace.jsonl").read_bytes()
    _, back = await pg.store.open("same1")
    assert back == tuple(events)
    await pg.store.release("same1")


async def test_a_cancel_from_another_process_arrives_by_its_notification(
    url: str, hosts: list[PgBackend]
) -> None:
    """Five cancels sent by another process, the first right after it connected, each when
    the test names its session: the run's waiter wakes on the notification, not on the slow
    recheck (``RECHECK_SECONDS`` after it began to wait). Each delay is printed: a few ms
    idle; the bound is half the recheck, so the verdict is the mechanism's, not the load's
    (a median of 144 ms was read at a load of 12, against 100 ms asked before). One
    process sends all five (it was one process each: ~0.4 s of CPU apiece to import and
    connect)."""
    pg = of_backend(host(hosts, url))
    sender = textwrap.dedent(
        f"""
        import asyncio, sys, time
        from rho_adapters.pgstore import postgres_store
        async def main():
            sessions = postgres_store({url!r}, origin="the test").sessions
            await sessions.sessions(limit=1)  # connected and the schema checked
            print("ready", flush=True)
            for line in sys.stdin:
                session_id = line.strip()
                sent = time.time()
                await sessions.request(session_id, "cancel")
                print(sent, time.time(), flush=True)
        asyncio.run(main())
        """
    )
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        sender,
        env={"PYTHONPATH": str(SRC)},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    assert await proc.stdout.readline() == b"ready\n"
    delays = []
    for i in range(5):
        session_id = f"far{i}"
        await pg.store.create(record(session_id))
        await pg.store.append(session_id, run_events())
        waiting = asyncio.create_task(pg.signals.wait_for_cancel(session_id))
        await asyncio.sleep(0.05)
        assert not waiting.done()
        proc.stdin.write(f"{session_id}\n".encode())
        await asyncio.wait_for(waiting, 10)
        arrived = time.time()
        sent, committed = map(float, (await proc.stdout.readline()).split())
        delays.append(arrived - sent)
        print(f"cancel {i}: committed {committed - sent:.4f} s, woke {arrived - sent:.4f} s")
    proc.stdin.close()
    assert await proc.wait() == 0
    assert sorted(delays)[2] < RECHECK_SECONDS / 2  # a recheck wakes ~5 s after the wait began


async def test_many_sessions_share_a_bounded_pool(url: str, hosts: list[PgBackend]) -> None:
    """More sessions than threads calling the store, more threads than the pool has
    connections: no more than the pool's size are ever open. The threads are the test's own
    (asyncio's default pool has ``cpu_count() + 4``: 6 on 2 cores, fewer than ``POOL_SIZE``,
    under which an unbounded pool passed too); the pool keeps every connection it opened
    (idle ones are reused, not closed), so ``opened`` at the end is the most ever open."""
    size = 2
    asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(4 * size))
    backend = host(hosts, url, heartbeat=0.2, pool_size=size)
    pg = of_backend(backend)

    async def one(i: int) -> None:
        await pg.store.create(record(f"many{i:03d}"))
        for _ in range(2):
            await pg.store.append(f"many{i:03d}", run_events())
        await pg.store.release(f"many{i:03d}")

    await asyncio.gather(*(one(i) for i in range(40)))
    assert backend.pool.opened <= size
    assert len(await pg.sessions.sessions(limit=1000)) == 40


async def test_passwords_never_reach_an_error(pg_server_url: str, hosts: list[PgBackend]) -> None:
    secret = "s3cr3t-pw"
    bad = pg_server_url.replace("postgres@", f"postgres:{secret}@").rsplit(":", 1)[0] + ":1/rho"
    assert shown_url(bad).count("***") == 1
    backend = host(hosts, bad)
    with pytest.raises(StoreError) as caught:
        await of_backend(backend).sessions.sessions()
    message = str(caught.value)
    assert secret not in message
    assert "postgres:***@127.0.0.1:1/rho" in message
    assert "set by the test" in message
    assert secret not in repr(backend.address)


async def test_a_host_killed_mid_tool_shows_stale_in_bound_and_resumes_elsewhere(
    url: str, hosts: list[PgBackend], tmp_path: Path
) -> None:
    """Host A (a child process) is SIGKILLed in the middle of a tool; host B sees the session
    stale within the stale bound plus a beat, opens it, and runs on with a valid history."""
    from store_support import build_session

    from rho_adapters.fakes import text
    from rho_domain.messages import AssistantMessage, ToolResultMessage
    from rho_domain.state import State

    child = Path(__file__).with_name("store_child.py")
    marker = tmp_path / "marker"
    proc = subprocess.Popen(
        [sys.executable, str(child), url, "kill1", "kill", str(marker)],
        env={"PYTHONPATH": f"{SRC}:{child.parent}"},
        stdout=subprocess.PIPE,
    )
    try:
        b = of_backend(host(hosts, url, heartbeat=0.2, stale_after=1.0))
        deadline = time.monotonic() + 30
        while not marker.exists() or (await b.sessions.info("kill1")).liveness != "running":
            assert time.monotonic() < deadline, "the child's tool never started"
            await asyncio.sleep(0.05)
        await asyncio.sleep(1.5)  # longer than the bound: A's heartbeats keep it running
        assert (await b.sessions.info("kill1")).liveness == "running"
        proc.kill()
        proc.wait()
        killed = time.monotonic()
        while (await b.sessions.info("kill1")).liveness != "stale":
            # a hang bound, not a speed: idle it is 1.0 s stale + a 0.2 s beat at most
            assert time.monotonic() - killed < 30, "the killed host's claim never went stale"
            await asyncio.sleep(0.02)
        noticed = time.monotonic() - killed
        print(f"stale after {noticed:.2f} s (bound: 1.0 s stale + 0.2 s beat)")
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    record, events = await b.store.open("kill1")
    state = State.from_events(events)
    assert (state.usage.input_tokens, state.usage.output_tokens) == (10, 2)
    interrupted = state.messages[-1]
    assert isinstance(interrupted, ToolResultMessage)
    assert (interrupted.call_id, interrupted.is_error) == ("call_block", True)
    session = build_session(
        [text("recovered", input_tokens=4, output_tokens=1)],
        store=b.store,
        signals=b.signals,
        session_id=record.id,
        state=state,
        created=True,
        config=record.config,
    )
    assert (await session.run("carry on")).ok
    await session.close()
    _, again = await b.sessions.recording("kill1")
    final = State.from_events(again)
    calls = {c.id for m in final.messages if isinstance(m, AssistantMessage) for c in m.tool_calls}
    answered = {m.call_id for m in final.messages if isinstance(m, ToolResultMessage)}
    assert calls == answered == {"call_block"}  # no orphan tool call
    assert final.status == "completed"


async def test_an_append_cancelled_while_its_statement_waits_raises_the_statements_failure(
    url: str, hosts: list[PgBackend]
) -> None:
    """A cancelled append has taken its lines (the port's contract), unless its statement,
    which goes on in its thread, fails: then none were taken, and the failure is what the
    caller gets, so the journal appends them again. The statement is held on the session's
    row by another connection, which takes the claim away while it waits."""
    import psycopg

    a = of_backend(host(hosts, url))
    await a.store.create(record("held1"))
    with (
        psycopg.connect(as_a_host(url), autocommit=False) as other,
        psycopg.connect(url, autocommit=True) as watcher,  # a snapshot per statement
    ):
        other.execute("SELECT 1 FROM rho_sessions WHERE id = 'held1' FOR UPDATE")
        appending = asyncio.ensure_future(a.store.append("held1", run_events()))
        deadline = time.monotonic() + 30
        while not watcher.execute(  # the append's UPDATE waits for the row
            "SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE %s",
            ("%rho_events%",),
        ).fetchall():
            assert time.monotonic() < deadline, "the append never reached the locked row"
            await asyncio.sleep(0.02)
        appending.cancel()
        await asyncio.sleep(0.05)
        assert not appending.done()  # it waits for its statement, not just for the thread
        other.execute("UPDATE rho_sessions SET holder = 'another host' WHERE id = 'held1'")
        other.commit()
    with pytest.raises(SessionLocked, match="its events were not written"):
        await appending
    assert await a.sessions.trace("held1") == ()


def test_a_store_connection_prepares_no_statement_a_pooler_would_lose(
    url: str, hosts: list[PgBackend]
) -> None:
    """psycopg prepares a statement on the server after its fifth run; behind a
    transaction-mode pooler (PgBouncer ``pool_mode=transaction``) the next run may reach
    another server connection, which has no such statement: 'prepared statement "_pg3_0"
    does not exist' in a claim or an append. The store's connections prepare none."""
    backend = host(hosts, url)
    with backend.pool.connection() as conn:
        for _ in range(8):
            conn.execute("SELECT %s::text = 'x'", ("none",))
        assert conn.execute("SELECT count(*) FROM pg_prepared_statements").fetchone()[0] == 0


async def test_a_beat_edited_into_the_future_holds_no_session(
    url: str, hosts: list[PgBackend]
) -> None:
    """A beat is the server's ``now()``: one edited to 'infinity' (or a year ahead) by a peer
    with the store's password was alive for ever, so the session listed 'running' and no
    other host could take it over. One more than ``LEASE_MAX_SECONDS`` ahead counts as
    stale."""
    import psycopg

    # the holder beats once an hour: a beat of its own between the edit and the reading
    # would put the beat back to now() (under load the default beat came in between)
    first = of_backend(host(hosts, url, heartbeat=3600))
    await first.store.create(record("fut1"))
    await first.store.append("fut1", run_events())
    second = of_backend(host(hosts, url))
    for beat in ("'infinity'", "now() + interval '1 year'"):
        with psycopg.connect(as_a_host(url)) as conn:
            conn.execute(f"UPDATE rho_sessions SET beat = {beat} WHERE id = 'fut1'")
        assert (await second.sessions.info("fut1")).liveness == "stale", beat
    await second.store.open("fut1")  # taken over, as a stale claim is
    await second.store.release("fut1")
