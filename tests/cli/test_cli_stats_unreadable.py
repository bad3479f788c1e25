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


def test_list_says_why_a_profile_is_unknown(tmp_path: Path) -> None:
    """Before: a session whose config.yaml another version wrote (a key this one does not
    know) was listed with the profile '? (StoredC', its error's name cut by the column, and
    nothing said what was wrong or where to look. The column now says '?' and a line under
    it names the error and the command that says why (export, which names the key)."""
    assert rho("-m", "demo", "hi", cwd=tmp_path, home=tmp_path).returncode == 0
    (config,) = tmp_path.rglob("config.yaml")
    with config.open("a") as edited:
        edited.write("mystery_key: 1\n")
    session_id = config.parent.name
    listed = rho("--list", cwd=tmp_path, home=tmp_path)
    assert listed.returncode == 0, listed.stderr
    row, why = listed.stdout.splitlines()[1:3]
    assert row.split()[4] == "?"
    assert why.strip() == (
        "└ profile unknown: its config.yaml cannot be read (StoredConfigInvalid); "
        f"`rho-agent export {session_id}` says why and what to fix"
    )
    exported = rho("export", session_id, cwd=tmp_path, home=tmp_path)
    assert "config.yaml: unknown key 'mystery_key'" in exported.stderr
