"""Server benchmark: N concurrent sessions, each created and streamed through `rho-agent serve`.

The server is the real `rho-agent serve` in a subprocess (uvicorn, the file store, the runtime,
the real tools), against a local OpenAI-compatible fake model (LoopbackServer, in this
process, on loopback). Each client task sends one `POST /api/sessions` with
`Accept: text/event-stream` (create and stream in one request) and reads the stream until the
session is idle. Each run: a streamed `list` tool call, the tool, then a 20-delta answer.

Reports: time to first event (p50/p99, from sending the POST to the first SSE event), events/s
received by all clients together, wall time, and the server's RSS (peak and at the end).

Usage: python bench/bench_server.py [--sessions 200]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import secrets
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import httpx

from rho_adapters.fakes.loopback import LoopbackServer
from rho_adapters.fakes.wire import call, text_reply, tool_reply

ANSWER = "word " * 40  # 20 deltas


BENCH_TOKEN = secrets.token_urlsafe(32)


def start_server(
    work: Path, home: Path, model_url: str, sessions: int
) -> tuple[subprocess.Popen[str], str]:
    env = {
        # the sources run, and where their bytecode is kept
        **{k: os.environ[k] for k in ("PYTHONPATH", "PYTHONPYCACHEPREFIX") if k in os.environ},
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "RHO_AGENT_HOME": str(home),
        "OPENAI_BASE_URL": model_url,
        "OPENAI_API_KEY": "sk-bench",
        "RHO_AGENT_MODEL": "bench-model",
        "RHO_AGENT_SERVER_MAX_RUNS": str(sessions),
        "RHO_AGENT_SERVER_TOKEN": BENCH_TOKEN,  # every request carries it
    }
    profile = os.environ.get("BENCH_PROFILE")  # a path: the server runs under cProfile
    wrap = ["-m", "cProfile", "-o", profile] if profile else []
    process = subprocess.Popen(
        [sys.executable, *wrap, "-m", "rho_entry", "serve", "--port", "0"],
        cwd=work,
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    line = process.stderr.readline()
    found = re.search(r"listening on (http://\S+?) ", line)
    assert found, line
    return process, found.group(1)


def rss_kib(pid: int) -> tuple[int, int]:
    status = Path(f"/proc/{pid}/status").read_text()
    fields = dict(re.findall(r"^(VmRSS|VmHWM):\s+(\d+) kB", status, re.MULTILINE))
    return int(fields["VmRSS"]), int(fields["VmHWM"])


async def one_session(client: httpx.AsyncClient, firsts: list[float]) -> int:
    started = time.perf_counter()
    events = 0
    async with client.stream(
        "POST",
        "/api/sessions",
        json={"prompt": "What is here?"},
        headers={"Accept": "text/event-stream"},
    ) as response:
        assert response.status_code == 200, await response.aread()
        async for line in response.aiter_lines():
            if line.startswith("event: "):
                if events == 0:
                    firsts.append(time.perf_counter() - started)
                events += 1
                last = line
    assert last == "event: run_end", last
    return events


async def bench(sessions: int) -> dict[str, int | float]:
    replies = [tool_reply(call("list", {"path": "."}, "c1")), text_reply(ANSWER, deltas=20)]
    model = LoopbackServer(replies, repeat=True).start()
    root = Path(tempfile.mkdtemp(prefix="rho-bench-server-"))
    work, home = root / "work", root / "home"
    work.mkdir()
    home.mkdir()
    (work / "README.md").write_text("# bench\n")
    process, url = start_server(work, home, model.base_url, sessions)
    try:
        limits = httpx.Limits(max_connections=sessions + 10)
        auth = {"Authorization": f"Bearer {BENCH_TOKEN}"}
        async with httpx.AsyncClient(
            base_url=url, headers=auth, limits=limits, timeout=600
        ) as client:
            await client.get("/api/sessions")  # warm: imports, first store access
            firsts: list[float] = []
            started = time.perf_counter()
            counts = await asyncio.gather(*(one_session(client, firsts) for _ in range(sessions)))
            wall = time.perf_counter() - started
            listed = (await client.get("/api/sessions", params={"limit": sessions + 1})).json()
        rss, peak = rss_kib(process.pid)
        completed = sum(1 for s in listed["sessions"] if s["status"] == "completed")
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(60)
        model.stop()
        shutil.rmtree(root, ignore_errors=True)
    firsts.sort()
    return {
        "sessions": sessions,
        "completed": completed,
        "events": sum(counts),
        "wall_s": wall,
        "events_per_s": sum(counts) / wall,
        "first_event_p50_ms": 1000 * statistics.median(firsts),
        "first_event_p99_ms": 1000 * firsts[min(len(firsts) - 1, int(0.99 * len(firsts)))],
        "server_rss_mib": rss / 1024,
        "server_peak_rss_mib": peak / 1024,
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=200)
    args = parser.parse_args(argv)
    result = asyncio.run(bench(args.sessions))
    for key, value in result.items():
        print(f"{key:>22}: {value:.1f}" if isinstance(value, float) else f"{key:>22}: {value}")


if __name__ == "__main__":
    main()
