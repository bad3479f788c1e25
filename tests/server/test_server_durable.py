"""Two ``rho-agent serve --store postgresql://... --durable`` processes (issue 31).

Both servers keep their sessions on one PostgreSQL store and queue their runs in the same
database (``--durable-db`` defaults to the store's URL; DBOS keeps its tables in its own
``dbos`` schema).
One model server (the loopback fake, real HTTP) answers in script order:

1. A run created on A runs ``sleep 30`` on A (B is started once the tool runs, so that A is
   the one running it); A is SIGKILLed inside the tool call. Nobody resumes it: B notices A's
   heartbeat stop and takes the run over, the model call A had finished is not sent again,
   the killed ``bash`` (a write) is answered interrupted, and the run completes on B.
2. A restarted (A', the same config directory): a session created on B waits for approval of
   a ``write``; it is answered over HTTP on A' (approve) and on B (deny) at the same moment:
   the answers go through the queue, one lands (one ``approval_resolved``; the file written
   if it was the approval) and the other is a 409.
3. A chat of that session sent to A' and B at the same moment runs once: one 202, one 409
   (both were taken, and both runs ran, before the queue took one run of a session at a
   time).
"""

from __future__ import annotations

import contextlib
import importlib.util
import shutil
import signal
import sqlite3
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import attrs
import pytest
from server_support import Serve, http, listed, serve_env, serve_process, serve_refused, wait_for

from rho_adapters.fakes.loopback import LoopbackServer
from rho_adapters.fakes.wire import Exchange, Reply, call, stall, text_reply, tool_reply
from rho_adapters.store import parse_trace
from rho_domain import events as ev
from rho_domain.messages import AssistantMessage, ToolResultMessage
from rho_domain.state import State

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "store"))
from pg_rig import pg_server_url, schema_url

__all__ = ["pg_server_url"]
if importlib.util.find_spec("dbos") is None:  # found, not imported: dbos costs 0.65 s
    pytest.skip("the durable extra (dbos) is not installed", allow_module_level=True)

DEAD_AFTER = 3.0
# B's heartbeat notices A (dead-after + one beat), DBOS's queue polls (1 s), the session's
# claim on the store goes stale ($RHO_AGENT_STORE_STALE_AFTER, 3 s here, + a beat): the run
# continues within about 6 s here
TAKEOVER_BOUND = 45.0


def detail_of(server: Serve, sid: str) -> dict[str, Any]:
    url = f"{server.url}/api/sessions/{sid}"
    found: dict[str, Any] = http().get(url, headers=server.auth).json()
    return found


def stored_events(url: str, sid: str) -> tuple[ev.Event, ...]:
    import psycopg

    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT string_agg(line, E'\\n' ORDER BY seq) FROM rho_events WHERE session_id = %s",
            (sid,),
        ).fetchone()
    assert row is not None
    return parse_trace((row[0] + "\n").encode()).events


