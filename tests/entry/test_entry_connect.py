"""connect: a running session in another process answers between steps, a finished one is
read from its trace, and a coordinating agent starts with both."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rho_adapters.fakes import (
    FakeClock,
    ManualSignals,
    MemoryExecutor,
    ScriptedModel,
    call,
    text,
    tools,
)
from rho_adapters.fakes.loopback import LoopbackServer
from rho_adapters.fakes.wire import text_reply
from rho_adapters.store import FileSessionStore, request_cancel
from rho_domain.context_export import combine_exports
from rho_domain.errors import SessionNotFound
from rho_entry import Agent, AgentConfig, Session
from rho_entry.cli.connect import split_instruction
from rho_entry.connect import connect

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))  # program_zygote
from program_zygote import popen, run

HERE = Path(__file__).parent
ROOT = HERE.parents[1]


def _finished(root: Path, base_url: str = "http://127.0.0.1:9/v1") -> str:
    """A finished session that learned something about service B."""
    model = ScriptedModel([tools(call("read", {"path": "b.log"})), text("B restarted twice.")])
    session = Session(
        Agent(AgentConfig(profile="readonly", model="fake", base_url=base_url)),
        model=model,
        executor=MemoryExecutor({"b.log": "service B: restart at 08:00 and 08:30"}),
        clock=FakeClock(),
        store=FileSessionStore(root),
    )
    session.run_sync("What happened to service B?")
    return session.id


def _wait_for(predicate: object, what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def test_connect_a_running_process_and_a_finished_session(tmp_path: Path) -> None:
    root = tmp_path / "home" / "sessions"
    with LoopbackServer([text_reply("A's cache is cold; B restarted twice.")]) as server:
        finished = _finished(root, server.base_url)
        running = "aaaa00000001"
        child = popen(
            "rho",
            [sys.executable, str(HERE / "connect_child.py"), str(root), running, server.base_url],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            trace = root / running / "trace.jsonl"
            _wait_for(lambda: trace.exists() and '"tool_end"' in trace.read_text(), "a tool")
            done = run(
                "rho",
                [sys.executable, "-m", "rho_entry", "monitor", str(root), "connect",
                 running, finished[:6], "What do these sessions know together?"],
                cwd=tmp_path, text=True, timeout=60,
                env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "NO_COLOR": "1",
                     "RHO_AGENT_HOME": str(tmp_path / "home"),
                     # the coordinator runs on the user's endpoint, not on a source's
                     "OPENAI_BASE_URL": server.base_url,
                     **{k: v for k, v in os.environ.items() if k == "PYTHONPATH"}},
            )  # fmt: skip
        finally:
            request_cancel(root / running)
            _out, err = child.communicate(timeout=30)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"{running}: running"
    assert lines[1] == f"{finished}: trace"
    assert "A's cache is cold; B restarted twice." in done.stdout
    assert child.returncode == 0, err
    coordinator = lines[2].removeprefix("coordinator: ")
    meta = json.loads((root / coordinator / "meta.json").read_text())
    assert meta["labels"]["connected_from"] == f"{running},{finished}"
    sent = server.requests[0]["messages"]
    context = next(m["content"] for m in sent if m["role"] == "user")
    assert "the cache of service A is cold since 09:12" in context  # from the running process
    assert "service B: restart at 08:00 and 08:30" in context  # from the finished trace
    assert sent[-1] == {"role": "user", "content": "What do these sessions know together?"}
    assert not list((root / running / "exports").glob("*.request"))  # answered, not left


async def test_a_running_session_answers_an_export_request_between_steps() -> None:
    signals = ManualSignals()
    model = ScriptedModel([tools(call("read", {"path": "a.txt"})), text("done")])
    session = Session(
        Agent(AgentConfig(profile="readonly")),
        model=model,
        executor=MemoryExecutor({"a.txt": "alpha facts"}),
        clock=FakeClock(),
        signals=signals,
    )
    asked = signals.request_export(session.id)
    await session.run("read a")
    export = signals.exports[asked]
    assert export.startswith(f"session {session.id} · status running")
    assert "user: read a" in export
    assert await signals.export_requests(session.id) == ()


async def test_the_library_connects_finished_sessions(tmp_path: Path) -> None:
    first = await asyncio.to_thread(_finished, tmp_path)
    second = await asyncio.to_thread(_finished, tmp_path)
    connected = await connect([first, second], root=tmp_path, wait=0)
    assert [(e.session_id, e.source) for e in connected.sources] == [
        (first, "trace"),
        (second, "trace"),
    ]
    store = FileSessionStore(tmp_path)
    coordinator = await Session.resume(
        connected.session_id, store=store, model=ScriptedModel([text("combined")]),
        executor=MemoryExecutor(), clock=FakeClock(),
    )  # fmt: skip
    async with coordinator:
        assert coordinator.labels["connected_from"] == f"{first},{second}"
        assert coordinator.state.messages[0].content == combine_exports(connected.sources)  # type: ignore[union-attr]
        assert (await coordinator.run("and so?")).text == "combined"


def test_the_last_word_is_the_instruction_only_when_it_names_no_session(tmp_path: Path) -> None:
    first, second = _finished(tmp_path), _finished(tmp_path)
    assert split_instruction(tmp_path, [first, second]) == ([first, second], "")
    assert split_instruction(tmp_path, [first, second, "why?"]) == ([first, second], "why?")
    assert split_instruction(tmp_path, [first]) == ([first], "")


async def test_an_unknown_session_is_named(tmp_path: Path) -> None:
    with pytest.raises(SessionNotFound, match="no session matches 'nope'"):
        await connect(["nope"], root=tmp_path, wait=0)


def _ending_child(root: Path, session_id: str, go: Path) -> subprocess.Popen[str]:
    child = popen(
        "rho",
        [sys.executable, str(HERE / "connect_ending_child.py"), str(root), session_id, str(go)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    trace = root / session_id / "trace.jsonl"
    _wait_for(lambda: trace.exists() and '"llm_start"' in trace.read_text(), "the model call")
    return child


async def _asked(root: Path, session_id: str) -> None:
    """Wait (without blocking the loop) until connect's export request is on disk."""
    exports = root / session_id / "exports"
    for _ in range(600):
        if exports.is_dir() and list(exports.glob("*.request")):
            return
        await asyncio.sleep(0.05)
    raise AssertionError("connect never asked for the export")


