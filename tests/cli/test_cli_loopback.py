"""The real CLI against the loopback fake OpenAI server: a tool loop, errors, cancel."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_support import Terminal, rho

from rho_adapters.fakes.loopback import LoopbackServer
from rho_adapters.fakes.wire import call, http_error, raw_reply, stall, text_reply, tool_reply


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("hello\n")
    return work


def test_one_shot_tool_loop_against_the_server(workspace: Path, tmp_path: Path) -> None:
    replies = [
        tool_reply(call("list", {"path": "."})),
        text_reply("The directory holds notes.txt.", deltas=6),
    ]
    with LoopbackServer(replies) as server:
        result = rho(
            "--base-url",
            server.base_url,
            "-m",
            "fake-model",
            "what is here?",
            cwd=workspace,
            home=tmp_path / "home",
        )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "The directory holds notes.txt."
    assert "● list(path='.')" in result.stderr
    assert "⎿" in result.stderr
    tool_message = server.requests[1]["messages"][-1]
    assert tool_message["role"] == "tool"
    assert "notes.txt" in tool_message["content"]


def test_json_events_against_the_server(workspace: Path, tmp_path: Path) -> None:
    with LoopbackServer([text_reply("Just text.", deltas=3)]) as server:
        result = rho(
            "--base-url",
            server.base_url,
            "-m",
            "fake-model",
            "--json",
            "hi",
            cwd=workspace,
            home=tmp_path / "home",
        )
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    deltas = "".join(line["text"] for line in lines if line["kind"] == "text_delta")
    assert deltas == "Just text."
    assert lines[-1]["kind"] == "result"
    assert lines[-1]["usage"]["input_tokens"] == 10


def test_authentication_failure_exits_2(workspace: Path, tmp_path: Path) -> None:
    with LoopbackServer([http_error(401, "invalid api key")]) as server:
        result = rho(
            "--base-url",
            server.base_url,
            "-m",
            "fake-model",
            "hi",
            cwd=workspace,
            home=tmp_path / "home",
        )
    assert result.returncode == 2, result.stderr
    assert "invalid api key" in result.stderr
    assert "Traceback" not in result.stderr


def test_ctrl_c_during_a_stalled_stream_keeps_the_repl(workspace: Path, tmp_path: Path) -> None:
    replies = [
        text_reply("partial answer that stalls", deltas=4, faults=(stall(after=0),)),
        text_reply("second answer"),
    ]
    with LoopbackServer(replies) as server:
        term = Terminal(
            "--base-url",
            server.base_url,
            "-m",
            "fake-model",
            cwd=workspace,
            home=tmp_path / "home",
        )
        try:
            term.expect(r"/help for commands")
            term.send("first\r")
            term.expect(r"thinking \d+s")  # the spinner, while the stream stalls
            _wait_for(lambda: len(server.requests) == 1)  # cancel mid-stream, not mid-connect
            term.send("\x03")
            term.expect(r"turn cancelled; the session is still here")
            term.send("again\r")
            term.expect(r"second answer")
            term.send("/exit\r")
            assert term.wait() == 0
        finally:
            term.close()


def _wait_for(condition: Callable[[], bool], timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.05)


def test_endpoint_errors_name_the_endpoint_once_show_retries_and_how_to_resume(
    workspace: Path, tmp_path: Path
) -> None:
    """Issue 16: the header names the provider and URL; a retry is shown on stderr, in --json
    and in the trace; the error is printed once, with what to check and how to resume."""
    home = tmp_path / "home"
    replies = [http_error(429, "slow down", retry_after=0), http_error(404, "no such model")]
    with LoopbackServer(replies) as server:
        result = rho("--base-url", server.base_url, "-m", "nope", "hi", cwd=workspace, home=home)
    assert result.returncode == 2, result.stderr
    err = result.stderr
    assert f"OpenAI-compatible server at {server.base_url}" in err.splitlines()[0]
    assert "retrying in 0.0 s (429, attempt 2/3)" in err
    assert err.count("no such model") == 1
    assert "check --model" in err
    session_id = err.splitlines()[0].rsplit("session ", 1)[1].strip()
    assert f"rho-agent --resume {session_id}" in err
    with LoopbackServer(replies) as server:
        result = rho(
            "--base-url", server.base_url, "-m", "nope", "--json", "hi", cwd=workspace, home=home
        )
    kinds = [json.loads(line)["kind"] for line in result.stdout.splitlines()]
    assert "retry" in kinds
    traces = [p.read_text() for p in home.rglob("*.jsonl")]
    assert sum('"kind": "retry"' in t or '"kind":"retry"' in t for t in traces) == 2


def test_a_base_url_login_is_not_shown_nor_kept(workspace: Path, tmp_path: Path) -> None:
    """--base-url http://user:PW@gateway/v1: the run header on stderr printed the password
    (a terminal, a CI log), and config.yaml kept it for every resume and export."""
    home = tmp_path / "home"
    with LoopbackServer([text_reply("Fine.")]) as server:
        url = server.base_url.replace("http://", "http://gw:pw-gw-91d0@")
        result = rho("--base-url", url, "-m", "fake-model", "hi", cwd=workspace, home=home)
    assert result.returncode == 0, result.stderr
    assert "Fine." in result.stdout
    header = result.stderr.splitlines()[0]
    assert f"OpenAI-compatible server at {url.replace('pw-gw-91d0', '***')}" in header
    assert "pw-gw-91d0" not in result.stderr
    (session,) = (home / "rho" / "sessions").iterdir()
    for stored in session.iterdir():
        if stored.is_file():
            assert "pw-gw-91d0" not in stored.read_text(), stored.name


def test_a_skipped_stream_event_is_a_trace_event_in_json_and_the_trace(
    workspace: Path, tmp_path: Path
) -> None:
    """Garbage and an unknown event type in the model stream: the answer is whole, and each
    is a ``trace`` event (``parse_error``, ``unknown_event``) in ``--json`` and trace.jsonl."""
    raw = (
        b'data: {"choices": [{"index": 0, "delta": {"content": "All "}}]}\n\n',
        b"data: {not json at all\n\n",
        b"event: heartbeat\ndata: {}\n\n",
        b'data: {"choices": [{"index": 0, "delta": {"content": "good."}}]}\n\n',
        b'data: {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}\n\n',
        b"data: [DONE]\n\n",
    )
    home = tmp_path / "home"
    with LoopbackServer([raw_reply(*raw)]) as server:
        result = rho(
            "--base-url", server.base_url, "-m", "fake-model", "--json", "hi",
            cwd=workspace, home=home,
        )  # fmt: skip
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    traces = [(e["name"], e["detail"]) for e in lines if e["kind"] == "trace"]
    assert traces == [("parse_error", "{not json at all"), ("unknown_event", "{}")]
    assert lines[-1]["text"] == "All good."
    (trace_file,) = (home / "rho" / "sessions").glob("*/trace.jsonl")
    stored = [json.loads(line) for line in trace_file.read_text().splitlines()]
    assert [e["name"] for e in stored if e["kind"] == "trace"] == ["parse_error", "unknown_event"]
