"""Durable runs on SQLite: a worker SIGKILLed inside a tool call; another worker, started
afterwards, recovers the run through the dead worker's stale heartbeat and finishes it.
The fake model's request log shows each completed model call once; the call the worker died
in is run again when it reads, and answered "interrupted" when it writes."""

from __future__ import annotations

import asyncio
import importlib.util
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from durable_support import (
    Worker,
    answer,
    bash,
    requests_by_step,
    rho_here,
    scripted,
    started,
    tool_result,
    trace,
    wait_for,
)

from rho_adapters.fakes.loopback import LoopbackServer
from rho_adapters.fakes.wire import call, tool_reply
from rho_domain.not_run import DIED
from rho_entry.durable.queueing import enqueue_prompt, open_queue

if importlib.util.find_spec("dbos") is None:  # found, not imported: dbos costs 0.65 s
    pytest.skip("the durable extra (dbos) is not installed", allow_module_level=True)

SCRIPTS = {
    # readonly: a listing, then a read that waits for the test (a FIFO), then the answer
    "read": [
        tool_reply(call("list", {"path": "."}, "r1")),
        bash("cat wait.fifo", "r2"),
        answer("the read was done again"),
    ],
    # eval: a listing, then a slow write, then the answer
    # the same script with and without durability
    "same": [
        tool_reply(call("list", {"path": "."}, "s1")),
        answer("listed"),
    ],
    "write": [
        tool_reply(call("list", {"path": "."}, "w1")),
        bash("sleep 4 && echo ran >> ran.txt", "w2"),
        answer("the write was not done twice"),
    ],
}


@pytest.fixture(scope="module")
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer([], rules=[scripted(SCRIPTS)]) as running:
        yield running


def enqueue(db: str, prompt: str) -> tuple[str, str]:
    async def put() -> tuple[str, str]:
        queue = open_queue(db)
        try:
            run = await enqueue_prompt(queue, prompt)
        finally:
            queue.close()
        return run.run_id, run.session_id

    return asyncio.run(put())


def status(db: str, run_id: str, timeout: float) -> str:
    async def wait() -> str:
        queue = open_queue(db)
        try:
            return await queue.wait(run_id, timeout)
        finally:
            queue.close()

    return asyncio.run(wait())


def crash_inside_tool(
    tmp_path: Path,
    server: LoopbackServer,
    prompt: str,
    call_id: str,
    profile: str,
    then: Callable[[], None] = lambda: None,
) -> tuple[list[dict[str, Any]], str, str]:
    """Run ``prompt`` on worker A, SIGKILL A once ``call_id`` started, let B finish it
    (``then`` is called once B is ready)."""
    db = str(tmp_path / "runs.sqlite")
    first = Worker(tmp_path, "worker-a", db=db, base_url=server.base_url, profile=profile)
    try:
        first.wait_ready()
        run_id, session_id = enqueue(db, prompt)
        store = tmp_path / "store"
        wait_for(lambda: started(trace(store, session_id), call_id), f"{call_id} to start")
        first.kill()
    finally:
        first.stop()
    # A is dead before B starts: B, the only live worker, has no live peer to take for dead,
    # so its window is short (--dead-after 2 waited 2 s for a row known to be stale), and
    # it beats within it (a --heartbeat not shorter than its --dead-after is refused)
    second = Worker(
        tmp_path,
        "worker-b",
        db=db,
        base_url=server.base_url,
        profile=profile,
        extra=("--heartbeat", "0.25", "--dead-after", "0.5"),
    )
    try:
        second.wait_ready()
        then()
        assert status(db, run_id, timeout=40) == "completed"
    finally:
        second.stop()
    return trace(tmp_path / "store", session_id), run_id, second.log.read_text()


