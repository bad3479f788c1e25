"""A trace line (or meta.json) nested too deep for Python's json decoder is data like any
other corrupt line: it is skipped or shown as unreadable. Before, json's RecursionError (not
a ValueError) escaped every reader that caught ValueError: one crafted 200 KB line in one
session directory made ``GET /api/sessions`` fail for every session, and its detail and
stream with it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from server_support import app_for, client_for, place, sse_blocks
from test_server_stored_authority import craft

from rho_adapters.fakes import FunctionModel, text
from rho_adapters.store.trace import TornTraceWarning

DEEP = '{"v": 1, "kind": "message", "x": ' + "[" * 100_000 + "]" * 100_000 + "}\n"


async def test_a_line_nested_too_deep_is_unreadable_not_a_failed_listing(tmp_path: Path) -> None:
    where = place(tmp_path)
    good = craft(where, "c0ffee000002")
    bad = craft(where, "c0ffee000003")
    (where.sessions / bad / "trace.jsonl").write_text(DEEP)
    (where.sessions / good / "meta.json").write_text(
        '{"id": ' + "[" * 100_000 + "]" * 100_000 + "}"
    )
    app = app_for(where, FunctionModel(lambda request: text("ok")), profiles=("readonly",))
    async with client_for(app) as client:
        listing = await client.get("/api/sessions")
        with pytest.warns(TornTraceWarning, match="skipped unreadable line 1"):
            detail = await client.get(f"/api/sessions/{bad}")
        async with client.stream("GET", f"/api/sessions/{bad}/stream?until=idle") as stream:
            items = [block async for block in sse_blocks(stream)]
    assert listing.status_code == 200, listing.text
    assert bad in {row["id"] for row in listing.json()["sessions"]}
    assert detail.status_code == 200, detail.text
    assert detail.json()["pending_approvals"] == []
    unreadable = [json.loads(i["data"]) for i in items if i.get("event") == "unreadable"]
    assert unreadable == [{"seq": 1, "kind": "unreadable"}], items


def test_the_cli_lists_a_session_whose_trace_is_nested_too_deep(tmp_path: Path) -> None:
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))
    from cli_support import rho

    where = place(tmp_path)
    sid = craft(where, "c0ffee000004")
    (where.sessions / sid / "trace.jsonl").write_text(DEEP)

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return rho(*args, cwd=where.work, home=where.home.parent, RHO_AGENT_HOME=str(where.home))

    listing = run("--list")
    assert listing.returncode == 0, listing.stderr
    assert sid in listing.stdout
    shown = run("stats", sid)
    assert shown.returncode == 0, shown.stderr
    resumed = run("--resume", sid, "-m", "demo", "hello")
    assert resumed.returncode == 0, resumed.stderr
    assert "skipped unreadable line 1" in resumed.stderr
    assert "RecursionError" not in shown.stderr + resumed.stderr
