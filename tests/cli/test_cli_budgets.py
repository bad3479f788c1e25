"""Budgets from the command line (issue 29, item 7), in real ``rho-agent`` processes against
the loopback fake OpenAI server: the wall-time limit stops a model call and a tool call while
they run (not after them), and the per-session cost limit holds across ``--resume``."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from cli_support import rho, rho_process

from rho_adapters.fakes.loopback import LoopbackServer
from rho_adapters.fakes.wire import call, stall, text_reply, tool_reply
from rho_adapters.store import read_trace
from rho_domain import events as ev
from rho_domain.not_run import OUT_OF_TIME
from rho_domain.state import State


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("hello\n")
    return work


def _session(home: Path) -> tuple[str, tuple[ev.Event, ...]]:
    (directory,) = (home / "rho" / "sessions").iterdir()
    return directory.name, read_trace(directory / "trace.jsonl").events


def _ends(events: tuple[ev.Event, ...]) -> list[ev.RunEnded]:
    return [e for e in events if isinstance(e, ev.RunEnded)]


def _run_seconds(events: tuple[ev.Event, ...]) -> float:
    """The first run's length by the times it recorded: what the limit governs. The test's
    own watch also counts the ``rho-agent`` process's start, seconds at a load of 12."""
    (start, *_) = [e for e in events if isinstance(e, ev.RunStarted)]
    return _ends(events)[0].at - start.at


