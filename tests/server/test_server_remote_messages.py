"""What ``rho-agent --server URL`` says, as a user reads it (issue 30: F13, F15): a session
whose working directory is gone is refused with its name, before anything is accepted; the
answer ends its line and the usage follows, as a local run; ``--list`` has a header and one
line per session; a URL that is not a rho-agent server is named as such."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from server_support import Place, Serve, app_for, client_for, http, place, serve_env, wait_idle

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))  # the in-process CLI
from cli_support import rho

from rho_adapters.fakes import ScriptedModel, text
from rho_adapters.fakes.loopback import LoopbackServer
from rho_adapters.fakes.wire import text_reply
from rho_adapters.store import FileSessionStore
from rho_domain.config import AgentConfig
from rho_domain.ports.store import SessionRecord


def _cli(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """The client by the CLI's ``main`` in this process (tests/cli's ``cli_support.rho``,
    ``env`` over its minimal environment): what it says is the test, and a process costs
    ~0.5 s of CPU; test_server_remote.py runs ``--server`` in processes of their own."""
    return rho(*args, cwd=cwd, home=Path(env["HOME"]), **env)


def _client_env(where: Place, env: dict[str, str]) -> dict[str, str]:
    """The same user in another directory: the client finds the token serve wrote."""
    return {
        **{k: v for k, v in env.items() if k == "PYTHONPATH"},
        "PATH": env["PATH"],
        "HOME": str(where.home),
        "RHO_AGENT_HOME": str(where.home),
        "NO_COLOR": "1",
    }


@pytest.fixture(scope="module")
def served(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[Place, Serve, dict[str, str]]]:
    """One ``rho-agent serve`` for the module's tests (each a client of its own sessions,
    told apart by ``_new_sessions``): a server start is most of a test's CPU time."""
    where = place(tmp_path_factory.mktemp("served"))
    replies = [text_reply("first answer"), text_reply("second answer")]
    with LoopbackServer(replies, repeat=True) as model:
        env = serve_env(where.home, model.base_url)
        serve = Serve(where.work, env)
        try:
            yield where, serve, _client_env(where, env)
        finally:
            assert serve.stop() == 0


def _session_ids(where: Place) -> list[str]:
    if not where.sessions.is_dir():  # no session yet
        return []
    return sorted(p.name for p in where.sessions.iterdir() if p.is_dir())


def _new_sessions(where: Place, before: list[str]) -> list[str]:
    """The sessions made since ``before`` (the server is the module's: others have some)."""
    return sorted(set(_session_ids(where)) - set(before))


def test_a_session_whose_working_dir_is_gone_is_refused_with_its_name(
    served: tuple[Place, Serve, dict[str, str]], tmp_path: Path
) -> None:
    where, serve, env = served
    gone = where.work / "project"
    gone.mkdir()
    before = _session_ids(where)
    first = _cli("--server", serve.url, "-w", "project", "hello", cwd=tmp_path, env=env)
    assert first.returncode == 0, first.stderr
    (session_id,) = _new_sessions(where, before)
    trace = where.sessions / session_id / "trace.jsonl"
    lines_before = trace.read_text(encoding="utf-8").count("\n")
    shutil.rmtree(gone)

    # over HTTP: 409 naming the directory, nothing accepted
    answer = http().post(
        f"{serve.url}/api/sessions/{session_id}/chat",
        json={"prompt": "again"},
        headers=serve.auth,
    )
    assert answer.status_code == 409, answer.text
    error = answer.json()["error"]
    assert error["code"] == "conflict"
    assert str(gone) in error["message"]
    assert "does not exist" in error["message"]

    # from the terminal: the same message, printed, exit 1
    again = _cli("--server", serve.url, "--resume", session_id, "again", cwd=tmp_path, env=env)
    assert again.returncode == 1
    assert str(gone) in again.stderr, again.stderr
    assert "does not exist" in again.stderr
    assert trace.read_text(encoding="utf-8").count("\n") == lines_before  # no run started

    # recreated, the session runs again
    gone.mkdir()
    back = _cli("--server", serve.url, "--resume", session_id, "again", cwd=tmp_path, env=env)
    assert back.returncode == 0, back.stderr
    assert "answer" in back.stdout


