"""Two ``rho-agent serve`` processes sharing one set of sessions on a real PostgreSQL (issue 27).

Server A and server B run on different ports with different config directories and the same
``--store postgresql://...``; a third config directory runs ``rho-agent kill``. One model server
(the loopback fake, real HTTP) answers both, in script order:

1. A session created on A waits for approval of a ``write``: B lists it, streams it from
   Last-Event-ID, and answers the approval; B runs it on (the file is written).
2. A session on A stalls in its model call: ``rho-agent kill ID --store URL`` from the third
   directory cancels it (the run ends ``cancelled`` on A).
3. A session on A runs ``sleep 30``: A is SIGKILLed mid-tool; B lists it ``stale`` within the
   heartbeat bound, and ``rho-agent --resume ID --store URL`` from B's config directory
   continues it; its history has no tool call without a result.
"""

from __future__ import annotations

import signal
import sys
import time
from pathlib import Path

from server_support import Serve, http, listed, parse_sse, rho_cli, serve_env, wait_for

from rho_adapters.fakes.loopback import LoopbackServer
from rho_adapters.fakes.wire import call, stall, text_reply, tool_reply
from rho_adapters.store import parse_trace
from rho_domain.messages import AssistantMessage, ToolResultMessage
from rho_domain.state import State

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "store"))
from pg_rig import pg_server_url, schema_url

__all__ = ["pg_server_url"]
# the servers' staleness window ($RHO_AGENT_STORE_STALE_AFTER, default 8 s) is short here, so
# the dead host is noticed in seconds; the bound is the window plus one beat (a quarter of it)
STALE_AFTER = 3.0
STALE_BOUND = STALE_AFTER * 1.25


def stream_ids(server: Serve, sid: str, last: int | None = None) -> list[int]:
    headers = {**server.auth, **({"Last-Event-ID": str(last)} if last is not None else {})}
    text = (
        http()
        .get(
            f"{server.url}/api/sessions/{sid}/stream",
            params={"until": "idle"},
            headers=headers,
            timeout=30,
        )
        .text
    )
    return [int(e["id"]) for e in parse_sse(text) if e.get("id")]