def test_a_run_created_on_a_killed_server_completes_on_the_other_by_itself(
    tmp_path: Path, pg_server_url: str
) -> None:
    url = schema_url(pg_server_url)
    work = tmp_path / "work"
    work.mkdir()
    sleep = call("bash", {"command": "sleep 30"}, call_id="k1")
    write = call("write", {"path": "out.txt", "content": "hi\n"}, call_id="c1")
    script = [
        tool_reply(sleep),
        text_reply("Recovered."),
        tool_reply(write),
        text_reply("Done."),
        text_reply("Again."),
    ]
    # no --durable-db: the queue is in the store's own database (the default)
    flags = ("--store", url, "--durable", "--dead-after", "3", "--poll", "0.05")
    with LoopbackServer(script) as model:
        extra = {"RHO_AGENT_SERVER_PROFILES": "developer,eval", "RHO_AGENT_STORE_STALE_AFTER": "3"}
        env_a = serve_env(tmp_path / "a", model.base_url, **extra)
        a = Serve(work, env_a, *flags)
        b: Serve | None = None
        again: Serve | None = None
        try:
            # 1. created on A, A killed inside the tool call, completed on B by itself
            # (every request through http(), whose timeout is 30 s: httpx.post's default of
            # 5 s is the answer route's own wait for the run's end, ANSWER_WAIT, and a loaded
            # durable server's create or answer, a few DBOS statements, took longer)
            created = http().post(
                f"{a.url}/api/sessions",
                json={"prompt": "sleep", "profile": "eval"},  # eval: no approvals
                headers=a.auth,
            )
            assert created.status_code == 201, created.text
            sid = created.json()["id"]
            wait_for(
                lambda: (
                    (r := listed(a, sid)) and r["tool_calls"] == 1 and r["liveness"] == "running"
                ),
                "the tool to start on A",
            )
            b = Serve(work, serve_env(tmp_path / "b", model.base_url, **extra), *flags)
            a.process.send_signal(signal.SIGKILL)
            a.process.wait(10)
            killed = time.monotonic()
            row = wait_for(
                lambda: (r := listed(b, sid)) and r["status"] == "completed" and r,
                "B to complete the run",
                timeout=TAKEOVER_BOUND,
            )
            took = time.monotonic() - killed
            print(f"completed on B {took:.1f} s after A's SIGKILL (bound {TAKEOVER_BOUND:.0f} s)")
            assert row["turns"] == 2  # the tool call, then the answer
            assert len(model.requests) == 2  # A's finished model call was not sent again
            events = stored_events(url, sid)
            starts = [e for e in events if isinstance(e, ev.RunStarted)]
            assert len(starts) == 1  # B retraced the run's start, did not write it twice
            ends = [e for e in events if isinstance(e, ev.ToolEnded) and e.call_id == "k1"]
            assert len(ends) == 1
            assert ends[0].is_error
            assert "interrupted" in ends[0].content
            history = State.from_events(events).messages
            assert isinstance(history[-1], AssistantMessage)
            assert history[-1].text == "Recovered."
            results = [m for m in history if isinstance(m, ToolResultMessage)]
            assert [m.call_id for m in results] == ["k1"]
            second = model.requests[1]["messages"]
            assert second[-1]["role"] == "tool"
            assert second[-1]["tool_call_id"] == "k1"

            # 2. A restarted; an approval of a run created on B, answered over HTTP on A'
            again = Serve(work, env_a, *flags)
            waiting = (
                http()
                .post(f"{b.url}/api/sessions", json={"prompt": "write out.txt"}, headers=b.auth)
                .json()["id"]
            )
            detail = wait_for(
                lambda: (d := detail_of(again, waiting))["liveness"] == "awaiting_approval" and d,
                "the run to wait for approval",
            )
            assert [p["call_id"] for p in detail["pending_approvals"]] == ["c1"]
            assert not (work / "out.txt").exists()
            wrong = http().post(
                f"{again.url}/api/sessions/{waiting}/approvals/nope",
                json={"decision": "approve", "digest": "0" * 32},
                headers=again.auth,
            )
            assert wrong.status_code == 404, wrong.text
            # answered on both servers at the same moment, one approving, one denying: one
            # answer lands, the other is a 409 naming it
            digest = detail["pending_approvals"][0]["digest"]
            path = f"/api/sessions/{waiting}/approvals/c1"
            answers = _at_once(
                (again, path, {"decision": "approve", "digest": digest}),
                (b, path, {"decision": "deny"}),
            )
            assert sorted(r.status_code for r in answers) == [202, 409], [r.text for r in answers]
            approved = answers[0].status_code == 202
            refused = answers[int(approved)].json()["error"]["message"]
            assert "was already answered" in refused or "has a run queued" in refused, refused
            wait_for(
                lambda: (r := listed(b, waiting)) and r["status"] == "completed",
                "the answered run to complete",
            )
            resolved = [
                (e.call_id, e.approved)
                for e in stored_events(url, waiting)
                if isinstance(e, ev.ApprovalResolved)
            ]
            assert resolved == [("c1", approved)]
            assert (work / "out.txt").exists() is approved
            asked = len(model.requests)
            assert asked == (4 if approved else 3)  # a denial ends the run without a call
            # 3. a chat of that session sent to both servers at the same moment: one run
            chat = (f"/api/sessions/{waiting}/chat", {"prompt": "again"})
            chats = _at_once((again, *chat), (b, *chat))
            assert sorted(r.status_code for r in chats) == [202, 409], [r.text for r in chats]
            wait_for(lambda: len(model.requests) == asked + 1, "the one run's model call")
            wait_for(
                lambda: (r := listed(b, waiting)) and r["status"] == "completed",
                "the chat's run to complete",
            )
            starts = [e for e in stored_events(url, waiting) if isinstance(e, ev.RunStarted)]
            assert [e.prompt for e in starts][-1:] == ["again"]
            assert len(starts) == 3  # the run that asked, its continuation, one chat's run
            assert len(model.requests) == asked + 1
        finally:
            if a.process.poll() is None:
                a.stop()
            for server in (b, again):
                if server is not None:
                    assert server.stop() == 0


