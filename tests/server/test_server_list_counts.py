"""The session list's counts (model calls, tool calls, errors, run time) and ``/api/profiles``:
the same numbers as ``session_telemetry`` over the trace, read once per session and then only
the lines appended since."""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path
from typing import Any

import attrs
from dashboard_support import PROMPTS, model
from server_support import app_for, client_for, place, wait_idle

from rho_adapters.codec import event_to_dict
from rho_adapters.store.layout import SessionPaths
from rho_adapters.store.trace import read_trace
from rho_domain import events as ev
from rho_domain.config import AgentConfig
from rho_domain.ports.store import SessionRecord
from rho_domain.telemetry import session_telemetry


async def _start(client: Any, prompt: str) -> str:
    body: dict[str, Any] = {"prompt": prompt}
    if prompt.startswith("ask"):
        body["profile"] = "developer"
    if prompt.startswith("loop"):
        body["max_turns"] = 1
    created = await client.post("/api/sessions", json=body)
    assert created.status_code == 201, created.text
    sid: str = created.json()["id"]
    await wait_idle(client, sid)
    return sid


def _expected(trace: Path) -> dict[str, Any]:
    stats = session_telemetry(read_trace(trace).events)
    return {
        "turns": len(stats.turns),
        "tool_calls": len(stats.tools),
        "tool_errors": sum(1 for t in stats.tools if t.outcome == "error"),
        "errors": stats.errors,
        "duration_seconds": round(sum(r.duration or 0.0 for r in stats.runs), 3),
        "started_at": stats.runs[0].started_at if stats.runs else None,
    }


async def test_the_list_counts_are_the_traces_telemetry(tmp_path: Path) -> None:
    where = place(tmp_path)
    app = app_for(where, model(), approval_hold=0.0)
    async with client_for(app) as client:
        ids = {prompt.split()[0]: await _start(client, prompt) for prompt in PROMPTS}
        rows = {r["id"]: r for r in (await client.get("/api/sessions")).json()["sessions"]}
        detail = (await client.get(f"/api/sessions/{ids['look']}")).json()
    for sid in ids.values():
        expected = _expected(where.sessions / sid / "trace.jsonl")
        assert {k: rows[sid][k] for k in expected} == expected, sid
    # what each kind of session shows (not only "equal to telemetry": the numbers themselves)
    look, fail, loop = rows[ids["look"]], rows[ids["fail"]], rows[ids["loop"]]
    assert (look["turns"], look["tool_calls"], look["tool_errors"]) == (2, 2, 1)
    assert (fail["status"], fail["errors"], fail["tool_calls"]) == ("error", 1, 0)
    assert (loop["status"], loop["turns"], loop["tool_calls"]) == ("max_turns", 1, 1)
    assert rows[ids["ask"]]["status"] == "awaiting_approval"
    assert look["duration_seconds"] > 0
    assert look["started_at"] >= look["created_at"]
    assert {k: detail[k] for k in ("turns", "tool_calls", "errors")} == {
        "turns": 2,
        "tool_calls": 2,
        "errors": 0,
    }


async def test_a_trace_is_read_once_then_only_its_new_lines(tmp_path: Path) -> None:
    where = place(tmp_path)
    app = app_for(where, model())
    host = app.state.host
    async with client_for(app) as client:
        sid = await _start(client, "plain hello")
        paths = SessionPaths(where.sessions / sid)
        first = (await client.get("/api/sessions")).json()["sessions"][0]
        tally = host.tallies.known(sid)
        assert tally is not None
        assert tally.seq == len(paths.trace.read_bytes().splitlines())  # the whole trace
        again = (await client.get("/api/sessions")).json()["sessions"][0]
        assert host.tallies.known(sid) is tally  # nothing new: the same tally
        assert again["turns"] == first["turns"] == 1

        # a next run: only the appended lines are folded into the same tally
        chat = await client.post(f"/api/sessions/{sid}/chat", json={"prompt": "look again"})
        assert chat.status_code == 202, chat.text
        await wait_idle(client, sid)
        grown = (await client.get("/api/sessions")).json()["sessions"][0]
        assert host.tallies.known(sid) is tally
        assert grown["turns"] == 2
        assert grown == {**grown, **_expected(paths.trace)}

        # a line being written (no newline yet) waits for its end; then it counts
        folded = tally.seq
        error = ev.ErrorOccurred(at=time.time(), error_type="ModelHTTPError", message="HTTP 500")
        line = json.dumps(event_to_dict(error)).encode() + b"\n"
        with paths.trace.open("ab") as handle:
            handle.write(line[:20])
        torn = (await client.get("/api/sessions")).json()["sessions"][0]
        assert (torn["errors"], tally.seq) == (0, folded)
        with paths.trace.open("ab") as handle:
            handle.write(line[20:])
        whole = (await client.get("/api/sessions")).json()["sessions"][0]
        assert whole["errors"] == 1 == session_telemetry(read_trace(paths.trace).events).errors

        # a trace replaced by a shorter one (another inode) is counted again from its start
        lines = paths.trace.read_bytes().splitlines(keepends=True)
        ends = [i for i, raw in enumerate(lines) if json.loads(raw)["kind"] == "run_end"]
        first_run = b"".join(lines[: ends[0] + 1])
        replacement = paths.dir / "trace.new"
        replacement.write_bytes(first_run)
        os.replace(replacement, paths.trace)
        replaced = (await client.get("/api/sessions")).json()["sessions"][0]
        assert (replaced["turns"], replaced["errors"]) == (1, 0)


