"""Real processes: a session in a child process is paused, directed and cancelled by the
monitor from this process; a session SIGKILLed mid-tool resumes with valid history and usage."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from store_support import build_session

from rho_adapters.clock import SystemClock
from rho_adapters.fakes import text
from rho_adapters.store import FileSessionStore, FileSignals, TornTraceWarning, read_trace
from rho_domain.errors import SessionLocked
from rho_domain.events import Interrupted, MessageAdded
from rho_domain.messages import AssistantMessage, ToolResultMessage, UserMessage
from rho_domain.run import RunStatus
from rho_domain.state import State
from rho_entry.cli import monitor

CHILD = Path(__file__).with_name("store_child.py")


@pytest.fixture
def spawn(tmp_path: Path) -> Iterator[Callable[[str, str], subprocess.Popen[str]]]:
    started: list[subprocess.Popen[str]] = []

    def start(session_id: str, scenario: str) -> subprocess.Popen[str]:
        args = [sys.executable, str(CHILD), str(tmp_path / "sessions"), session_id, scenario]
        proc = subprocess.Popen(
            [*args, str(tmp_path / "marker")], stdout=subprocess.PIPE, text=True
        )
        started.append(proc)
        return proc

    yield start
    for proc in started:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def wait_until(predicate: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.05)


def kinds(trace: Path) -> list[str]:
    if not trace.exists():
        return []
    return [json.loads(line)["kind"] for line in trace.read_bytes().splitlines() if line.strip()]


def ps(root: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, dict[str, object]]:
    capsys.readouterr()
    assert monitor.main([str(root), "ps", "--json"]) == 0
    return {row["id"]: row for row in json.loads(capsys.readouterr().out)}


async def test_monitor_pauses_directs_and_cancels_another_process(
    tmp_path: Path, spawn: Callable[..., subprocess.Popen[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    root, session_dir = tmp_path / "sessions", tmp_path / "sessions" / "loop1"
    trace = session_dir / "trace.jsonl"
    proc = spawn("loop1", "loop")
    wait_until(lambda: kinds(trace).count("tool_end") >= 2, "the child to run tools")
    assert ps(root, capsys)["loop1"]["liveness"] == "running"
    with pytest.raises(SessionLocked, match=f"pid {proc.pid}"):
        await FileSessionStore(root).open("loop")

    assert monitor.main([str(root), "pause", "loop"]) == 0
    wait_until(lambda: "interruption" in kinds(trace), "the pause to be noticed")
    calls_when_paused = kinds(trace).count("llm_start")
    beat = json.loads((session_dir / "meta.json").read_bytes())["heartbeat"]
    wait_until(
        lambda: json.loads((session_dir / "meta.json").read_bytes())["heartbeat"] > beat,
        "a heartbeat while paused",
    )
    assert kinds(trace).count("llm_start") == calls_when_paused  # no model call while paused
    assert ps(root, capsys)["loop1"]["liveness"] == "paused"

    assert monitor.main([str(root), "directive", "loop1", "focus", "on", "the", "logs"]) == 0
    assert monitor.main([str(root), "resume", "loop1"]) == 0
    wait_until(lambda: "directive" in kinds(trace), "the directive to be applied")
    wait_until(lambda: kinds(trace).count("llm_start") > calls_when_paused + 1, "more model calls")

    assert monitor.main([str(root), "cancel", "loop1"]) == 0
    assert proc.wait(timeout=30) == 0
    assert proc.stdout is not None
    assert proc.stdout.read().strip() == "cancelled"
    assert not (session_dir / "cancel").exists()  # consumed: the next run is not cancelled
    events = read_trace(trace).events
    directives = [
        e.message
        for e in events
        if isinstance(e, MessageAdded)
        and isinstance(e.message, UserMessage)
        and e.message.origin == "directive"
    ]
    assert len(directives) == 1
    assert "focus on the logs" in directives[0].content
    assert kinds(trace)[-1] == "run_end"
    assert ps(root, capsys)["loop1"]["liveness"] == "cancelled"


async def test_sigkill_mid_tool_resumes_with_valid_history_and_usage(
    tmp_path: Path, spawn: Callable[..., subprocess.Popen[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "sessions"
    trace = root / "kill1" / "trace.jsonl"
    proc = spawn("kill1", "kill")
    wait_until((tmp_path / "marker").exists, "the tool to start")
    wait_until(lambda: "tool_start" in kinds(trace), "tool_start in the trace")
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    with trace.open("ab") as handle:  # as if the kill had also torn a line mid-write
        handle.write(b'{"v":1,"kind":"message","at":1,"mess')
    assert ps(root, capsys)["kill1"]["liveness"] == "stale"

    store = FileSessionStore(root, heartbeat=0.05)
    with pytest.warns(TornTraceWarning, match="torn last line"):
        record, events = await store.open("kill1")
    state = State.from_events(events)
    assert (state.usage.input_tokens, state.usage.output_tokens) == (10, 2)
    assert isinstance(state.messages[-2], AssistantMessage)
    interrupted = state.messages[-1]
    assert isinstance(interrupted, ToolResultMessage)
    assert interrupted.call_id == "call_block"
    assert interrupted.is_error

    session = build_session(
        [text("recovered", input_tokens=4, output_tokens=1)],
        store=store,
        session_id=record.id,
        state=state,
        created=True,
        config=record.config,
    )
    result = await session.run("carry on")
    await session.close()
    assert result.ok
    [request] = session.model.requests  # type: ignore[attr-defined]
    sent = list(request.messages)
    call_at = next(i for i, m in enumerate(sent) if isinstance(m, AssistantMessage))
    assert isinstance(sent[call_at + 1], ToolResultMessage)  # the history is valid for an API

    reader = FileSessionStore(root)
    _, again = await reader.open("kill1")
    await reader.release("kill1")
    final = State.from_events(again)
    assert (final.usage.input_tokens, final.usage.output_tokens) == (14, 3)
    assert final.status == "completed"
    assert (root / "kill1" / "trace.torn").read_bytes().startswith(b'{"v":1,"kind":"message"')


async def test_a_paused_session_cancelled_from_another_process_resumes_unpaused(
    tmp_path: Path, spawn: Callable[..., subprocess.Popen[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 29, item 5: the run that ends clears the signals given to it (pause and cancel),
    so the next run (the user's ``--resume``) neither starts paused nor stops at once."""
    root, session_dir = tmp_path / "sessions", tmp_path / "sessions" / "held1"
    trace = session_dir / "trace.jsonl"
    proc = spawn("held1", "loop")
    wait_until(lambda: kinds(trace).count("tool_end") >= 1, "the child to run tools")
    assert monitor.main([str(root), "pause", "held1"]) == 0
    wait_until(lambda: "interruption" in kinds(trace), "the pause to be noticed")
    assert monitor.main([str(root), "cancel", "held1"]) == 0
    assert proc.wait(timeout=30) == 0
    assert proc.stdout is not None
    assert proc.stdout.read().strip() == "cancelled"
    assert not (session_dir / "pause").exists()
    assert not (session_dir / "cancel").exists()
    assert ps(root, capsys)["held1"]["liveness"] == "cancelled"

    store = FileSessionStore(root, heartbeat=0.05)
    record, events = await store.open("held1")
    session = build_session(
        [text("carried on")],
        store=store,
        signals=FileSignals(root, poll=0.05),
        session_id=record.id,
        state=State.from_events(events),
        created=True,
        config=record.config,
        clock=SystemClock(),
    )
    result = await asyncio.wait_for(session.run("carry on"), 30)  # paused: it would hang
    await session.close()
    assert result.status is RunStatus.COMPLETED
    assert result.text == "carried on"
    after = read_trace(trace).events[len(events) :]
    assert not [e for e in after if isinstance(e, Interrupted)]
