"""The workers' heartbeat on its own (SQLite system database, no DBOS): a live worker is never
taken for dead, by itself or because asyncio's shared thread pool is busy with runs."""

from __future__ import annotations

import asyncio
import importlib.util
import sqlite3
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from rho_adapters.durable.heartbeat import Heartbeat

if importlib.util.find_spec("sqlalchemy") is None:  # found, not imported (below)
    pytest.skip("the durable extra (sqlalchemy) is not installed", allow_module_level=True)


def _heartbeat(*args: Any, **kwargs: Any) -> Heartbeat:
    """A ``Heartbeat``, imported here: sqlalchemy costs every xdist worker's collection about
    0.15 s of CPU, and only the worker that runs these tests needs it."""
    from rho_adapters.durable.heartbeat import Heartbeat

    return Heartbeat(*args, **kwargs)


def _seen_at(db: Path, executor_id: str) -> float | None:
    with sqlite3.connect(db) as conn:
        row = conn.execute(
            "SELECT seen_at FROM rho_workers WHERE executor_id = ?", (executor_id,)
        ).fetchone()
    return None if row is None else float(row[0])


def test_a_worker_claims_the_others_stale_rows_never_its_own(tmp_path: Path) -> None:
    """Its own row can look old (a beat held back); it is the one asking, so it is alive,
    and recovering its own runs would put runs it is running back on the queue."""
    url = f"sqlite:///{tmp_path / 'system.db'}"
    recovered: list[str] = []

    def recover(executor_id: str) -> int:
        recovered.append(executor_id)
        return 0

    # dead_after < 0: every row is older than the cutoff, the checker's own included
    a = _heartbeat(url, "worker-a", "v1", recover=recover, dead_after=-60)
    b = _heartbeat(url, "worker-b", "v1", recover=recover, dead_after=-60)
    try:
        a.beat()
        b.beat()
        assert a.recover_dead() == ["worker-b"]
        assert recovered == ["worker-b"]
        assert _seen_at(tmp_path / "system.db", "worker-a") is not None  # its row stays
    finally:
        a.engine.dispose()
        b.engine.dispose()


def test_a_worker_is_judged_dead_by_its_own_bound_not_the_askers(tmp_path: Path) -> None:
    """A beats rarely and says so (``dead_after`` 60); B was started with ``--dead-after 1``.
    A's last beat was 5 s ago: alive by its bound, dead by B's. Before, B judged by its own
    bound alone, claimed A's row and put A's running runs back on the queue (run twice). A
    table an earlier version made (no ``dead_after`` column) gets the column on first beat."""
    db = tmp_path / "system.db"
    with sqlite3.connect(db) as conn:  # the table as an earlier version made it
        conn.execute(
            "CREATE TABLE rho_workers (executor_id VARCHAR(200) PRIMARY KEY,"
            " app_version VARCHAR(200) NOT NULL, seen_at FLOAT NOT NULL)"
        )
    recovered: list[str] = []

    def recover(executor_id: str) -> int:
        recovered.append(executor_id)
        return 0

    a = _heartbeat(f"sqlite:///{db}", "worker-a", "v1", recover=recover, dead_after=60)
    b = _heartbeat(f"sqlite:///{db}", "worker-b", "v1", recover=recover, dead_after=1)
    try:
        a.beat()
        b.beat()

        def silent_for(seconds: int) -> None:
            with sqlite3.connect(db) as conn:
                conn.execute(
                    "UPDATE rho_workers SET seen_at = seen_at - ? WHERE executor_id = ?",
                    (seconds, "worker-a"),
                )

        silent_for(5)
        assert b.recover_dead() == []
        assert recovered == []
        silent_for(56)  # past A's own bound too
        assert b.recover_dead() == ["worker-a"]
        assert recovered == ["worker-a"]
        a.beat()  # a bound that is no number of seconds (a hand edit) is not counted
        with sqlite3.connect(db) as conn:
            conn.execute("UPDATE rho_workers SET dead_after = 9e999 WHERE executor_id = 'worker-a'")
        silent_for(5)
        assert b.recover_dead() == ["worker-a"]
    finally:
        a.engine.dispose()
        b.engine.dispose()


async def test_a_worker_row_no_reader_can_count_with_breaks_no_check(tmp_path: Path) -> None:
    """A row holds whatever its writer wrote (a hand edit, a peer with the database's
    password), and SQLite keeps text in a FLOAT column. Before, one row whose ``dead_after``
    was text made every worker's check raise TypeError at every beat, so no dead worker's
    runs were recovered (here ``dead1``'s), and a worker starting under the id of a row
    whose beat was text raised TypeError too. A bound that is no number, 0 or negative
    counts as the asker's own; a beat that is no number is no live worker's."""
    db = tmp_path / "system.db"
    recovered: list[str] = []

    def recover(executor_id: str) -> int:
        recovered.append(executor_id)
        return 0

    me = _heartbeat(f"sqlite:///{db}", "me", "v1", recover=recover, dead_after=1)
    try:
        me.beat()
        with sqlite3.connect(db) as conn:
            conn.executemany(
                "INSERT INTO rho_workers VALUES (?, 'v1', ?, ?)",
                [
                    ("dead1", time.time() - 100, 10.0),
                    ("text1", time.time() - 100, "ten"),
                    ("zero1", time.time() - 100, 0),
                    ("negative1", time.time() - 100, -5),
                    ("zero2", time.time(), 0),  # beating now: alive by the asker's bound
                    ("beat1", "yesterday", 10.0),
                ],
            )
        assert sorted(me.recover_dead()) == ["dead1", "negative1", "text1", "zero1"]
        assert sorted(recovered) == ["dead1", "negative1", "text1", "zero1"]
    finally:
        me.engine.dispose()
    again = _heartbeat(f"sqlite:///{db}", "beat1", "v1", recover=recover)
    await asyncio.to_thread(again.start)  # no live worker has the id: it starts
    await again.stop()