async def test_a_trace_rewritten_in_place_is_counted_again(tmp_path: Path) -> None:
    """The same file (same inode) rewritten with other lines: the last folded line is not
    what the trace holds there any more, so the counts start over from the new content."""
    where = place(tmp_path)
    app = app_for(where, model(), approval_hold=0.0)
    async with client_for(app) as client:
        sid = await _start(client, "look around")
        trace = where.sessions / sid / "trace.jsonl"
        before = (await client.get("/api/sessions")).json()["sessions"][0]
        assert before["tool_calls"] == 2
        assert before["errors"] == 0
        lines = trace.read_bytes().splitlines(keepends=True)
        error = ev.ErrorOccurred(at=time.time(), error_type="ModelHTTPError", message="HTTP 500")
        with trace.open("r+b") as handle:  # in place: the same inode, more bytes than before
            handle.seek(0)
            handle.write(b"".join(lines[:-1]) + json.dumps(event_to_dict(error)).encode())
            handle.write(b"\n")
            handle.truncate()
        after = (await client.get("/api/sessions")).json()["sessions"][0]
    expected = _expected(trace)  # its run has no end now: the duration is judged differently
    assert {k: after[k] for k in ("turns", "tool_calls", "errors")} == {
        k: expected[k] for k in ("turns", "tool_calls", "errors")
    }
    assert after["errors"] == 1


async def test_a_trace_that_is_a_link_is_not_read(tmp_path: Path) -> None:
    """A session directory whose trace.jsonl links elsewhere: the list shows no counts and
    never folds the file behind the link (the store never follows a link)."""
    where = place(tmp_path)
    app = app_for(where, model())
    async with client_for(app) as client:
        sid = await _start(client, "plain hello")
        paths = SessionPaths(where.sessions / sid)
        elsewhere = tmp_path / "other-trace.jsonl"
        elsewhere.write_bytes(paths.trace.read_bytes() * 3)
        paths.trace.unlink()
        paths.trace.symlink_to(elsewhere)
        row = (await client.get("/api/sessions")).json()["sessions"][0]
    assert row["id"] == sid
    assert (row["turns"], row["tool_calls"], row["errors"], row["duration_seconds"]) == (
        None,
        None,
        None,
        None,
    )


async def test_a_run_in_progress_counts_its_time_so_far(tmp_path: Path) -> None:
    where = place(tmp_path)
    app = app_for(where, model())
    async with client_for(app) as client:
        created = await client.post("/api/sessions", json={"prompt": "hang until cancelled"})
        sid = created.json()["id"]
        for _ in range(500):  # the run's first lines are in the trace
            row = (await client.get("/api/sessions")).json()["sessions"][0]
            if row["turns"] == 1:
                break
            await asyncio.sleep(0.01)
        first = row["duration_seconds"]
        await asyncio.sleep(0.2)
        later = (await client.get("/api/sessions")).json()["sessions"][0]
        assert later["liveness"] == "running"
        assert later["duration_seconds"] >= first + 0.2
        assert (await client.post(f"/api/sessions/{sid}/cancel")).status_code == 202


async def test_the_profiles_are_the_servers(tmp_path: Path) -> None:
    app = app_for(place(tmp_path), model(), profiles=("developer", "readonly"))
    async with client_for(app) as client:
        answer = await client.get("/api/profiles")
        anonymous = await client.get("/api/profiles", headers={"Authorization": ""})
    assert answer.json() == {"profiles": ["developer", "readonly"], "default": "developer"}
    assert anonymous.status_code == 401


