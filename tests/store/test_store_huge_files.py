"""A session file grown huge by whoever can write the session directory (``truncate -s 4G``:
a sparse file, no disk used): config.yaml, directives.jsonl and an export's answer were read
whole, so each cost its size in memory. Checked in one child under a 1 GiB address-space
limit, where reading one whole is a MemoryError (meta.json's is in test_store_links)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from rho_adapters.store import FileSessionStore
from rho_adapters.store.recording import CONFIG_BYTES
from rho_adapters.store.signals import DIRECTIVES_BYTES, EXPORT_BYTES
from rho_adapters.store.trace import TRACE_BYTES
from rho_domain.config import AgentConfig
from rho_domain.ports.store import SessionRecord

SRC = Path(__file__).resolve().parents[2] / "src"
TRACED = ("resume", "watch", "approvals", "recording")  # each reads the trace from its start

_UNDER_1_GIB = """
import asyncio, os, resource, sys
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
from pathlib import Path
from rho_adapters.store import FileSessionStore
from rho_adapters.store import FileSessions, load_recording
from rho_adapters.store.layout import SessionPaths
from rho_adapters.store.signals import add_directive, read_directives, read_export
from rho_adapters.store.trace_marks import TraceMarks

root = Path(sys.argv[1])
store = FileSessionStore(root)

def outcome(what, work):
    try:
        print(what, work())
    except Exception as exc:  # the first words of what it says
        print(what, type(exc).__name__, str(exc).replace(str(root), "ROOT"))

async def listing():
    return sorted((s.id, s.profile) for s in await store.list())

outcome("list", lambda: asyncio.run(listing()))
outcome("open", lambda: asyncio.run(store.open("config1")))
outcome("directives", lambda: read_directives(root / "directives1"))
outcome("directive", lambda: add_directive(root / "directives1", "stop"))
outcome("export", lambda: read_export(root / "export1", "x1"))
sessions = FileSessions(root)
outcome("resume", lambda: asyncio.run(store.open("trace1")))
outcome("watch", lambda: asyncio.run(sessions.trace("trace1")))
outcome("approvals", lambda: asyncio.run(sessions.approvals("trace1")))
outcome("recording", lambda: load_recording(root / "trace1"))
marks, tail = TraceMarks(), SessionPaths(root / "tail1")  # a server's tally and streams
marks.lines_after(tail, 0)  # read once: a mark at its second line, read again next time
os.truncate(tail.trace, (1 << 30) + 1)  # then grown past the bound in one unfinished line
outcome("tail", lambda: marks.lines_after(tail, 2))
"""


async def test_huge_session_files_are_refused_not_read_whole(tmp_path: Path) -> None:
    """Before, the child listed nothing (MemoryError: a listing reads every config.yaml for
    the profile it shows, so one session's took down ``--list``, ``monitor ps`` and the
    dashboard's listing), and opening that session (a resume, a durable worker), reading or
    adding a directive (each step of the running session, ``monitor directive``) and reading
    the export each raised MemoryError. Now each file is read up to its bound: the listing
    shows that session's profile unknown and the others as they are, and each read past the
    bound is a StoreError naming the file. A trace read once and then grown past the bound
    is refused too: read from its mark (the server's tally and streams), only what followed
    the mark was bounded, and the whole gigabyte of one unfinished line was read (MemoryError
    here) at every listing."""
    root = tmp_path / "sessions"
    store = FileSessionStore(root)
    for session_id in ("config1", "directives1", "export1", "fine1", "tail1", "trace1"):
        await store.create(
            SessionRecord(id=session_id, created_at=time.time(), config=AgentConfig())
        )
        await store.release(session_id)
    os.truncate(root / "config1" / "config.yaml", 4 << 30)
    (root / "directives1" / "directives.jsonl").write_bytes(b"")
    os.truncate(root / "directives1" / "directives.jsonl", 4 << 30)
    os.truncate(root / "trace1" / "trace.jsonl", 4 << 30)
    (root / "tail1" / "trace.jsonl").write_bytes(b'{"v":1}\n{"v":2}\n')
    (root / "export1" / "exports").mkdir()
    (root / "export1" / "exports" / "x1.md").write_bytes(b"")
    os.truncate(root / "export1" / "exports" / "x1.md", 4 << 30)
    child = subprocess.run(
        [sys.executable, "-c", _UNDER_1_GIB, str(root)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(SRC)},
        check=False,
    )
    assert child.returncode == 0, child.stderr[-2000:]
    lines = child.stdout.splitlines()
    assert lines[0] == (
        "list [('config1', '? (StoredPastBound)'), ('directives1', 'readonly'),"
        " ('export1', 'readonly'), ('fine1', 'readonly'), ('tail1', 'readonly'),"
        " ('trace1', 'readonly')]"
    )
    assert lines[1:] == [
        f"{what} StoredPastBound ROOT/{file}: more than {limit} bytes, far more than rho-agent"
        f" writes there; not read (remove it, or restore the file {whose} wrote)"
        for what, file, limit, whose in (
            ("open", "config1/config.yaml", CONFIG_BYTES, "the session"),
            ("directives", "directives1/directives.jsonl", DIRECTIVES_BYTES, "the operators"),
            ("directive", "directives1/directives.jsonl", DIRECTIVES_BYTES, "the operators"),
            ("export", "export1/exports/x1.md", EXPORT_BYTES, "the session"),
            *((what, "trace1/trace.jsonl", TRACE_BYTES, "the session") for what in TRACED),
            # read after its mark, only what followed was bounded: MemoryError before
            ("tail", "tail1/trace.jsonl", TRACE_BYTES, "the session"),
        )
    ]
