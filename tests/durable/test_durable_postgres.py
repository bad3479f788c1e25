"""Durable runs on PostgreSQL (started by the test, as tests/db does): two worker processes
consume one queue; 200 runs are enqueued; one worker is SIGKILLed mid-way; the other
recovers its runs through the stale heartbeat, and all 200 complete exactly once, in a
bounded time."""

from __future__ import annotations

import asyncio
import importlib.util
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "db"))  # the tests/db rig
from db_servers import running_postgres
from db_support import Server
from durable_support import (
    Worker,
    answer,
    requests_by_step,
    scripted,
    trace,
    wait_for,
)

from rho_adapters.fakes.loopback import LoopbackServer
from rho_adapters.fakes.wire import call, tool_reply
from rho_domain.ports.durable import QueuedRun
from rho_domain.run import new_id
from rho_entry.durable.queueing import open_queue

if importlib.util.find_spec("dbos") is None:  # found, not imported: dbos costs 0.65 s
    pytest.skip("the durable extra (dbos) is not installed", allow_module_level=True)

RUNS = 200
BOUND = 120.0  # seconds from the first enqueue to the last run's end (13.5 s measured on 2 cores)
SCRIPTS = {"pg": [tool_reply(call("list", {"path": "."}, "p1")), answer("done")]}


@pytest.fixture(scope="module")
def postgres(pytestconfig: pytest.Config) -> Iterator[Server]:
    # a cluster of its own: on the process's shared one (a database of its own), one of the
    # 200 runs once ended in error in a full run at load 19 (docs/testing.md), not understood
    with running_postgres(getattr(pytestconfig, "cache", None)) as server:
        yield server


def test_two_workers_200_runs_one_killed_all_complete_exactly_once(
    tmp_path: Path, postgres: Server
) -> None:
    config = postgres.config
    db = f"postgresql://{config.user}@{config.host}:{config.port}/{config.database}"
    store = tmp_path / "store"
    with LoopbackServer([], rules=[scripted(SCRIPTS)]) as model:
        workers = [
            Worker(tmp_path, name, db=db, base_url=model.base_url, concurrency=8)
            for name in ("worker-a", "worker-b")
        ]
        try:
            for worker in workers:
                worker.wait_ready()
            runs = [
                QueuedRun(run_id=new_id(), session_id=new_id(), prompt=f"pg: run {i}")
                for i in range(RUNS)
            ]
            started = time.monotonic()

            async def enqueue_all() -> None:
                queue = open_queue(db)
                try:
                    for run in runs:
                        await queue.enqueue(run)
                finally:
                    queue.close()

            asyncio.run(enqueue_all())

            done: set[str] = set()

            def ended() -> int:
                """Runs ended so far; a run seen ended is not read again (a poll of every
                trace, 50 times a second, was a busy loop over up to 200 files), and a trace
                is parsed only once its bytes name a ``run_end``."""
                for run in runs:
                    path = store / run.session_id / "trace.jsonl"
                    if (
                        run.session_id not in done
                        and path.exists()
                        and b"run_end" in path.read_bytes()
                        and any(e["kind"] == "run_end" for e in trace(store, run.session_id))
                    ):
                        done.add(run.session_id)
                return len(done)

            # polled every 0.2 s, not 20 ms: each poll looks at every trace not yet ended (up
            # to 200; 1.44 -> 1.05 s of the test process's CPU); the two workers end 15-30
            # runs a second, so the kill comes at most 6 runs later, with some 140 to go
            wait_for(lambda: ended() >= RUNS // 4, "a quarter", timeout=BOUND, every=0.2)
            workers[0].kill()
            wait_for(lambda: ended() == RUNS, "every run", timeout=BOUND, every=0.2)
            took = time.monotonic() - started
        finally:
            for worker in workers:
                worker.stop()
        requests = requests_by_step(model.requests)
    assert took < BOUND
    for run in runs:
        events = trace(store, run.session_id)
        ends = [e["status"] for e in events if e["kind"] == "run_end"]
        starts = [e["run_id"] for e in events if e["kind"] == "run_start"]
        assert (ends, starts) == (["completed"], [run.run_id]), evidence(run, events, tmp_path, db)
        assert [e["call_index"] for e in events if e["kind"] == "llm_end"] == [1, 2]
        assert len([e for e in events if e["kind"] == "tool_end"]) == 1
        # a completed model call is never sent again; only the one a death interrupted may be
        sent = [requests.get((run.prompt or "", step), 0) for step in (0, 1)]
        assert all(1 <= n <= 2 for n in sent), (run, sent)
    resent = sum(n - 1 for n in requests.values() if n > 1)
    print(f"{RUNS} runs in {took:.1f} s; {resent} interrupted model calls sent again")


def evidence(run: QueuedRun, events: list[dict[str, Any]], tmp: Path, db: str) -> str:
    """What a run that did not end exactly once left: its trace's events (kind, run id, time,
    status), the workers' log lines naming it, and DBOS's record of its workflow (status,
    executor, recovery attempts, steps)."""
    import sqlalchemy as sa

    from rho_adapters.durable.system_db import engine_url

    lines = [f"run {run.run_id} (session {run.session_id}):"]
    first = events[0]["at"] if events else 0.0
    for e in events:
        lines.append(
            f"  +{e['at'] - first:8.3f} {e['kind']:<12} {e.get('run_id', '')} "
            f"{e.get('status', '')} {e.get('call_index', '')}"
        )
    for log in sorted(tmp.glob("*.log")):
        named = [x for x in log.read_text().splitlines() if run.run_id in x or run.session_id in x]
        lines.append(f"  {log.name}: {named or 'nothing about this run'}")
    engine = sa.create_engine(engine_url(db))
    try:
        with engine.connect() as conn:
            for table, key in (
                ("workflow_status", "workflow_uuid"),
                ("operation_outputs", "workflow_uuid"),
            ):
                rows = conn.execute(
                    sa.text(f"SELECT * FROM dbos.{table} WHERE {key} LIKE :id"),
                    {"id": f"{run.run_id}%"},
                ).mappings()
                for row in rows:
                    shown = {k: v for k, v in row.items() if k not in ("inputs", "output")}
                    lines.append(f"  {table}: {shown}")
    except sa.exc.SQLAlchemyError as exc:  # the evidence is a message: a missing table says so
        lines.append(f"  DBOS's tables not read: {exc}")
    finally:
        engine.dispose()
    return "\n".join(lines)


def test_only_dbos_connections_to_the_system_db_commit_without_waiting_for_the_disk(
    postgres: Server,
) -> None:
    import sqlalchemy as sa

    from rho_adapters.durable.heartbeat import Heartbeat
    from rho_adapters.durable.system_db import engine_settings, engine_url

    config = postgres.config
    db = f"postgresql://{config.user}@{config.host}:{config.port}/{config.database}"
    settings = engine_settings(db, concurrency=30)
    assert settings["pool_size"] == 34  # one connection per run at once, and DBOS's own
    dbos_engine = sa.create_engine(engine_url(db), **settings)  # as DBOS creates its own
    beat = Heartbeat(db, "probe", "v", recover=lambda _: 0)
    try:
        with dbos_engine.connect() as conn:
            assert conn.execute(sa.text("SHOW synchronous_commit")).scalar_one() == "off"
        with beat.engine.connect() as conn:  # the heartbeat keeps the server's setting
            assert conn.execute(sa.text("SHOW synchronous_commit")).scalar_one() == "on"
    finally:
        dbos_engine.dispose()
        beat.engine.dispose()