def fifo_feeder(fifo: Path, line: bytes) -> tuple[threading.Thread, threading.Event]:
    """Make ``fifo`` (the workspace's) and a thread, not started, that writes ``line`` to
    each reader who opens it, until the event it returns is set."""
    fifo.parent.mkdir()
    os.mkfifo(fifo)
    fed = threading.Event()

    def feed() -> None:
        while not fed.is_set():
            try:
                pipe = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:  # no reader yet
                time.sleep(0.05)
                continue
            os.write(pipe, line)
            os.close(pipe)
            time.sleep(0.05)

    return threading.Thread(target=feed, daemon=True), fed


def test_a_read_the_worker_died_in_is_run_again_and_no_model_call_twice(
    tmp_path: Path, server: LoopbackServer
) -> None:
    # Every reader gets a line, until the run is over: the first may be the dead worker's
    # `cat`, which its sandbox takes down a moment after the worker died.
    feeder, fed = fifo_feeder(tmp_path / "work" / "wait.fifo", b"fed after the crash\n")
    try:
        events, run_id, _ = crash_inside_tool(
            tmp_path, server, "read: look", "r2", "readonly", then=feeder.start
        )
    finally:
        fed.set()
    assert "fed after the crash" in str(tool_result(events, "r2")["content"])  # ran again
    assert not tool_result(events, "r2")["is_error"]
    assert [e["status"] for e in events if e["kind"] == "run_end"] == ["completed"]
    assert [e["run_id"] for e in events if e["kind"] == "run_start"] == [run_id]
    # one request per step: the two the dead worker completed were not sent again
    seen = {k: n for k, n in requests_by_step(server.requests).items() if k[0] == "read: look"}
    assert seen == {("read: look", 0): 1, ("read: look", 1): 1, ("read: look", 2): 1}
    assert [e["call_index"] for e in events if e["kind"] == "llm_end"] == [1, 2, 3]
    final = next(e for e in events if e["kind"] == "run_end")
    assert final["text"] == "the read was done again"


def _drop_beats(db: str, executor_id: str) -> None:
    """From now on the beats of ``executor_id`` change nothing: its row keeps its last."""
    with sqlite3.connect(db) as conn:
        for op in ("UPDATE", "INSERT"):
            conn.execute(
                f"CREATE TRIGGER lost_{op.lower()} BEFORE {op} ON rho_workers"
                f" WHEN NEW.executor_id = '{executor_id}' BEGIN SELECT RAISE(IGNORE); END"
            )


def test_a_run_taken_from_a_live_worker_ends_once_completed(
    tmp_path: Path, server: LoopbackServer
) -> None:
    """Worker A's beats stop arriving while it runs the read (a cut between it and the
    heartbeat table: triggers drop its writes to its row), so B takes it for dead while A
    still runs: the run is handed to another execution (B's, or A's own again) while A's
    goes on. A's execution, refused when it records the read's step, stops without writing
    (it wrote its run_end in error, which the owner's retrace then met); the owner waits for
    the session, retraces what A wrote, runs the read again and ends the run, once. (Before,
    A beat every 60 s against its own --dead-after of 2, which is now refused; a SIGSTOP
    froze A inside a write of the SQLite file, which then held B back too.)"""
    # a line for every reader (A's read, then the owner's), until the end
    feeder, fed = fifo_feeder(tmp_path / "work" / "wait.fifo", b"fed once handed over\n")
    db = str(tmp_path / "runs.sqlite")
    store = tmp_path / "store"
    first = Worker(tmp_path, "worker-a", db=db, base_url=server.base_url)
    second: Worker | None = None
    try:
        first.wait_ready()
        run_id, session_id = enqueue(db, "read: handed over")
        wait_for(lambda: started(trace(store, session_id), "r2"), "r2 to start")
        _drop_beats(db, "worker-a")  # mid-read: no beat comes from A now
        second = Worker(tmp_path, "worker-b", db=db, base_url=server.base_url).wait_ready()
        log = second.log
        wait_for(lambda: "worker-a stopped beating" in log.read_text(), "A taken for dead")
        feeder.start()  # A's read ends now: the run is no longer A's execution's
        assert status(db, run_id, timeout=60) == "completed"
    finally:
        fed.set()
        first.stop()
        if second is not None:
            second.stop()
    events = trace(store, session_id)
    assert [e["status"] for e in events if e["kind"] == "run_end"] == ["completed"]
    assert [e["run_id"] for e in events if e["kind"] == "run_start"] == [run_id]
    assert "fed once handed over" in str(tool_result(events, "r2")["content"])


