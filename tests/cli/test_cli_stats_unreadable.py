"""``rho-agent stats --all`` over a store where one session's stored data cannot be read (a
trace line hand-edited, a trace past ``TRACE_BYTES``). Before, that one session failed the
whole command: exit 1 and only that session's error, no other session's stats. Now it is
left out, named on stderr with why, and every other session is shown."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from cli_support import rho

from rho_adapters.store.trace import TRACE_BYTES


def test_stats_all_leaves_an_unreadable_session_out_naming_it(tmp_path: Path) -> None:
    assert rho("-m", "demo", "hi", cwd=tmp_path, home=tmp_path).returncode == 0
    (trace,) = tmp_path.rglob("trace.jsonl")
    sessions = trace.parent.parent
    for name in ("0badline0000", "0pastbound00"):
        shutil.copytree(trace.parent, sessions / name)
    with (sessions / "0badline0000" / "trace.jsonl").open("ab") as odd:
        odd.write(b'{"v":1,"kind":"run_end"}\n')
    os.truncate(sessions / "0pastbound00" / "trace.jsonl", TRACE_BYTES + 1)  # sparse
    done = rho("stats", "--all", "--json", cwd=tmp_path, home=tmp_path)
    assert done.returncode == 0, done.stderr  # 1, and no stats at all, before
    assert [s["session_id"] for s in json.loads(done.stdout)] == [trace.parent.name]
    assert "session 0badline0000 left out: " in done.stderr, done.stderr
    assert "trace.jsonl: line 15: malformed 'run_end' event" in done.stderr, done.stderr
    assert f"session 0pastbound00 left out: {sessions}" in done.stderr, done.stderr
    assert f"more than {TRACE_BYTES} bytes" in done.stderr, done.stderr
