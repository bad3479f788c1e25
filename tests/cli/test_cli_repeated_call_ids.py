"""A tool call id the model repeats is made unique before anything keys on it. Everything
pairs a call with its result by id (the state, approvals, the next request's tool messages,
Anthropic's tool_result blocks); a server that numbered its calls per message (``call_0``
twice in one message, or again in the next turn) got two results under one id, which a
provider refuses on every later request (Anthropic: "tool_use ids must be unique"), so the
session could never be continued."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from cli_support import rho

from rho_adapters.fakes.loopback import LoopbackServer
from rho_adapters.fakes.wire import call, text_reply, tool_reply


def _ids(request: dict[str, Any]) -> tuple[list[str], list[str]]:
    """The call ids of a request's assistant messages, and the ids its tool messages answer."""
    calls = [
        c["id"]
        for m in request["messages"]
        if m["role"] == "assistant"
        for c in m.get("tool_calls") or ()
    ]
    answers = [m["tool_call_id"] for m in request["messages"] if m["role"] == "tool"]
    return calls, answers


def test_repeated_call_ids_reach_the_next_request_unique_and_answered_once(
    tmp_path: Path,
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("hello\n")
    listed, read = (
        call("list", {"path": "."}, "call_0"),
        call("read", {"path": "notes.txt"}, "call_0"),
    )
    replies = [
        tool_reply(listed, read),  # one id twice in one message
        tool_reply(call("glob", {"pattern": "*.txt"}, "call_0")),  # an earlier turn's id
        text_reply("done"),
    ]
    with LoopbackServer(replies) as server:
        done = rho("--base-url", server.base_url, "-m", "fake-model", "go", cwd=work,
                   home=tmp_path / "home")  # fmt: skip
    assert done.returncode == 0, done.stderr
    calls, answers = _ids(server.requests[-1])
    assert len(calls) == 3
    assert Counter(calls) == Counter(answers)  # each call answered once
    assert len(set(calls)) == 3, calls
    results = {
        m["tool_call_id"]: m["content"]
        for m in server.requests[-1]["messages"]
        if m["role"] == "tool"
    }
    assert "hello" in results[calls[1]]  # the read's own result under its own id
    assert "notes.txt" in results[calls[2]]
    trace = next((tmp_path / "home" / "rho" / "sessions").glob("*/trace.jsonl"))
    stored = [json.loads(line) for line in trace.read_text().splitlines()]
    kept = [
        c["id"]
        for e in stored
        if e["kind"] == "message" and e["message"]["role"] == "assistant"
        for c in e["message"]["tool_calls"]
    ]
    assert kept == calls  # the trace keeps the ids the requests sent