def test_a_write_the_worker_died_in_is_answered_interrupted_not_run_twice(
    tmp_path: Path, server: LoopbackServer
) -> None:
    events, run_id, _ = crash_inside_tool(tmp_path, server, "write: change", "w2", "eval")
    with sqlite3.connect(tmp_path / "runs.sqlite") as db:
        # recovered onto the named queue (DBOS keeps a queued workflow's queue), so its
        # concurrency limit counts the run, not onto DBOS's internal queue, which has none
        rows = db.execute(
            "SELECT queue_name, executor_id, status FROM workflow_status WHERE workflow_uuid = ?",
            (run_id,),
        ).fetchall()
    assert rows == [("rho-runs", "worker-b", "SUCCESS")]
    result = tool_result(events, "w2")
    assert result["content"] == DIED
    assert result["is_error"]
    assert result["metadata"] == {"interrupted": True}
    assert tool_result(events, "w1")["content"]  # the listing finished before the crash
    messages = [e["message"] for e in events if e["kind"] == "message"]
    assert [m.get("content") for m in messages if m.get("call_id") == "w2"] == [DIED]
    seen = {k: n for k, n in requests_by_step(server.requests).items() if k[0] == "write: change"}
    assert seen == {("write: change", 0): 1, ("write: change", 1): 1, ("write: change", 2): 1}
    assert [e["status"] for e in events if e["kind"] == "run_end"] == ["completed"]


_TIMES = frozenset({"at", "duration", "first_output_after", "queue_wait", "run_id"})


def _without_times(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_times(v) for k, v in value.items() if k not in _TIMES}
    if isinstance(value, list):
        return [_without_times(v) for v in value]
    return value


def test_a_durable_run_and_a_plain_run_leave_the_same_trace(
    tmp_path: Path, server: LoopbackServer
) -> None:
    db = str(tmp_path / "runs.sqlite")
    worker = Worker(tmp_path, "worker-same", db=db, base_url=server.base_url)
    try:
        worker.wait_ready()
        run_id, session_id = enqueue(db, "same: list")
        assert status(db, run_id, timeout=40) == "completed"
    finally:
        worker.stop()
    durable = trace(tmp_path / "store", session_id)
    home = tmp_path / "plain-home"
    # the one-shot in this process: its process is tested in tests/cli, its trace here
    rho_here(
        home,
        "same: list",
        cwd=tmp_path / "work",
        RHO_AGENT_BASE_URL=server.base_url,
        RHO_AGENT_MODEL="fake-model",
        OPENAI_API_KEY="k",
    )
    (plain_dir,) = (home / "rho" / "sessions").iterdir()
    plain = trace(plain_dir.parent, plain_dir.name)
    assert [e["kind"] for e in durable] == [e["kind"] for e in plain]
    assert _without_times(durable) == _without_times(plain)


def test_a_worker_of_another_version_is_refused_with_how_to_drain_or_pin(
    tmp_path: Path, server: LoopbackServer
) -> None:
    db = str(tmp_path / "runs.sqlite")

    async def put_old() -> None:
        queue = open_queue(db, version="0.1.0+0123456789ab")
        try:
            await enqueue_prompt(queue, "same: from the old version")
        finally:
            queue.close()

    asyncio.run(put_old())
    worker = Worker(tmp_path, "worker-new", db=db, base_url=server.base_url)
    try:
        assert worker.process.wait(60) == 1
    finally:
        worker.stop()
    said = worker.log.read_text()
    assert "1 unfinished run(s)" in said
    assert "version 0.1.0+0123456789ab" in said
    assert "Drain them with workers of that version" in said
    assert "--application-version 0.1.0+0123456789ab" in said
