"""The file store's own cost per session: create, a run's start and end, release.

What ``FileSessionStore`` does for each session a service runs once (the runtime's
``new_session=True``), without the model, the tools or the loop's other work: the CPU time
(user + system, all threads: the worker threads do the writes and fsyncs), the wall time of
doing it one session after another, and the fsyncs, counted by file. With 1,000 sessions at
once the disk's fsyncs are shared by the worker threads, and the CPU competes with the event
loop for the cores.

Usage: python bench/bench_store_session.py [--sessions 300] [--against OTHER_SRC]
(``--against``: run the same measure in a child process on another source tree, alternating
round by round; ``--rounds`` of each.)
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rho_adapters.store import FileSessionStore
from rho_domain import events as ev
from rho_domain.config import AgentConfig
from rho_domain.messages import Usage
from rho_domain.ports.store import SessionRecord
from rho_domain.run import RunStatus

if TYPE_CHECKING:
    from _typeshed import FileDescriptorLike

_fsyncs: Counter[str] = Counter()
_real_fsync = os.fsync


def _counting_fsync(fd: FileDescriptorLike) -> None:
    number = fd if isinstance(fd, int) else fd.fileno()
    name = Path(os.readlink(f"/proc/self/fd/{number}")).name
    # meta.json is written unnamed until whole (rho_adapters/unnamed.py: "#INODE (deleted)"
    # in /proc), or as a named ".meta.json.*" temp where the filesystem has no O_TMPFILE
    unnamed = name.startswith("#") and name.endswith(" (deleted)")
    _fsyncs["meta.json" if unnamed or name.startswith(".meta.json.") else name] += 1
    _real_fsync(fd)


async def one_session(store: FileSessionStore, session_id: str, config: AgentConfig) -> None:
    """What the store does for a session that runs once and is closed."""
    usage = Usage(input_tokens=10, output_tokens=5)
    await store.create(SessionRecord(id=session_id, created_at=time.time(), config=config))
    await store.append(session_id, [ev.RunStarted(at=time.time(), run_id="r", prompt="p")])
    await store.append(
        session_id,
        [
            ev.RunEnded(
                at=time.time(),
                run_id="r",
                status=RunStatus.COMPLETED,
                text="done",
                usage=usage,
                session_usage=usage,
            )
        ],
    )
    await store.release(session_id)


async def measure(sessions: int) -> str:
    """One line: CPU and wall ms per session, fsyncs per session by file. ``os.fsync`` counts
    while it runs (and still syncs), and is given back after."""
    os.fsync = _counting_fsync
    try:
        return await _sessions_one_by_one(sessions)
    finally:
        os.fsync = _real_fsync


async def _sessions_one_by_one(sessions: int) -> str:
    with tempfile.TemporaryDirectory(prefix="rho-bench-store-") as tmp:
        store = FileSessionStore(Path(tmp) / "sessions", heartbeat=3600)
        config = AgentConfig(model="fake-model", base_url="http://127.0.0.1:1", working_dir=tmp)
        await one_session(store, "warm", config)
        _fsyncs.clear()
        usage = resource.getrusage(resource.RUSAGE_SELF)
        cpu = usage.ru_utime + usage.ru_stime
        started = time.perf_counter()
        for i in range(sessions):
            await one_session(store, f"s{i}", config)
        wall = time.perf_counter() - started
        usage = resource.getrusage(resource.RUSAGE_SELF)
        cpu = usage.ru_utime + usage.ru_stime - cpu
    synced = ", ".join(f"{name} {count / sessions:g}" for name, count in sorted(_fsyncs.items()))
    return (
        f"per session: CPU {cpu / sessions * 1e3:.2f} ms, wall {wall / sessions * 1e3:.1f} ms; "
        f"fsyncs: {synced}"
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=300)
    parser.add_argument("--against", help="another tree's src directory, run alternating")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    if not args.against:
        print(asyncio.run(measure(args.sessions)))
        return
    here = str(Path(__file__).resolve().parents[1] / "src")
    for round_ in range(1, args.rounds + 1):
        for label, src in (("this tree", here), (args.against, args.against)):
            line = subprocess.run(
                [sys.executable, __file__, "--sessions", str(args.sessions)],
                env={**os.environ, "PYTHONPATH": src},
                capture_output=True,
                text=True,
                check=True,
            ).stdout.strip()
            print(f"round {round_}, {label}: {line}")


if __name__ == "__main__":
    main()