def test_the_answer_ends_its_line_and_the_usage_follows_as_a_local_run(
    served: tuple[Place, Serve, dict[str, str]], tmp_path: Path
) -> None:
    _, serve, env = served
    done = _cli("--server", serve.url, "x", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.endswith("answer\n"), repr(done.stdout)
    usage = done.stderr.splitlines()[-1]  # the usage line, last, as after a local run
    assert "in " in usage
    assert "out " in usage
    quiet = _cli("--server", serve.url, "-q", "x", cwd=tmp_path, env=env)
    assert quiet.returncode == 0, quiet.stderr
    assert quiet.stdout in {"first answer\n", "second answer\n"}, repr(quiet.stdout)


def test_resume_without_a_message_says_there_is_nothing_to_continue(
    served: tuple[Place, Serve, dict[str, str]], tmp_path: Path
) -> None:
    where, serve, env = served
    before = _session_ids(where)
    assert _cli("--server", serve.url, "hello", cwd=tmp_path, env=env).returncode == 0
    (session_id,) = _new_sessions(where, before)
    done = _cli("--server", serve.url, "--resume", session_id, cwd=tmp_path, env=env)
    assert done.returncode == 1
    assert "nothing to continue" in done.stderr
    assert f"--resume {session_id}" in done.stderr


def test_the_list_has_a_header_and_one_line_per_session(
    served: tuple[Place, Serve, dict[str, str]], tmp_path: Path
) -> None:
    where, serve, env = served
    assert (
        _cli("--server", serve.url, "first\nsecond\n\nthird", cwd=tmp_path, env=env).returncode == 0
    )
    assert _cli("--server", serve.url, "x" * 100, cwd=tmp_path, env=env).returncode == 0
    listed = _cli("--server", serve.url, "--list", cwd=tmp_path, env=env)
    assert listed.returncode == 0, listed.stderr
    header, *rows = listed.stdout.splitlines()
    assert header.split() == ["ID", "STATUS", "LIVENESS", "FIRST", "PROMPT"]
    assert len(rows) == len(_session_ids(where)), listed.stdout  # this test's two among them
    assert rows[1].endswith("first second third")  # newest first
    assert rows[0].endswith("x" * 59 + "…")


class _NotRho(BaseHTTPRequestHandler):
    """Some other HTTP server: 404 with an empty body for every path."""

    def do_GET(self) -> None:
        self._empty()

    def do_POST(self) -> None:
        self._empty()

    def _empty(self) -> None:
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        del format, args


class _Welcome(_NotRho):
    """A web server's welcome page, 200 for every path (an nginx before the real one)."""

    def _empty(self) -> None:
        page = b"<html><body>Welcome to nginx!</body></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(page)))
        self.end_headers()
        self.wfile.write(page)


@pytest.mark.parametrize(
    ("handler", "status"),
    [(_NotRho, "HTTP 404 Not Found from"), (_Welcome, "HTTP 200 OK from")],
    ids=["404", "200-html"],
)
def test_a_url_that_is_not_a_rho_agent_server_is_named(
    tmp_path: Path, handler: type[_NotRho], status: str
) -> None:
    """The 200 page was 'internal error: JSONDecodeError' for a task."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    env = {
        **{k: v for k, v in os.environ.items() if k == "PYTHONPATH"},
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "RHO_AGENT_SERVER_TOKEN": "t",
    }
    try:
        for args in (("x",), ("--list",)):
            done = _cli("--server", url, *args, cwd=tmp_path, env=env)
            assert done.returncode == 1
            assert status in done.stderr, done.stderr
            assert "is this a rho-agent serve server?" in done.stderr
            assert "internal error" not in done.stderr
    finally:
        server.shutdown()
        server.server_close()


async def test_a_run_that_cannot_start_is_logged_and_streamed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The directory goes between the check and the run (the check cannot close that race):
    the run's failure to open reaches the log and the session's subscribers, not silence."""
    where = place(tmp_path)
    gone = where.work / "project"
    gone.mkdir()
    app = app_for(where, ScriptedModel([text("first"), text("second")]))
    host = app.state.host
    async with client_for(app) as client:
        created = await client.post(
            "/api/sessions", json={"prompt": "hi", "working_dir": "project"}
        )
        session_id = created.json()["id"]
        await wait_idle(client, session_id)
        shutil.rmtree(gone)
        feed = await host.feeds.feed(session_id)
        subscription = feed.subscribe()
        with caplog.at_level(logging.WARNING, logger="rho_entry.server"):
            handle = await host.runs.dispatch(session_id, "again", feed, done=lambda: None)
            await handle.wait_done()
            for _ in range(100):  # the pump reports once the handle is done
                if any("could not start" in r.getMessage() for r in caplog.records):
                    break
                await asyncio.sleep(0.01)
        items = []
        while not subscription.queue.empty():
            items.append(subscription.queue.get_nowait())
        feed.unsubscribe(subscription)
    (warning,) = [r.getMessage() for r in caplog.records if "could not start" in r.getMessage()]
    assert session_id in warning
    assert str(gone) in warning
    errors = [json.loads(i.data) for i in items if i.kind == "error"]
    assert len(errors) == 1, items
    assert str(gone) in errors[0]["message"]


async def test_a_session_stored_with_a_relative_working_dir_is_not_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A relative directory means the cwd of whoever stored it, not the server's: such a
    session (an old eval's, a library one's with ".") is in no listing and cannot be driven,
    even when the server runs from the directory it would resolve to."""
    where = place(tmp_path)
    store = FileSessionStore(where.sessions)
    for session_id, working_dir in (("relative0001", "."), ("absolute0001", str(where.work))):
        config = AgentConfig(model="scripted", working_dir=working_dir)
        await store.create(SessionRecord(id=session_id, created_at=time.time(), config=config))
        await store.release(session_id)
    monkeypatch.chdir(where.work)  # "." would resolve inside the server's root
    app = app_for(where, ScriptedModel([text("ok")]))
    async with client_for(app) as client:
        listed = (await client.get("/api/sessions")).json()["sessions"]
        assert [row["id"] for row in listed] == ["absolute0001"]
        refused = await client.post("/api/sessions/relative0001/chat", json={"prompt": "hi"})
        assert refused.status_code == 404, refused.text