def test_the_durable_flags_without_durable_are_refused(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    env = serve_env(tmp_path / "home", "http://127.0.0.1:9/v1")
    done = serve_refused(work, env, "--port", "0", "--durable-db", "q.sqlite")
    assert done.returncode == 1
    assert "--durable-db and --concurrency go with --durable" in done.stderr
    assert not (work / "q.sqlite").exists()


def test_a_durable_queue_that_cannot_be_opened_stops_the_server_with_exit_1(
    tmp_path: Path,
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    missing = tmp_path / "no-such-dir" / "q.sqlite"
    env = serve_env(tmp_path / "home", "http://127.0.0.1:9/v1")
    done = serve_process(work, env, "--durable", "--durable-db", str(missing))
    assert done.returncode == 1, done.stderr
    assert "cannot open the durable runs' database" in done.stderr
    assert "listening on" not in done.stderr


# -- one durable server on files, shared by the tests below -------------------------------------

# Each test's prompt picks its script; the number of tool results so far picks the reply.
SCRIPTS = {
    "list": [tool_reply(call("list", {"path": "."}, call_id="l1")), text_reply("Listed.")],
    "wait": [text_reply("never", faults=(stall(),))],
    "write twice": [
        tool_reply(call("write", {"path": "one.txt", "content": "1\n"}, call_id="w1")),
        tool_reply(call("write", {"path": "two.txt", "content": "2\n"}, call_id="w2")),
        text_reply("Both."),
    ],
    "write once": [
        tool_reply(call("write", {"path": "once.txt", "content": "1\n"}, call_id="o1")),
        text_reply("Wrote."),
    ],
    # asks for a write, then its next model call never ends: a run that stays in progress
    "write then wait": [
        tool_reply(call("write", {"path": "then.txt", "content": "1\n"}, call_id="t1")),
        text_reply("never", faults=(stall(),)),
    ],
}


def _prompt(body: Mapping[str, Any]) -> str:
    return next(str(m["content"]) for m in body["messages"] if m["role"] == "user")


def _by_prompt(exchange: Exchange) -> Reply | None:
    if not exchange.is_chat:
        return None
    script = SCRIPTS[_prompt(exchange.body)]
    done = sum(1 for m in exchange.body["messages"] if m["role"] == "tool")
    return script[min(done, len(script) - 1)]


@attrs.frozen
class OnFiles:
    """``rho-agent serve --durable`` with its default store and queue (the config directory)."""

    server: Serve
    model: LoopbackServer
    home: Path
    work: Path

    def sent(self, prompt: str) -> int:
        """The model calls made for ``prompt``'s session."""
        return sum(1 for body in self.model.requests if _prompt(body) == prompt)


@pytest.fixture(scope="module")
def on_files(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OnFiles]:
    """One server for the module (a durable server's start is most of a test's CPU time)."""
    root = tmp_path_factory.mktemp("on-files")
    work = root / "work"
    work.mkdir()
    home = root / "home"  # not created yet: the server makes it for durable.sqlite
    with LoopbackServer([], rules=[_by_prompt]) as model:
        env = serve_env(home, model.base_url, RHO_AGENT_SERVER_PROFILES="readonly,developer")
        server = Serve(work, env, "--durable", "--poll", "0.05")
        try:
            yield OnFiles(server, model, home, work)
        finally:
            assert server.stop() == 0


def test_one_durable_server_on_files_runs_its_queue_in_the_config_directory(
    on_files: OnFiles,
) -> None:
    server, home = on_files.server, on_files.home
    sid = http().post(f"{server.url}/api/sessions", json={"prompt": "list"}, headers=server.auth)
    sid = sid.json()["id"]
    wait_for(
        lambda: (r := listed(server, sid)) and r["status"] == "completed",
        "the run to complete",
    )
    assert (home / "durable.sqlite").is_file()
    recorded = parse_trace((home / "sessions" / sid / "trace.jsonl").read_bytes()).events
    (run,) = [e.run_id for e in recorded if isinstance(e, ev.RunStarted)]

    def workflow() -> list[tuple[str, str]]:
        with contextlib.closing(sqlite3.connect(home / "durable.sqlite")) as db:
            rows: list[tuple[str, str]] = db.execute(
                "SELECT status, name FROM workflow_status WHERE workflow_uuid = ?", (run,)
            ).fetchall()
            return rows

    # the run was the queue's workflow; DBOS marks it done just after the session's end
    wait_for(lambda: workflow() == [("SUCCESS", "rho.run")], "the workflow to succeed")
    assert State.from_events(recorded).messages[-1].text == "Listed."  # type: ignore[union-attr]
    assert on_files.sent("list") == 2
    with contextlib.closing(sqlite3.connect(home / "durable.sqlite")) as db:
        polled = db.execute("SELECT polling_interval_sec FROM queues WHERE name = 'rho-runs'")
        assert polled.fetchall() == [(0.05,)]  # --poll reached the queue (DBOS keeps it)


def test_a_durable_run_is_cancelled_over_http_through_the_store(on_files: OnFiles) -> None:
    server = on_files.server
    sid = http().post(f"{server.url}/api/sessions", json={"prompt": "wait"}, headers=server.auth)
    sid = sid.json()["id"]
    wait_for(lambda: on_files.sent("wait") == 1, "the model call to start")
    cancelled = http().post(f"{server.url}/api/sessions/{sid}/cancel", headers=server.auth)
    assert cancelled.status_code == 202, cancelled.text
    assert cancelled.json()["outcome"] == "cancel requested"  # the worker's, not a handle
    wait_for(
        lambda: (r := listed(server, sid)) and r["status"] == "cancelled",
        "the run to end cancelled",
    )


def test_always_answered_on_a_durable_server_allows_the_tool_for_the_rest_of_the_run(
    on_files: OnFiles,
) -> None:
    server, work = on_files.server, on_files.work
    created = http().post(
        f"{server.url}/api/sessions",
        json={"prompt": "write twice", "profile": "developer"},
        headers=server.auth,
    )
    assert created.status_code == 201, created.text
    sid = created.json()["id"]
    detail = wait_for(
        lambda: (d := detail_of(server, sid))["liveness"] == "awaiting_approval" and d,
        "the run to wait for approval",
    )
    assert [p["call_id"] for p in detail["pending_approvals"]] == ["w1"]
    answered = http().post(
        f"{server.url}/api/sessions/{sid}/approvals/w1",
        json={"decision": "always", "digest": detail["pending_approvals"][0]["digest"]},
        headers=server.auth,
    )
    assert answered.status_code == 202, answered.text
    # w2 is a write too: "always" lets it run without a second question
    wait_for(
        lambda: (r := listed(server, sid)) and r["status"] == "completed",
        "the run to complete without asking for w2",
    )
    assert (work / "one.txt").read_text() == "1\n"
    assert (work / "two.txt").read_text() == "2\n"
    recorded = parse_trace((on_files.home / "sessions" / sid / "trace.jsonl").read_bytes())
    asked = [e.call.id for e in recorded.events if isinstance(e, ev.ApprovalRequested)]
    assert asked == ["w1"]
    resolved = [e for e in recorded.events if isinstance(e, ev.ApprovalResolved)]
    assert [(e.call_id, e.approved, e.always) for e in resolved] == [("w1", True, True)]
    assert on_files.sent("write twice") == 3


def test_an_answer_goes_to_the_run_of_its_own_session_never_one_its_trace_names(
    on_files: OnFiles,
) -> None:
    """A durable server answers a session's waiting run, which its trace's last run_start
    names: a trace is data, and a copy of session B's directory under another id (or any
    trace naming B's run) made an answer given on that session continue B's run, approved
    on a page that showed another session."""
    server, home = on_files.server, on_files.home
    created = http().post(
        f"{server.url}/api/sessions",
        json={"prompt": "write once", "profile": "developer"},
        headers=server.auth,
    )
    victim = created.json()["id"]
    detail = wait_for(
        lambda: (d := detail_of(server, victim))["liveness"] == "awaiting_approval" and d,
        "the run to wait for approval",
    )
    copy = "c0ffee0000d1"
    shutil.copytree(home / "sessions" / victim, home / "sessions" / copy)
    shown = detail_of(server, copy)["pending_approvals"]  # the same call, the same digest
    assert shown == detail["pending_approvals"]
    answered = http().post(
        f"{server.url}/api/sessions/{copy}/approvals/o1",
        json={"decision": "approve", "digest": shown[0]["digest"]},
        headers=server.auth,
    )
    assert answered.status_code == 409, answered.text
    (run,) = {e.run_id for e in stored_trace(home, copy) if isinstance(e, ev.RunStarted)}
    assert answered.json()["error"]["message"] == (
        f"session {copy}'s trace names the durable run {run}, which is a run of session "
        f"{victim}: an answer continues its own session's run only (the trace was copied or "
        "changed); nothing was answered"
    )
    assert detail_of(server, victim)["liveness"] == "awaiting_approval"
    assert not (on_files.work / "once.txt").exists()


def stored_trace(home: Path, sid: str) -> tuple[ev.Event, ...]:
    return parse_trace((home / "sessions" / sid / "trace.jsonl").read_bytes()).events


def _at_once(*posts: tuple[Serve, str, Mapping[str, Any] | None]) -> list[Any]:
    """The POSTs (a server, a path on it, a body) sent at the same moment, one thread each;
    their answers in order."""
    from concurrent.futures import ThreadPoolExecutor

    def post(server: Serve, path: str, body: Mapping[str, Any] | None) -> Any:
        return http().post(f"{server.url}{path}", json=body, headers=server.auth)

    with ThreadPoolExecutor(len(posts)) as pool:
        return [f.result() for f in [pool.submit(post, *p) for p in posts]]


def test_starts_and_answers_of_one_session_at_once_start_one_run(on_files: OnFiles) -> None:
    """A durable server judged 'a run is in progress' by the store alone, which learns of a
    run only once a worker opens it: two chats of one session at the same moment (a double
    click), or a chat and an approval answer, were both taken (202, 202) and queued two runs,
    which then both ran, one after the other. The plain server answers the second 409 (a run
    in progress) or 404 (the call it answers was superseded). The queue now takes one run of
    a session at a time: exactly one of the two is taken, the other is a 409 naming it. (Two
    servers at once: the first test's parts 2 and 3.)"""
    server = on_files.server
    base = f"{server.url}/api/sessions"
    # two chats of an idle session
    idle = http().post(base, json={}, headers=server.auth).json()["id"]
    chat = (server, f"/api/sessions/{idle}/chat", {"prompt": "wait"})
    answers = _at_once(chat, chat)
    assert sorted(r.status_code for r in answers) == [202, 409], [r.text for r in answers]
    (refused,) = [r for r in answers if r.status_code == 409]
    assert "has a run queued or in progress" in refused.json()["error"]["message"]
    # a chat and the answer to the call its session waits for
    created = http().post(
        base, json={"prompt": "write then wait", "profile": "developer"}, headers=server.auth
    )
    sid = created.json()["id"]
    detail = wait_for(
        lambda: (d := detail_of(server, sid))["liveness"] == "awaiting_approval" and d,
        "the run to wait for approval",
    )
    digest = detail["pending_approvals"][0]["digest"]
    answers = _at_once(
        (server, f"/api/sessions/{sid}/chat", {"prompt": "go on"}),
        (server, f"/api/sessions/{sid}/approvals/t1", {"decision": "approve", "digest": digest}),
    )
    assert sorted(r.status_code for r in answers) == [202, 409], [r.text for r in answers]
    for stuck in (idle, sid):  # each run stalls in its model call: one run each to stop
        _cancelled(server, stuck)
        starts = [e for e in stored_trace(on_files.home, stuck) if isinstance(e, ev.RunStarted)]
        assert len(starts) == (2 if stuck == sid else 1)  # (the waiting run), the one taken


def _cancelled(server: Serve, sid: str) -> None:
    """Wait for ``sid``'s run to be in progress, cancel it, wait for it to end cancelled."""

    def row() -> dict[str, Any]:
        found = listed(server, sid)
        assert found is not None
        return found

    wait_for(lambda: row()["liveness"] == "running", "the run to start")
    cancelled = http().post(f"{server.url}/api/sessions/{sid}/cancel", headers=server.auth)
    assert cancelled.status_code == 202, cancelled.text
    wait_for(lambda: row()["status"] == "cancelled", "the run to end cancelled")
