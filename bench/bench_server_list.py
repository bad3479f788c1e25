"""The dashboard's poll: GET /api/sessions over a file store of N sessions (each a 3-round
trace, 24 lines), in process (the server's app, httpx's ASGI transport): the first list (every
trace read once) and the next polls (nothing new), all N rows, then 100.

Usage: python bench/bench_server_list.py [N]   (default 1000; the sources PYTHONPATH names)
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "server"))
sys.path.insert(0, str(HERE))
from bench_resume import round_events  # noqa: E402
from server_support import app_for, client_for, place  # noqa: E402

from rho_adapters.store import FileSessionStore  # noqa: E402
from rho_domain import events as ev  # noqa: E402
from rho_domain.config import AgentConfig  # noqa: E402
from rho_domain.messages import UserMessage  # noqa: E402
from rho_domain.ports.store import SessionRecord  # noqa: E402
from rho_domain.run import RunStatus  # noqa: E402


async def list_polls(n: int) -> None:
    """Write ``n`` sessions, then time the first list and the polls after it."""
    with tempfile.TemporaryDirectory() as tmp:
        where = place(Path(tmp))
        store = FileSessionStore(where.sessions)
        for i in range(n):
            sid = f"s{i:05d}"
            await store.create(
                SessionRecord(
                    id=sid,
                    created_at=1000.0 + i,
                    config=AgentConfig(working_dir=str(where.work.resolve())),
                )
            )
            events: list[ev.Event] = [
                ev.RunStarted(at=1.0, run_id="r", prompt="go"),
                ev.MessageAdded(at=1.0, message=UserMessage("go")),
            ]
            for n in range(3):
                events += round_events(n)
            events.append(ev.RunEnded(at=9.0, run_id="r", status=RunStatus.COMPLETED))
            await store.append(sid, events)
            await store.release(sid)
        app = app_for(where, None)
        async with client_for(app) as client:
            for label in ("first", "poll", "poll", "poll"):
                t0 = time.perf_counter()
                r = await client.get("/api/sessions", params={"limit": n})
                assert r.status_code == 200, r.text[:300]
                assert len(r.json()["sessions"]) == n
                print(f"{label}: {1000 * (time.perf_counter() - t0):.0f} ms", flush=True)
            t0 = time.perf_counter()
            r = await client.get("/api/sessions", params={"limit": 100})
            print(f"poll, limit 100: {1000 * (time.perf_counter() - t0):.0f} ms")
    print(f"load {os.getloadavg()[0]:.1f}")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sessions", nargs="?", type=int, default=1000)
    asyncio.run(list_polls(parser.parse_args(argv).sessions))


if __name__ == "__main__":
    main()
