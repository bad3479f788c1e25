"""A run cancelled while its ``run_end`` is synced ends once.

A durable worker told to stop (SIGTERM) cancels the runs it still holds; one of them may be
between writing its ``run_end`` line and the fsync that makes it durable. The line is in the
trace: the store took it, so the journal must not write it again when the session closes (a
trace with two ``run_end`` events, both ``completed``, was seen once on main at a load of 7 in
``tests/durable/test_durable_postgres.py``). The fsync of the trace holding ``run_end`` is held
until the test has cancelled the run, so the race is driven, not waited for."""

from __future__ import annotations

import asyncio
import json
import os
import threading
from pathlib import Path

import pytest
from store_support import build_session

from rho_adapters.fakes import text
from rho_adapters.store import FileSessionStore


@pytest.fixture
def end_synced(monkeypatch: pytest.MonkeyPatch) -> tuple[threading.Event, threading.Event]:
    """(entered, go): the first fsync of a trace that holds a ``run_end`` sets ``entered`` and
    waits for ``go`` (the disk being slow exactly then); every other fsync is the real one."""
    entered, go = threading.Event(), threading.Event()
    real = os.fsync

    def held(fd: int) -> None:
        path = Path(os.readlink(f"/proc/self/fd/{fd}"))
        if (
            path.name == "trace.jsonl"
            and not entered.is_set()
            and b'"run_end"' in path.read_bytes()
        ):
            entered.set()
            go.wait(30)
        real(fd)

    monkeypatch.setattr(os, "fsync", held)
    return entered, go


async def test_a_run_cancelled_while_its_end_is_synced_ends_once(
    tmp_path: Path, end_synced: tuple[threading.Event, threading.Event]
) -> None:
    entered, go = end_synced
    store = FileSessionStore(tmp_path)
    session = build_session([text("done")], store=store, session_id="s1")

    async def drive() -> None:  # as the durable runner does: the session closes on the way out
        async with session:
            await session.run("go", run_id="r1")

    running = asyncio.ensure_future(drive())
    try:
        assert await asyncio.to_thread(entered.wait, 30), "the run's end was never synced"
        running.cancel()  # the worker stops: the run is in its run_end's fsync
    finally:
        go.set()
    with pytest.raises(asyncio.CancelledError):
        await running  # the cancellation still reaches the caller
    lines = (tmp_path / "s1" / "trace.jsonl").read_text().splitlines()
    ends = [json.loads(line) for line in lines if '"run_end"' in line]
    assert [(e["run_id"], e["status"]) for e in ends] == [("r1", "completed")]
    _, events = await store.open("s1")  # released on the way out, and readable
    assert [e.kind for e in events][-1] == "run_end"
    await store.release("s1")
