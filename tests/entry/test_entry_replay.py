"""Replaying a recorded session: exact reproduction, and edits found at the right step."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from rho_adapters.fakes import (
    FakeClock,
    MemoryExecutor,
    ReplayModel,
    ScriptedModel,
    call,
    text,
    tools,
)
from rho_adapters.store import FileSessionStore
from rho_domain.errors import StoreError
from rho_domain.run import RunStatus
from rho_entry import Agent, AgentConfig, Session
from rho_entry.replay import replay, replay_async

FILES = {"a.txt": "alpha\n", "b.txt": "beta\n"}


async def _record(root: Path) -> Path:
    """A developer session with parallel reads, an approval given between runs, a rejection
    with a reason, and a second prompt; returns its directory."""
    model = ScriptedModel(
        [
            tools(
                call("read", {"path": "a.txt"}, id="r1"),
                call("read", {"path": "b.txt"}, id="r2"),
                input_tokens=50,
                output_tokens=5,
            ),
            tools(call("write", {"path": "c.txt", "content": "gamma"}, id="w1")),
            tools(call("write", {"path": "d.txt", "content": "delta"}, id="w2")),
            tools(call("grep", {"pattern": "alpha", "path": "."}, id="g1")),
            text("Found alpha in a.txt."),
        ]
    )
    store = FileSessionStore(root)
    session = Session(
        Agent(AgentConfig(profile="developer")),
        model=model,
        executor=MemoryExecutor(dict(FILES)),
        clock=FakeClock(),
        store=store,
        interrupt_on_approval=False,  # the statuses, not ApprovalInterrupt: the CLI's flow
    )
    first = await session.run("Read both, then write c and d.")
    assert first.status is RunStatus.AWAITING_APPROVAL
    session.resolve_approval("w1", True)
    second = await session.run()
    assert second.status is RunStatus.AWAITING_APPROVAL
    session.resolve_approval("w2", False, reason="d.txt is not yours")
    assert (await session.run()).status is RunStatus.COMPLETED
    assert (await session.run("Where is alpha?")).text == "Found alpha in a.txt."
    await session.close()
    return root / session.id


@pytest.fixture
async def recorded(tmp_path: Path) -> Path:
    return await _record(tmp_path / "sessions")


def _edit_trace(directory: Path, change: dict[str, object], where: dict[str, object]) -> None:
    """Change the first trace line whose fields include ``where``."""
    trace = directory / "trace.jsonl"
    lines = trace.read_text().splitlines()
    for index, line in enumerate(lines):
        data = json.loads(line)
        if all(data.get(k) == v for k, v in where.items()):
            data.update(change)
            lines[index] = json.dumps(data)
            break
    else:
        raise AssertionError(f"no trace line with {where}")
    trace.write_text("\n".join(lines) + "\n")


async def test_a_recorded_session_replays_exactly(recorded: Path) -> None:
    report = await replay_async(recorded)
    assert report.divergence is None, report.describe()
    report.check()
    kinds = [(s.kind, s.tool, s.detail[:22]) for s in report.recorded]
    assert kinds[:7] == [
        ("tool_call", "read", '{"path": "a.txt"}'),
        ("tool_call", "read", '{"path": "b.txt"}'),
        ("decision", "read", "run"),
        ("decision", "read", "run"),
        ("result", "read", "     1\talpha"),
        ("result", "read", "     1\tbeta"),
        ("tool_call", "write", '{"path": "c.txt", "con'),
    ]
    decisions = [s.detail for s in report.recorded if s.tool == "write" and s.kind == "decision"]
    assert decisions[0].startswith("approval required")
    assert decisions[-1] == "blocked by user: d.txt is not yours"
    assert len(report.replayed) == len(report.recorded) == 17
    assert "as recorded" in report.describe()


async def test_replay_against_live_tools_reproduces_it_too(recorded: Path) -> None:
    executor = MemoryExecutor(dict(FILES))
    report = await replay_async(  # live tools run under the profile the caller names
        recorded,
        tools="live",
        executor=executor,
        overrides={"profile": "developer"},
        recorded_approvals=True,  # the test's own recording: its answers are vouched for
    )
    assert report.divergence is None, report.describe()
    assert executor.files["c.txt"] == b"gamma"  # the approved write ran again
    assert "d.txt" not in executor.files  # the rejected one did not


async def test_an_edited_tool_result_is_found_at_its_step_with_live_tools(
    recorded: Path,
) -> None:
    _edit_trace(recorded, {"content": "     1\tBETA\n"}, {"kind": "tool_end", "call_id": "r2"})
    assert (await replay_async(recorded)).ok  # recorded tools answer with the edited text
    report = await replay_async(
        recorded,
        tools="live",
        executor=MemoryExecutor(dict(FILES)),
        overrides={"profile": "developer"},
    )
    divergence = report.divergence
    assert divergence is not None
    assert (divergence.index, divergence.what) == (6, "different tool result")
    assert divergence.expected is not None
    assert "BETA" in divergence.expected.detail
    assert divergence.actual is not None
    assert "beta" in divergence.actual.detail


async def test_an_edited_policy_decision_is_found_at_its_step(recorded: Path) -> None:
    _edit_trace(recorded, {"reason": "edited"}, {"kind": "approval_requested"})
    report = await replay_async(recorded)
    assert report.divergence is not None
    assert (report.divergence.index, report.divergence.what) == (
        8,
        "different policy decision",
    )
    with pytest.raises(AssertionError, match="different policy decision at step 8"):
        report.check()


async def test_a_changed_profile_reports_the_first_call_it_decides_differently(
    recorded: Path,
) -> None:
    report = await replay_async(recorded, overrides={"profile": "eval"})
    divergence = report.divergence
    assert divergence is not None
    assert divergence.expected
    assert divergence.actual
    assert (divergence.index, divergence.what) == (8, "different policy decision")
    assert divergence.expected.detail.startswith("approval required")
    assert divergence.actual.detail == "run"


async def test_a_shortened_recording_is_found_where_it_ends(recorded: Path) -> None:
    trace = recorded / "trace.jsonl"
    lines = trace.read_text().splitlines()
    last_start = max(i for i, line in enumerate(lines) if '"kind":"run_start"' in line)
    trace.write_text("\n".join(lines[:last_start]) + "\n")  # drop the last run
    report = await replay_async(recorded)
    assert report.ok  # the replay runs only the recorded runs
    assert len(report.recorded) == 13


def test_three_lines_turn_a_trace_into_a_regression_test(recorded: Path) -> None:
    replay(recorded / "trace.jsonl").check()


async def test_replay_model_answers_with_what_was_recorded(recorded: Path) -> None:
    model = ReplayModel.from_trace(recorded)
    assert model.remaining == model.recorded_calls == 5


def test_a_path_that_is_not_a_session_is_named(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="not a session directory"):
        replay(tmp_path)


async def test_the_original_session_is_not_touched(recorded: Path, tmp_path: Path) -> None:
    before = (recorded / "trace.jsonl").read_bytes()
    copy = tmp_path / "copy"
    shutil.copytree(recorded, copy)
    await replay_async(copy)
    assert (recorded / "trace.jsonl").read_bytes() == before
    assert (copy / "trace.jsonl").read_bytes() == before


async def test_live_replay_of_a_delegating_session_never_feeds_the_child_its_parents_answers(
    tmp_path: Path,
) -> None:
    """Issue 29, item 6: with live tools the ``delegate`` call is answered from the recording;
    run live, its sub-agent would take the parent's next recorded answer as its own."""
    root = tmp_path / "sessions"
    model = ScriptedModel(
        [
            tools(call("delegate", {"instruction": "what is in a.txt?"}, id="d1")),
            tools(call("read", {"path": "a.txt"}, id="r1")),  # the child's turns
            text("child: a.txt says alpha"),
            tools(call("read", {"path": "b.txt"}, id="r2")),  # the parent's again
            text("parent: alpha and beta"),
        ]
    )
    session = Session(
        Agent(AgentConfig(profile="developer")),
        model=model,
        executor=MemoryExecutor(dict(FILES)),
        clock=FakeClock(),
        store=FileSessionStore(root),
        interrupt_on_approval=False,
    )
    assert (await session.run("Ask a helper about a.txt, then read b.txt.")).ok
    await session.close()
    parent = root / session.id
    assert len([p for p in root.iterdir() if p.is_dir()]) == 2  # the parent and its child

    executor = MemoryExecutor(dict(FILES))
    report = await replay_async(
        parent, tools="live", executor=executor, overrides={"profile": "developer"}
    )
    assert report.divergence is None, report.describe()
    results = [s.detail for s in report.replayed if s.kind == "result"]
    assert results[0] == "child: a.txt says alpha"  # the child's recorded answer
    assert "beta" in results[1]  # the parent's own read ran live
    assert len([p for p in root.iterdir() if p.is_dir()]) == 2  # no child was run again
