"""``rho-agent serve`` as a real process: it listens on loopback, refuses other binds without a
token, stops cleanly on SIGTERM, and a pending approval survives a restart (the second
process answers the call the first one left in the trace)."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from server_support import Serve, http, place, serve_env, serve_refused

from rho_adapters.fakes.loopback import LoopbackServer
from rho_adapters.fakes.wire import call, text_reply, tool_reply
from rho_entry.runtime.collector import HELD_THRESHOLD


@pytest.fixture
def model_server() -> Iterator[LoopbackServer]:
    write = call("write", {"path": "out.txt", "content": "hi\n"}, call_id="c1")
    with LoopbackServer([tool_reply(write), text_reply("Written.")]) as server:
        yield server


def test_a_pending_approval_survives_a_restart(
    tmp_path: Path, model_server: LoopbackServer
) -> None:
    where = place(tmp_path)
    env = serve_env(where.home, model_server.base_url, RHO_AGENT_SERVER_PROFILES="developer")
    first = Serve(where.work, env)
    try:
        created = http().post(
            f"{first.url}/api/sessions", json={"prompt": "write out.txt"}, headers=first.auth
        )
        sid = created.json()["id"]
        http().get(
            f"{first.url}/api/sessions/{sid}/stream",
            params={"until": "idle"},
            headers=first.auth,
            timeout=30,
        )
        detail = http().get(f"{first.url}/api/sessions/{sid}", headers=first.auth).json()
        assert detail["status"] == "awaiting_approval"
    finally:
        assert first.stop() == 0
    second = Serve(where.work, env)
    try:
        answered = http().post(  # it may wait answer_grace (5 s), httpx's default timeout
            f"{second.url}/api/sessions/{sid}/approvals/c1",
            json={"decision": "approve", "digest": detail["pending_approvals"][0]["digest"]},
            headers=second.auth,
            timeout=30,
        )
        assert answered.status_code == 202, answered.text
        stream = http().get(
            f"{second.url}/api/sessions/{sid}/stream",
            params={"until": "idle"},
            headers=second.auth,
            timeout=30,
        )
        assert "Written." in stream.text
        detail = http().get(f"{second.url}/api/sessions/{sid}", headers=second.auth).json()
        assert detail["status"] == "completed"
    finally:
        assert second.stop() == 0
    assert (where.work / "out.txt").read_text() == "hi\n"
    assert model_server.requests[1]["messages"][-1]["role"] == "tool"


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGTERM, 0), (signal.SIGQUIT, 131)])
def test_a_stop_signal_cancels_a_run_in_progress_and_leaves_it_resumable(
    tmp_path: Path, signum: signal.Signals, code: int
) -> None:
    """SIGTERM, and any other signal whose default ends a process (SIGQUIT here: exit 131).
    Before, SIGQUIT reached the CLI's start-up handler in the middle of a request: a
    traceback on stderr, the token file left on disk, the lifespan's shutdown never run."""
    where = place(tmp_path)
    from rho_adapters.fakes.wire import stall

    with LoopbackServer([text_reply("never", faults=(stall(),))]) as model:
        serve = Serve(where.work, serve_env(where.home, model.base_url))
        created = http().post(
            f"{serve.url}/api/sessions", json={"prompt": "wait"}, headers=serve.auth
        )
        sid = created.json()["id"]
        url = f"{serve.url}/api/sessions/{sid}/stream"
        with http().stream("GET", url, headers=serve.auth, timeout=30) as r:
            for line in r.iter_lines():
                if line == "event: llm_start":
                    break
        assert serve.stop(signum) == code
        said = serve.process.communicate(timeout=10)[1]
    assert "Traceback" not in said
    assert list((where.home / "server").iterdir()) == []  # the token file removed
    meta = (where.sessions / sid / "meta.json").read_text()
    assert '"status": "cancelled"' in meta
    assert '"pid": null' in meta


def test_binding_beyond_loopback_without_a_token_is_refused(tmp_path: Path) -> None:
    where = place(tmp_path)
    env = serve_env(where.home, "http://127.0.0.1:9/v1")
    done = serve_refused(where.work, env, "--host", "0.0.0.0", "--port", "0")  # noqa: S104
    assert done.returncode == 1
    assert "RHO_AGENT_SERVER_TOKEN" in done.stderr
    assert "0.0.0.0" in done.stderr  # noqa: S104 - the message names the host


def test_a_token_is_required_when_set(tmp_path: Path) -> None:
    where = place(tmp_path)
    env = serve_env(where.home, "http://127.0.0.1:9/v1", RHO_AGENT_SERVER_TOKEN="tok-123")
    serve = Serve(where.work, env)
    try:
        assert http().get(f"{serve.url}/api/sessions").status_code == 401
        headers = {"Authorization": "Bearer tok-123"}
        assert http().get(f"{serve.url}/api/sessions", headers=headers).status_code == 200
    finally:
        assert serve.stop() == 0


FROZEN_REPORTER = """
import gc, sys
import uvicorn
from rho_entry.server.serve import main

shutdown = uvicorn.Server.shutdown

async def said(self, sockets=None):
    said = f"frozen {gc.get_freeze_count()} held {gc.get_threshold()[2]}"
    print(said, file=sys.stderr, flush=True)
    await shutdown(self, sockets)

uvicorn.Server.shutdown = said
sys.exit(main(["--port", "0"]))
"""


def test_serve_freezes_its_start_up_heap_once_it_listens(tmp_path: Path) -> None:
    """Once listening, the start-up heap is in the collector's permanent generation (its
    full passes skip it): ``gc.get_freeze_count()`` as the server stops, in the process; and
    full passes are held off (``runtime.collector``: the third threshold 100, not 10)."""
    where = place(tmp_path)
    env = serve_env(where.home, "http://127.0.0.1:9/v1", RHO_AGENT_SERVER_TOKEN="tok-123")
    process = subprocess.Popen(
        [sys.executable, "-c", FROZEN_REPORTER],
        cwd=where.work,
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    listening = process.stderr.readline()
    assert "listening on" in listening, listening + process.stderr.read()
    process.send_signal(signal.SIGTERM)
    said = process.stderr.read()
    assert process.wait(30) == 0, said
    frozen = re.search(r"frozen (\d+) held (\d+)", said)
    assert frozen, said
    assert int(frozen.group(2)) == HELD_THRESHOLD
    # the modules, the app and uvicorn's objects: tens of thousands (none when not frozen)
    assert int(frozen.group(1)) > 10_000
