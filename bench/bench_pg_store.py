"""The PostgreSQL session store beside the file store, on the same machine.

1. **Append throughput** (events/s): one session, ``--events`` tool-round events appended as a
   session appends them (one ``append`` per event), then in batches of 7 (one tool round).
2. **Resume of a 100,000-event session**: ``store.open`` + ``State.from_events``, best of 3
   (goal: <= 1 s). The trace is bench_resume.py's mix (~243 bytes a line). Beside the wall
   time: this process's CPU time for it (what the machine's load does not stretch), the fold's
   share, and the decoding of the trace's bytes alone (json and the event codec), so where the
   time goes is shown: read or query = open minus decoding.
3. **1,000 concurrent sessions over two servers on one PostgreSQL**: two ``rho-agent serve
   --store postgresql://...`` processes (own config directories, ``max_runs`` = half the
   sessions each) get ``--sessions`` POSTs alternately, against the loopback model server
   (bench_sessions.py's: a ``list`` tool call, then a streamed answer, over real HTTP). All
   must complete; reported: wall time, and the PostgreSQL connections used
   (``pg_stat_activity``, sampled every 50 ms: the peak).

PostgreSQL is started in a temporary directory (tests/db's rig, with fsync turned back on, as a
production server runs) unless ``--url`` names one.

Usage: python bench/bench_pg_store.py [--events 20000] [--sessions 1000] [--url URL]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests" / "db"))

from bench_resume import round_events  # noqa: E402

from rho_adapters.codec import encode_event_line  # noqa: E402
from rho_adapters.pgstore import PgBackend, StoreAddress, of_backend  # noqa: E402
from rho_adapters.store import FileSessionStore, parse_trace  # noqa: E402
from rho_domain import events as ev  # noqa: E402
from rho_domain.config import AgentConfig  # noqa: E402
from rho_domain.messages import UserMessage  # noqa: E402
from rho_domain.ports.store import SessionRecord, SessionStore  # noqa: E402
from rho_domain.run_status import RunStatus  # noqa: E402
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
        out.append(ev.RunEnded(at=float(i), run_id=f"r{i}", status=RunStatus.COMPLETED))
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


async def resume_seconds(
    store: SessionStore, session_id: str, repeat: int = 3
) -> tuple[float, float, float]:
    """Best of ``repeat``: (wall seconds of open + fold, this process's CPU seconds for them
    (all its threads: what the machine's load does not stretch), of which the fold)."""
    best = (float("inf"), 0.0, 0.0)
    for _ in range(repeat):
        started, cpu = time.perf_counter(), time.process_time()
        _, events = await store.open(session_id)
        folding = time.process_time()
        State.from_events(events)
        wall = time.perf_counter() - started
        if wall < best[0]:
            done = time.process_time()
            best = (wall, done - cpu, done - folding)
        await store.release(session_id)
    return best


def parse_cpu_seconds(trace: bytes, repeat: int = 3) -> float:
    """CPU seconds to decode the trace's bytes into events (best of ``repeat``), as both stores'
    ``open`` decode them (PostgreSQL's lines arrive as one text and are parsed the same way)."""
    best = float("inf")
    for _ in range(repeat):
        cpu = time.process_time()
        parse_trace(trace)
        best = min(best, time.process_time() - cpu)
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
            wall, cpu, fold = await resume_seconds(store, f"big-{name}")
            out[f"resume_{name}"] = wall
            out[f"resume_{name}_cpu"] = cpu
            out[f"resume_{name}_fold_cpu"] = fold
        trace = (Path(tmp) / "sessions" / "big-file" / "trace.jsonl").read_bytes()
        out["resume_parse_cpu"] = parse_cpu_seconds(trace)
        lines = await of_backend(backend).sessions.trace("big-postgres")
        same = b"".join(line.data + b"\n" for line in lines) == trace
        out["resume_bytes"] = len(trace)
        out["export_equal"] = same
        assert encode_event_line(big[0]) == trace.split(b"\n", 1)[0] + b"\n"
    backend.close()
    return out


def start_serve(
    url: str, base_url: str, home: Path, workdir: str, runs: int
) -> tuple[subprocess.Popen[str], str]:
    """``rho-agent serve --store URL`` on a free port, its own config directory; its URL."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        # the sources run, and where their bytecode is kept
        **{k: os.environ[k] for k in ("PYTHONPATH", "PYTHONPYCACHEPREFIX") if k in os.environ},
        "HOME": str(home),
        "RHO_AGENT_HOME": str(home),
        "OPENAI_BASE_URL": base_url,
        "OPENAI_API_KEY": "sk-bench",
        "RHO_AGENT_MODEL": "fake-model",
        "RHO_AGENT_SERVER_TOKEN": TOKEN,
        "RHO_AGENT_SERVER_MAX_RUNS": str(runs),
    }
    child = subprocess.Popen(
        [sys.executable, "-m", "rho_entry", "serve", "--port", "0", "--store", url],
        cwd=workdir,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stderr is not None
    line = child.stderr.readline()
    found = re.search(r"listening on (http://127\.0\.0\.1:\d+)", line)
    assert found, line
    return child, found.group(1)


TOKEN = "bench-token"


async def post_all(servers: list[str], n: int) -> None:
    import httpx

    headers = {"Authorization": f"Bearer {TOKEN}"}
    gate = asyncio.Semaphore(64)
    async with httpx.AsyncClient(timeout=120) as client:

        async def one(i: int) -> None:
            async with gate:
                answer = await client.post(
                    f"{servers[i % 2]}/api/sessions",
                    json={"prompt": "What is here?"},
                    headers=headers,
                )
                answer.raise_for_status()

        await asyncio.gather(*(one(i) for i in range(n)))


def part_three(url: str, sessions: int) -> dict[str, object]:
    import psycopg
    from loopback_agent_server import start_server

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

    def completed() -> int:
        with psycopg.connect(url) as conn:
            row = conn.execute(
                "SELECT count(*) FROM rho_sessions WHERE meta::json->>'status' = 'completed'"
                " AND labels::json->>'origin' = 'server'"
            ).fetchone()
        return int(row[0]) if row else 0

    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp) / "work"
        workdir.mkdir()
        for i in range(20):
            (workdir / f"file{i}.txt").write_text("x\n")
        serves = [
            start_serve(url, base_url, Path(tmp) / f"home{i}", str(workdir), sessions // 2)
            for i in range(2)
        ]
        before = completed()
        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        started = time.perf_counter()
        asyncio.run(post_all([u for _, u in serves], sessions))
        posted = time.perf_counter() - started
        deadline = time.monotonic() + 900
        while (done := completed() - before) < sessions and time.monotonic() < deadline:
            time.sleep(0.2)
        wall = time.perf_counter() - started
        stop.set()
        sampler.join()
        for child, _ in serves:
            child.send_signal(signal.SIGTERM)
            child.wait(60)
    server.terminate()
    return {
        "wall_s": wall,
        "posted_s": posted,
        "completed": done,
        "peak_pg_connections": max(samples, default=0),
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--resume-events", type=int, default=100_000)
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--url")
    args = parser.parse_args(argv)
    print("load average at start: {:.1f} {:.1f} {:.1f}".format(*os.getloadavg()))
    with postgres(args.url) as url:
        one = asyncio.run(part_one_two(url, args.events, args.resume_events))
        for key, value in one.items():
            print(f"{key}: {value:.3f}" if isinstance(value, float) else f"{key}: {value}")
        three = part_three(url, args.sessions)
        print(json.dumps(three, indent=2))
    print("load average at end: {:.1f} {:.1f} {:.1f}".format(*os.getloadavg()))


if __name__ == "__main__":
    main()