def test_every_way_a_call_ends_is_counted_as_telemetry_counts_it() -> None:
    """Blocked by policy, rejected by a human, run and failed, started and died then started
    again by the next run (a resume), and a result without a start: the tally's counts are
    telemetry's, without keeping every call id (only those of the current run still open)."""
    from rho_domain.messages import ToolCall
    from rho_domain.run_status import RunStatus
    from rho_entry.server.tally import TraceTally

    def tool(name: str, call_id: str) -> ToolCall:
        return ToolCall(id=call_id, name=name, arguments="{}")

    blocked, rejected, failing, died = (tool("bash", f"c{i}") for i in range(4))
    events: list[ev.Event] = [
        ev.RunStarted(at=10.0, run_id="r1", prompt="go"),
        ev.LLMStarted(at=10.5, model="m", call_index=1, context_tokens=10),
        ev.ToolBlocked(at=11.0, call=blocked, by="policy", reason="no"),
        ev.ToolBlocked(at=11.5, call=rejected, by="user", reason="rejected"),
        ev.ToolStarted(at=12.0, call=failing),
        ev.ToolEnded(
            at=12.5, call_id="c2", tool_name="bash", content="boom", is_error=True, duration=0.5
        ),
        ev.ErrorOccurred(at=12.8, error_type="ModelHTTPError", message="HTTP 500"),
        ev.ToolStarted(at=13.0, call=died),  # the process dies here: no end, no run_end
        ev.RunStarted(at=20.0, run_id="r2", prompt=None),
        ev.ToolStarted(at=20.5, call=died),
        ev.ToolEnded(
            at=21.0, call_id="c3", tool_name="bash", content="ok", is_error=False, duration=0.5
        ),
        ev.ToolEnded(
            at=21.5, call_id="c9", tool_name="read", content="", is_error=False, duration=0.0
        ),
        ev.RunEnded(at=22.0, run_id="r2", status=RunStatus.COMPLETED),
    ]
    tally = TraceTally()
    tally.fold(events)
    stats = session_telemetry(events)
    counts = tally.view(liveness="completed", now=100.0)
    assert counts["tool_calls"] == len(stats.tools) == 6
    assert counts["tool_errors"] == 1
    assert counts["errors"] == stats.errors == 1
    assert counts["turns"] == len(stats.turns) == 1
    assert counts["started_at"] == 10.0
    assert counts["duration_seconds"] == 2.0  # the second run; the dead one ended nowhere


async def test_a_listing_poll_does_not_read_the_last_line_again(tmp_path: Path) -> None:
    """The tally asked for its last folded line again at each poll, to see the trace was
    not rewritten, and kept its bytes: a 100 MB last line cost ~0.2 s of CPU a poll a
    session, and the tally held the 100 MB. Now the store checks its tail without reading
    the line: a poll with nothing new reads no line, and the tally holds none."""
    from rho_adapters.store import FileSessions, FileSessionStore
    from rho_domain.messages import UserMessage
    from rho_entry.server.tally import Tallies

    store = FileSessionStore(tmp_path / "sessions")
    record = SessionRecord(id="big1", created_at=1000.0, config=AgentConfig(model="m"))
    await store.create(record)
    long_line = ev.MessageAdded(at=1001.0, message=UserMessage("x" * 50_000))
    await store.append("big1", [ev.RunStarted(at=1001.0, run_id="r1", prompt="x"), long_line])
    await store.release("big1")

    class Counting:
        """The store, counting the bytes of the lines it hands the tally."""

        def __init__(self) -> None:
            self.sessions: Any = FileSessions(store.root)
            self.read = 0

        async def traces(self, after: Any) -> Any:  # what the tally asked before (gone now)
            found = await self.sessions.traces(after)
            self.read += sum(len(line.data) for lines in found.values() for line in lines or ())
            return found

        async def trace_reads(self, tails: Any) -> Any:
            found = await self.sessions.trace_reads(tails)
            reads = [read for read in found.values() if read is not None]
            self.read += sum(len(line.data) for read in reads for line in read.lines)
            return found

    catalog, tallies = Counting(), Tallies()
    tally = (await tallies.caught_up(catalog, ["big1"]))["big1"]  # type: ignore[arg-type]
    assert (tally.seq, catalog.read > 50_000) == (2, True)
    catalog.read = 0
    again = (await tallies.caught_up(catalog, ["big1"]))["big1"]  # type: ignore[arg-type]
    assert (again is tally, catalog.read) == (True, 0)
    assert all(
        len(getattr(tally, field.name)) < 1_000
        for field in attrs.fields(type(tally))
        if isinstance(getattr(tally, field.name), bytes | str)
    )