def test_a_14_second_answer_stops_at_a_2_second_wall_limit(workspace: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    late = text_reply("I took my time over this answer.", faults=(stall(after=2, seconds=14),))
    with LoopbackServer([late]) as server:
        started = time.monotonic()
        done = rho_process(
            "--base-url", server.base_url, "-m", "fake-model", "--max-wall-time", "2", "why?",
            cwd=workspace, home=home, timeout=60,
        )  # fmt: skip
        took = time.monotonic() - started
    assert done.returncode == 3, done.stderr
    assert took < 60, f"the run took {took:.1f} s under a 2 s limit"  # a hang, not a speed
    _, events = _session(home)
    (end,) = _ends(events)
    assert end.status == "budget_exceeded"
    assert _run_seconds(events) < 14  # by the run's own clock: the limit, not the answer
    errors = [e for e in events if isinstance(e, ev.ErrorOccurred)]
    assert [e.error_type for e in errors] == ["BudgetExceeded"]
    assert "seconds of 2 allowed for this run" in errors[0].message
    answers = [
        e.message.text
        for e in events
        if isinstance(e, ev.MessageAdded) and e.message.role == "assistant"
    ]
    (answer,) = answers  # what had arrived is kept, marked as cut
    assert answer.startswith("I")
    assert answer.endswith("\n[response interrupted: the run's time budget ran out]")
    assert "over this answer" not in answer


def test_a_long_tool_call_is_stopped_at_the_deadline_and_answered(
    workspace: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    marker = "sleep 14.2718"  # a command line nothing else on the machine runs
    slow = call("bash", {"command": f"{marker} && touch late.txt"}, "c_slow")
    replies = [tool_reply(slow), text_reply("never asked")]
    with LoopbackServer(replies) as server:
        started = time.monotonic()
        done = rho_process(
            "--base-url", server.base_url, "-m", "fake-model", "--profile", "developer", "-y",
            "--max-wall-time", "2", "wait a bit",
            cwd=workspace, home=home, timeout=60,
        )  # fmt: skip
        took = time.monotonic() - started
        requests = len(server.requests)
    assert done.returncode == 3, done.stderr
    assert took < 60, f"the run took {took:.1f} s under a 2 s limit"  # a hang, not a speed
    assert requests == 1  # the model is not asked again after the deadline
    running = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True)
    assert running.stdout == "", "the tool's process outlived the deadline"
    assert not (workspace / "late.txt").exists()
    _, events = _session(home)
    assert _ends(events)[-1].status == "budget_exceeded"
    assert _run_seconds(events) < 14  # by the run's own clock: the limit, not the sleep
    (tool_end,) = [e for e in events if isinstance(e, ev.ToolEnded)]
    assert (tool_end.call_id, tool_end.content, tool_end.is_error) == ("c_slow", OUT_OF_TIME, True)
    state = State.from_events(events, repair=False)
    assert state.unanswered_calls() == ()  # no orphan call: the next request is valid
    results = [m for m in state.messages if m.role == "tool"]
    assert [r.content for r in results] == [OUT_OF_TIME]


def _config(home: Path, session_id: str) -> dict[str, Any]:
    import yaml

    text = (home / "rho" / "sessions" / session_id / "config.yaml").read_text()
    data = yaml.safe_load(text)
    assert isinstance(data, dict)
    return data


def _priced_run(
    server: LoopbackServer, workspace: Path, home: Path, *args: str
) -> subprocess.CompletedProcess[str]:
    # gpt-4o is priced at $2.50 per million input tokens: 8,000 tokens cost $0.02
    return rho("--base-url", server.base_url, "-m", "gpt-4o", *args, cwd=workspace, home=home)


def test_the_session_cost_limit_holds_across_resumes(workspace: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    replies = [text_reply(f"answer {n}", usage=(8000, 0)) for n in range(1, 5)]
    with LoopbackServer(replies) as server:
        first = _priced_run(server, workspace, home, "--session-max-cost", "0.04", "one")
        assert first.returncode == 0, first.stderr
        sid, _ = _session(home)
        second = _priced_run(server, workspace, home, "--resume", sid, "two")
        assert second.returncode == 0, second.stderr
        third = _priced_run(server, workspace, home, "--resume", sid, "three")
        asked = len(server.requests)
    assert third.returncode == 3, third.stderr
    assert asked == 2  # the third run never called the model: the session had spent $0.04
    _, events = _session(home)
    assert [e.status for e in _ends(events)] == ["completed", "completed", "budget_exceeded"]
    assert _ends(events)[-1].session_usage.cost_usd == pytest.approx(0.04)
    (error,) = [e for e in events if isinstance(e, ev.ErrorOccurred)]
    assert "0.04 USD of 0.04 allowed for this session" in error.message


def test_a_limit_given_on_resume_replaces_only_that_limit(workspace: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    replies = [text_reply(f"answer {n}", usage=(8000, 0)) for n in range(1, 4)]
    with LoopbackServer(replies) as server:
        first = _priced_run(
            server, workspace, home, "--session-max-cost", "0.02", "--max-tool-calls", "7", "one"
        )
        assert first.returncode == 0, first.stderr
        sid, _ = _session(home)
        other = _priced_run(server, workspace, home, "--resume", sid, "--max-tool-calls", "9", "2")
        assert other.returncode == 3, other.stderr  # the stored session limit still holds
        assert "0.02 USD of 0.02 allowed for this session" in other.stderr
        raised = _priced_run(
            server, workspace, home, "--resume", sid, "--session-max-cost", "0.10", "three"
        )
        asked = len(server.requests)
    assert raised.returncode == 0, raised.stderr  # $0.02 spent, $0.10 allowed for this run
    assert asked == 2
    stored = _config(home, sid)["budget"]
    assert (stored["session_max_cost_usd"], stored["max_tool_calls"]) == (0.02, 7)


def test_budget_flags_are_checked_and_named(workspace: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    bad = rho("--max-wall-time", "-1", "--model", "demo", "x", cwd=workspace, home=home)
    assert bad.returncode == 1
    assert "--max-wall-time: max_wall_seconds must be a number of seconds" in bad.stderr
    zero = rho("--max-tool-calls", "0", "--model", "demo", "x", cwd=workspace, home=home)
    assert zero.returncode == 1
    assert "--max-tool-calls: max_tool_calls must be a whole number, 1 or more" in zero.stderr
    for tokens in ("0", "-5"):  # a run that could not begin: it ended budget_exceeded, exit 3
        bad = rho("--max-tokens", tokens, "--model", "demo", "x", cwd=workspace, home=home)
        assert bad.returncode == 1, bad.stderr
        said = f"--max-tokens: max_total_tokens must be a whole number, 1 or more; got {tokens}"
        assert said in bad.stderr
    shown = rho("--help", cwd=workspace, home=home).stdout
    for flag in (
        "--max-tool-calls", "--max-wall-time", "--max-cost", "--max-tokens",
        "--session-max-turns", "--session-max-tool-calls", "--session-max-wall-time",
        "--session-max-cost",
    ):  # fmt: skip
        assert flag in shown


def test_a_tool_call_budget_per_run_and_per_session(workspace: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    listing = [tool_reply(call("list", {"path": "."}, f"c{n}")) for n in range(1, 5)]
    with LoopbackServer([*listing, text_reply("done")]) as server:
        per_run = rho(
            "--base-url", server.base_url, "-m", "fake-model", "--max-tool-calls", "2",
            "--json", "list it again and again",
            cwd=workspace, home=home,
        )  # fmt: skip
        asked = len(server.requests)
    assert per_run.returncode == 3, per_run.stderr
    assert asked == 2  # two model calls, two tool calls, then the limit
    result = json.loads(per_run.stdout.splitlines()[-1])
    assert result["status"] == "budget_exceeded"