async def test_a_worker_does_not_start_under_the_id_of_a_live_one(tmp_path: Path) -> None:
    """DBOS's launch recovers the runs of its executor id (a restarted worker's). Started
    with the id of a worker that still runs (``--executor-id`` copied to a second host), a
    worker beat and launched, and ran that worker's runs a second time. Now it waits up to
    the live row's bound, sees it beat again, and refuses, naming the id; once that worker
    is gone (silent past its bound: a restart), the same id starts."""
    from rho_domain.errors import ConfigError

    url = f"sqlite:///{tmp_path / 'system.db'}"
    # the live row's bound (2 s: forty beats) is the one ``again`` waits by, the longer of the
    # two: at 0.5 s a live worker's thread starved of the cores for half a second under the
    # suite's load looked dead, and ``again`` started (a fresh clone's CI, round 26)
    live = _heartbeat(url, "worker-a", "v1", recover=lambda _: 0, interval=0.05, dead_after=2.0)
    again = _heartbeat(url, "worker-a", "v1", recover=lambda _: 0, interval=0.05, dead_after=0.5)
    live.start()
    try:
        with pytest.raises(ConfigError, match="executor id 'worker-a' is running"):
            await asyncio.to_thread(again.start)
    finally:
        await live.stop()
    restarted = _heartbeat(url, "worker-a", "v1", recover=lambda _: 0, dead_after=0.5)
    await asyncio.to_thread(restarted.start)  # waits for the stopped one's row to go silent
    await restarted.stop()
    again.engine.dispose()


async def test_beats_go_on_while_the_shared_thread_pool_is_busy(tmp_path: Path) -> None:
    """Every thread of asyncio's default pool blocked (runs in blocking calls): the worker
    still beats, on its own thread. Through the shared pool no beat came until the pool
    freed, past any ``dead_after``."""
    db = tmp_path / "system.db"
    beat = _heartbeat(f"sqlite:///{db}", "worker-a", "v1", recover=lambda _: 0, interval=0.01)
    release = threading.Event()
    # more blocked calls than the default pool has threads (min(32, cores + 4))
    blocked = [asyncio.ensure_future(asyncio.to_thread(release.wait, 60)) for _ in range(40)]
    try:
        beat.start()  # the first beat, before any run
        first = _seen_at(db, "worker-a")
        assert first is not None
        deadline = time.monotonic() + 30  # a beat never coming is the failure, not a speed
        while (_seen_at(db, "worker-a") or 0.0) <= first:
            assert time.monotonic() < deadline, "no beat while the shared pool was busy"
            await asyncio.sleep(0.02)
    finally:
        release.set()
        await asyncio.gather(*blocked)
        await beat.stop()


async def test_beats_go_on_while_the_event_loop_is_blocked(tmp_path: Path) -> None:
    """The loop held (DBOS's launch is synchronous, seconds at a load of 18): the worker
    still beats. As a task of the loop, no beat came until the loop was free again, and the
    other worker took this live one for dead during its own start."""
    db = tmp_path / "system.db"
    beat = _heartbeat(f"sqlite:///{db}", "worker-a", "v1", recover=lambda _: 0, interval=0.01)
    try:
        beat.start()
        first = _seen_at(db, "worker-a")
        assert first is not None
        deadline = time.monotonic() + 30  # blocking on purpose: no await until a beat came
        while (_seen_at(db, "worker-a") or 0.0) <= first:
            assert time.monotonic() < deadline, "no beat while the event loop was blocked"
            time.sleep(0.02)
    finally:
        await beat.stop()


def test_a_worker_recovers_others_only_once_it_watches(tmp_path: Path) -> None:
    """Before DBOS is launched the runs cannot be recovered: a claim then would delete the
    dead worker's row and lose its runs. Beating starts first, watching after the launch."""
    db = tmp_path / "system.db"
    recovered: list[str] = []

    def recover(executor_id: str) -> int:
        recovered.append(executor_id)
        return 0

    # stale at once (its own bound counts, not the asker's): recovered by the first beat
    # that watches, and by none before (with the default 10 s, the three beats below were
    # too early to recover it anyway, and the test waited 10 s for it to go stale)
    dead = _heartbeat(f"sqlite:///{db}", "worker-b", "v1", recover=recover, dead_after=0.001)
    dead.beat()
    dead.engine.dispose()
    beat = _heartbeat(
        f"sqlite:///{db}", "worker-a", "v1", recover=recover, interval=0.01, dead_after=-60
    )

    async def beating() -> None:
        beat.start()
        try:
            seen = _seen_at(db, "worker-a") or 0.0
            for _ in range(3):  # three beats, none of them watching
                deadline = time.monotonic() + 30
                while (now := _seen_at(db, "worker-a") or 0.0) <= seen:
                    assert time.monotonic() < deadline, "no beat"
                    await asyncio.sleep(0.01)
                seen = now
            assert recovered == []
            assert _seen_at(db, "worker-b") is not None  # its row, and so its runs, kept
            beat.watch()
            deadline = time.monotonic() + 30
            while not recovered:
                assert time.monotonic() < deadline, "never recovered once watching"
                await asyncio.sleep(0.01)
            assert recovered == ["worker-b"]
        finally:
            await beat.stop()

    asyncio.run(beating())