def test_two_servers_share_sessions_approvals_cancels_and_a_dead_host(
    tmp_path: Path, pg_server_url: str
) -> None:
    import psycopg

    url = schema_url(pg_server_url)
    work = tmp_path / "work"
    work.mkdir()
    write = call("write", {"path": "out.txt", "content": "hi\n"}, call_id="c1")
    sleep = call("bash", {"command": "sleep 30"}, call_id="k1")
    script = [
        tool_reply(write),
        text_reply("Written."),
        text_reply("never", faults=(stall(),)),
        tool_reply(sleep),
        text_reply("Recovered."),
    ]
    with LoopbackServer(script) as model:
        extra = {
            "RHO_AGENT_SERVER_PROFILES": "developer,eval",
            "RHO_AGENT_SERVER_APPROVAL_HOLD": "0",
            "RHO_AGENT_STORE_STALE_AFTER": str(STALE_AFTER),
        }
        a = Serve(work, serve_env(tmp_path / "a", model.base_url, **extra), "--store", url)
        b = Serve(work, serve_env(tmp_path / "b", model.base_url, **extra), "--store", url)
        try:
            assert "sessions in postgresql://" in a.listening
            # 1. created on A, listed, streamed and answered on B
            created = http().post(
                f"{a.url}/api/sessions", json={"prompt": "write out.txt"}, headers=a.auth
            )
            sid = created.json()["id"]
            on_a = stream_ids(a, sid)
            row = wait_for(
                lambda: (r := listed(b, sid)) and r["status"] == "awaiting_approval" and r,
                "B to list the session waiting",
            )
            assert row["turns"] == 1
            assert stream_ids(b, sid, last=2) == [i for i in on_a if i > 2]
            detail = wait_for(
                lambda: (
                    (d := http().get(f"{b.url}/api/sessions/{sid}", headers=b.auth).json())
                    and d["liveness"] == "awaiting_approval"
                    and d
                ),
                "A to release the session",
            )
            assert [p["call_id"] for p in detail["pending_approvals"]] == ["c1"]
            answered = http().post(
                f"{b.url}/api/sessions/{sid}/approvals/c1",
                json={"decision": "approve", "digest": detail["pending_approvals"][0]["digest"]},
                headers=b.auth,
            )
            assert answered.status_code == 202, answered.text
            stream_ids(b, sid)
            assert (work / "out.txt").read_text() == "hi\n"
            assert listed(a, sid)["status"] == "completed"  # type: ignore[index]

            # 2. stalled on A, cancelled by `rho-agent kill` from a third config directory
            stalled = (
                http()
                .post(f"{a.url}/api/sessions", json={"prompt": "wait"}, headers=a.auth)
                .json()["id"]
            )
            wait_for(lambda: (r := listed(b, stalled)) and r["liveness"] == "running", "running")
            killer = serve_env(tmp_path / "c", model.base_url)
            done = rho_cli("kill", stalled, "--store", url, env=killer)
            assert done.returncode == 0, done.stderr
            assert f"cancel requested: {stalled}" in done.stdout
            wait_for(lambda: (r := listed(b, stalled)) and r["status"] == "cancelled", "the cancel")

            # 3. A killed mid-tool: stale on B within the bound, resumed there
            running = (
                http()
                .post(
                    f"{a.url}/api/sessions",
                    json={"prompt": "sleep", "profile": "eval"},  # eval: no approvals
                    headers=a.auth,
                )
                .json()["id"]
            )
            row = wait_for(
                lambda: (r := listed(b, running)) and r["tool_calls"] == 1 and r,
                "the tool to start",
            )
            assert row["liveness"] == "running"
            a.process.send_signal(signal.SIGKILL)
            a.process.wait(10)
            killed = time.monotonic()
            # Idle, B sees it within the bound; at a load of 12 B's polls and the server's
            # replies wait for a core too, so only a claim that never goes stale fails here.
            wait_for(
                lambda: (r := listed(b, running)) and r["liveness"] == "stale",
                "B to see the session stale",
                timeout=30,
            )
            noticed = time.monotonic() - killed
            print(f"stale on B {noticed:.1f} s after the SIGKILL (bound {STALE_BOUND:.0f} s)")
            # `--resume` from B's config directory, as an operator on B's host would (with the
            # host's staleness window: the default 8 s would still see A's claim live)
            resume = ["--resume", running, "--store", url, "--profile", "eval", "-y", "carry on"]
            env_b = serve_env(tmp_path / "b", model.base_url, **extra)
            carried = rho_cli(*resume, env=env_b, cwd=work, timeout=120)
            assert carried.returncode == 0, carried.stderr
            assert "Recovered." in carried.stdout
            assert listed(b, running)["status"] == "completed"  # type: ignore[index]
        finally:
            if a.process.poll() is None:
                a.stop()
            assert b.stop() == 0
        # the resumed run's request: the killed call answered (interrupted) right after it
        sent = model.requests[-1]["messages"]
        at = next(i for i, m in enumerate(sent) if m.get("tool_calls"))
        assert [c["id"] for c in sent[at]["tool_calls"]] == ["k1"]
        assert (sent[at + 1]["role"], sent[at + 1]["tool_call_id"]) == ("tool", "k1")
    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT string_agg(line, E'\\n' ORDER BY seq) FROM rho_events WHERE session_id = %s",
            (running,),
        ).fetchone()
    assert row is not None
    text = row[0]
    history = State.from_events(parse_trace((text + "\n").encode()).events).messages
    calls = {c.id for m in history if isinstance(m, AssistantMessage) for c in m.tool_calls}
    results = {m.call_id for m in history if isinstance(m, ToolResultMessage)}
    assert calls == results == {"k1"}  # no orphan tool call in the history
