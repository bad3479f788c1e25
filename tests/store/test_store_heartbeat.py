"""One heartbeat thread for every open session of a process, beating even while the event
loop is blocked; no thread at all once the last session is released.

Waits here are for a condition (a newer heartbeat on disk), never for a duration.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from pathlib import Path

from rho_adapters.store import FileSessionStore
from rho_domain.config import AgentConfig
from rho_domain.ports.store import SessionRecord


def record(session_id: str) -> SessionRecord:
    return SessionRecord(id=session_id, created_at=time.time(), config=AgentConfig())


def beat_of(store: FileSessionStore, session_id: str) -> float:
    return float(json.loads((store.root / session_id / "meta.json").read_bytes())["heartbeat"])


def wait_for(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + 10  # a bound on a hang, not a speed assertion
    while not condition():
        assert time.monotonic() < deadline, f"never happened: {what}"
        time.sleep(0.01)


def own_threads() -> int:
    """Threads besides the event loop's worker pool (which blocking file calls use, and
    which is bounded by its own ``max_workers``)."""
    return sum(1 for t in threading.enumerate() if not t.name.startswith("asyncio_"))


def heartbeat_threads() -> int:
    return sum(1 for t in threading.enumerate() if t.name.startswith("rho-heartbeat"))


async def test_fifty_open_sessions_share_one_heartbeat_thread(tmp_path: Path) -> None:
    from rho_adapters.store.heartbeat import HEARTBEATS

    # The schedule is the process's: a session another test left open (same xdist worker)
    # keeps the thread alive, so this test counts its own members; that the thread ends with
    # the last member is the private-schedule test below.
    others = HEARTBEATS.sessions
    store = FileSessionStore(tmp_path / "sessions", heartbeat=0.05)
    await store.create(record("s0"))  # the store's worker thread exists from here on
    before = own_threads()
    for index in range(1, 50):
        await store.create(record(f"s{index}"))
    assert own_threads() == before  # not one thread more for 49 more sessions
    assert heartbeat_threads() == 1
    first, last = beat_of(store, "s0"), beat_of(store, "s49")
    wait_for(lambda: beat_of(store, "s0") > first and beat_of(store, "s49") > last, "beats")
    assert HEARTBEATS.sessions == others + 50
    for index in range(50):
        await store.release(f"s{index}")
    assert HEARTBEATS.sessions == others
    if not others:
        wait_for(lambda: not HEARTBEATS.running, "the heartbeat thread ends with the last session")
        assert heartbeat_threads() == 0


async def test_beats_continue_while_the_event_loop_is_blocked(tmp_path: Path) -> None:
    store = FileSessionStore(tmp_path / "sessions", heartbeat=0.05)
    await store.create(record("busy"))
    first = beat_of(store, "busy")
    # A long synchronous tool would block the loop like this; liveness must not depend on it.
    wait_for(lambda: beat_of(store, "busy") > first + 0.05, "a beat while the loop is blocked")
    await store.release("busy")
    assert json.loads((store.root / "busy" / "meta.json").read_bytes())["heartbeat"] is None


def test_a_removed_member_is_not_beaten_again_and_a_failing_one_does_not_stop_the_rest() -> None:
    from rho_adapters.store.heartbeat import Heartbeats

    beats = Heartbeats()
    calls: dict[str, int] = {"ok": 0, "bad": 0, "gone": 0}

    class Member:
        def __init__(self, name: str) -> None:
            self.name = name

        def beat(self) -> None:
            calls[self.name] += 1
            if self.name == "bad":
                raise OSError("disk full")

    ok, bad, gone = Member("ok"), Member("bad"), Member("gone")
    for member in (ok, bad, gone):
        beats.add(member, 0.01)
    beats.remove(gone)
    after_remove = calls["gone"]
    wait_for(lambda: calls["ok"] >= 3 and calls["bad"] >= 3, "beats despite a failing member")
    assert calls["gone"] == after_remove
    beats.remove(ok)
    beats.remove(bad)
    wait_for(lambda: not beats.running, "the thread ends when nobody is left")