async def test_a_source_that_finishes_while_asked_answers_at_its_end(tmp_path: Path) -> None:
    """Issue 29, item 9: the run ends before another checkpoint; the end of the run answers
    the export, and connect returns at once, not after its 30 s wait."""
    root, sid, go = tmp_path / "sessions", "ending000001", tmp_path / "go"
    child = _ending_child(root, sid, go)
    try:
        asking = asyncio.ensure_future(connect([sid], root=root))
        await _asked(root, sid)
        started = time.monotonic()  # from the end it waits for: the child's start is not its
        go.touch()
        connected = await asyncio.wait_for(asking, 60)
        took = time.monotonic() - started
    finally:
        _out, err = child.communicate(timeout=30)
    assert child.returncode == 0, err
    # well short of the 30 s it would wait otherwise; the source below says who answered
    assert took < 20, f"connect waited {took:.1f} s for a session that had finished"
    (export,) = connected.sources
    assert export.source == "running"  # answered by the run's end, not read from the trace
    assert "the queue drained at 10:40" in export.text


async def test_a_source_that_dies_while_asked_is_read_from_its_trace_at_once(
    tmp_path: Path,
) -> None:
    """A process killed while asked never answers: connect sees it gone (stale) and reads the
    trace instead of waiting out its deadline."""
    root, sid = tmp_path / "sessions", "killed000001"
    child = _ending_child(root, sid, tmp_path / "never")
    try:
        asking = asyncio.ensure_future(connect([sid], root=root))
        await _asked(root, sid)
        child.kill()
        child.wait()  # reaped, as its shell would: a zombie's pid still answers
        started = time.monotonic()  # from the death it must notice: not the child's start
        connected = await asyncio.wait_for(asking, 60)
        took = time.monotonic() - started
    finally:
        child.kill()
        child.communicate(timeout=30)
    # well short of the 30 s it would wait otherwise; the source below says how it ended
    assert took < 20, f"connect waited {took:.1f} s for a process that was gone"
    (export,) = connected.sources
    assert export.source == "trace: it finished (stale) while asked"
    assert "user: Watch the queue" in export.text
    assert not list((root / sid / "exports").glob("*.request"))


def test_a_hung_up_connect_withdraws_its_export_request(tmp_path: Path) -> None:
    """SIGHUP (the terminal closed, ssh dropped) while ``monitor connect`` waits for a running
    source's export: it killed the command, and its request stayed in the source's
    ``exports/`` for the source to answer unasked at its next checkpoint. It now ends as
    Ctrl+C does, the request withdrawn."""
    root, sid = tmp_path / "sessions", "hungup000001"
    child = _ending_child(root, sid, tmp_path / "never")
    try:
        command = popen(
            "rho",
            [sys.executable, "-m", "rho_entry", "monitor", str(root), "connect", sid],
            cwd=tmp_path,
            env={**os.environ, "RHO_AGENT_HOME": str(tmp_path / "home"), "NO_COLOR": "1"},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        exports = root / sid / "exports"
        _wait_for(lambda: exports.is_dir() and list(exports.glob("*.request")), "the request")
        command.send_signal(signal.SIGHUP)
        _out, err = command.communicate(timeout=60)
    finally:
        child.kill()
        child.communicate(timeout=30)
    assert not list(exports.glob("*.request"))
    assert command.returncode == 0, err  # as Ctrl+C: monitor's 0, not death by SIGHUP (-1)
