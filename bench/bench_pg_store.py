"""The PostgreSQL session store beside the file store, on the same machine.

1. **Append throughput** (events/s): one session, ``--events`` tool-round events appended as a
   session appends them (one ``append`` per event), then in batches of 7 (one tool round).
2. **Resume of a 100,000-event session**: ``store.open`` + ``State.from_events``, best of 3
   (goal: <= 1 s). The trace is bench_resume.py's mix (~243 bytes a line).
3. **1,000 concurrent sessions over two processes on one PostgreSQL**: each process runs the
   runtime API (``create_runtime(store="postgresql://...")``) with ``--sessions / 2`` sessions
   dispatched at once against the loopback model server (bench_sessions.py's: a ``list`` tool
   call, then a streamed answer, over real HTTP). All must complete; reported: wall time, and
   the PostgreSQL connections used (``pg_stat_activity``, sampled every 50 ms: the peak).

PostgreSQL is started in a temporary directory (tests/db's rig, with fsync turned back on, as a
production server runs) unless ``--url`` names one.

Usage: python bench/bench_pg_store.py [--events 20000] [--sessions 1000] [--url URL]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests" / "db"))

from bench_resume import round_events  # noqa: E402

from rho_adapters.codec import encode_event_line  # noqa: E402
from rho_adapters.pgstore import PgBackend, StoreAddress, of_backend  # noqa: E402
from rho_adapters.store import FileSessionStore  # noqa: E402
from rho_domain import events as ev  # noqa: E402
from rho_domain.config import AgentConfig  # noqa: E402
from rho_domain.messages import UserMessage  # noqa: E402
from rho_domain.ports.store import SessionRecord, SessionStore  # noqa: E402
from rho_domain.state import State  # noqa: E402


@contextlib.contextmanager
def postgres(url: str | None) -> Iterator[str]:
    if url:
        yield url
        return
    import psycopg
    from db_servers import running_postgres

    with running_postgres() as server:
        c = server.config
        url = f"postgresql://{c.user}@{c.host}:{c.port}/{c.database}"
        with psycopg.connect(url, autocommit=True) as conn:  # the rig runs without fsync
            conn.execute("ALTER SYSTEM SET fsync = on")
            conn.execute("SELECT pg_reload_conf()")
        yield url


def trace_events(n: int) -> list[ev.Event]:
    """``n`` events in runs of 20 tool rounds (bench_resume.py's mix)."""
    out: list[ev.Event] = []
    i = 0
    while len(out) < n:
        out += [
            ev.RunStarted(at=float(i), run_id=f"r{i}", prompt="go"),
            ev.MessageAdded(at=float(i), message=UserMessage("go")),
        ]
        for _ in range(20):
            out += round_events(i)
            i += 1
        out.append(ev.RunEnded(at=float(i), run_id=f"r{i}", status="completed"))  # type: ignore[arg-type]
    return out[:n]


def record(session_id: str) -> SessionRecord:
    return SessionRecord(id=session_id, created_at=time.time(), config=AgentConfig())


async def append_rate(store: SessionStore, events: list[ev.Event], batch: int) -> float:
    session_id = f"append{batch}x{time.monotonic_ns()}"
    await store.create(record(session_id))
    started = time.perf_counter()
    for i in range(0, len(events), batch):
        await store.append(session_id, events[i : i + batch])
    seconds = time.perf_counter() - started
    await store.release(session_id)
    return len(events) / seconds


async def resume_seconds(store: SessionStore, session_id: str, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        _, events = await store.open(session_id)
        State.from_events(events)
        best = min(best, time.perf_counter() - started)
        await store.release(session_id)
    return best


async def part_one_two(url: str, n_append: int, n_resume: int) -> dict[str, object]:
    backend = PgBackend(StoreAddress(url, "--url"))
    pg = of_backend(backend).store
    out: dict[str, object] = {}
    with tempfile.TemporaryDirectory() as tmp:
        files = FileSessionStore(Path(tmp) / "sessions")
        events = trace_events(n_append)
        for name, store in (("file", files), ("postgres", pg)):
            out[f"append_1_{name}"] = await append_rate(store, events, 1)
            out[f"append_7_{name}"] = await append_rate(store, events, 7)
        big = trace_events(n_resume)
        for name, store in (("file", files), ("postgres", pg)):
            await store.create(record(f"big-{name}"))
            for i in range(0, len(big), 5000):
                await store.append(f"big-{name}", big[i : i + 5000])
            await store.release(f"big-{name}")
            out[f"resume_{name}"] = await resume_seconds(store, f"big-{name}")
        trace = (Path(tmp) / "sessions" / "big-file" / "trace.jsonl").read_bytes()
        lines = await of_backend(backend).sessions.trace("big-postgres")
        same = b"".join(line.data + b"\n" for line in lines) == trace
        out["resume_bytes"] = len(trace)
        out["export_equal"] = same
        assert encode_event_line(big[0]) == trace.split(b"\n", 1)[0] + b"\n"
    backend.close()
    return out


WORKER = """
import asyncio, json, sys, time
sys.path.insert(0, {bench!r})
from loopback_agent_server import ANSWER
from rho_entry import Agent, AgentConfig
from rho_entry.runtime import close_runtime, create_runtime, dispatch_prompt, start_runtime

async def main(url, base_url, workdir, n):
    agent = Agent(AgentConfig(model="fake-model", base_url=base_url, working_dir=workdir))
    runtime = await start_runtime(create_runtime(agent, store=url, max_concurrent=n, max_queued=n))
    print("ready", flush=True)
    sys.stdin.readline()
    started = time.perf_counter()
    handles = [await dispatch_prompt(runtime, "What is here?") for _ in range(n)]
    results = await asyncio.gather(*(h.wait() for h in handles), return_exceptions=True)
    wall = time.perf_counter() - started
    await close_runtime(runtime)
    ok = sum(1 for r in results if not isinstance(r, BaseException) and r.text == ANSWER)
    from rho_adapters.pgstore.backend import _BACKENDS
    pool = max((b.pool.opened for b in _BACKENDS.values()), default=0)
    print(json.dumps({{"wall_s": wall, "completed": ok, "pool_open": pool}}), flush=True)

asyncio.run(main(*sys.argv[1:4], int(sys.argv[4])))
"""


def part_three(url: str, sessions: int) -> dict[str, object]:
    import psycopg
    from bench_sessions import start_server

    server, base_url = start_server()
    samples: list[int] = []
    stop = threading.Event()

    def sample() -> None:
        with psycopg.connect(url, autocommit=True) as conn:
            while not stop.is_set():
                row = conn.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                    " AND pid <> pg_backend_pid()"
                ).fetchone()
                samples.append(int(row[0]) if row else 0)
                time.sleep(0.05)

    with tempfile.TemporaryDirectory() as workdir:
        for i in range(20):
            (Path(workdir) / f"file{i}.txt").write_text("x\n")
        code = WORKER.format(bench=str(HERE))
        workers = [
            subprocess.Popen(
                [sys.executable, "-c", code, url, base_url, workdir, str(sessions // 2)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )
            for _ in range(2)
        ]
        for w in workers:
            assert w.stdout is not None
            assert w.stdout.readline().strip() == "ready"
        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        started = time.perf_counter()
        for w in workers:
            assert w.stdin is not None
            w.stdin.write("go\n")
            w.stdin.flush()
        reports = [json.loads(w.stdout.readline()) for w in workers if w.stdout is not None]
        wall = time.perf_counter() - started
        for w in workers:
            w.wait()
        stop.set()
        sampler.join()
    server.terminate()
    with psycopg.connect(url) as conn:
        stored = conn.execute("SELECT count(*) FROM rho_sessions").fetchone()
    return {
        "wall_s": wall,
        "completed": sum(r["completed"] for r in reports),
        "per_process": reports,
        "peak_pg_connections": max(samples, default=0),
        "stored_sessions": stored[0] if stored else 0,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--resume-events", type=int, default=100_000)
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--url")
    args = parser.parse_args()
    with postgres(args.url) as url:
        one = asyncio.run(part_one_two(url, args.events, args.resume_events))
        for key, value in one.items():
            print(f"{key}: {value:.3f}" if isinstance(value, float) else f"{key}: {value}")
        three = part_three(url, args.sessions)
        print(json.dumps(three, indent=2))


if __name__ == "__main__":
    main()
