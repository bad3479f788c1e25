"""``rho-agent fork`` in subprocesses: list turns, fork at several turns, refuse a batch."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_support import rho


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    (work / "README.md").write_text("# Sample\n")
    return work


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def _session(workspace: Path, home: Path) -> str:
    """A demo session: 1 user, 2 assistant calling bash, 3 its result, 4 the answer."""
    done = rho(
        "-m", "demo", "--profile", "developer", "-y", "--json", "run `echo forked`",
        cwd=workspace, home=home,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return str(json.loads(done.stdout.splitlines()[-1])["session_id"])


def _messages(home: Path, session_id: str) -> list[dict[str, object]]:
    trace = home / "rho" / "sessions" / session_id / "trace.jsonl"
    lines = [json.loads(line) for line in trace.read_text().splitlines()]
    return [e["message"] for e in lines if e["kind"] == "message"]


def _meta(home: Path, session_id: str) -> dict[str, object]:
    meta = json.loads((home / "rho" / "sessions" / session_id / "meta.json").read_text())
    assert isinstance(meta, dict)
    return meta


def test_fork_lists_turns_then_forks_at_several_and_keeps_the_original(
    workspace: Path, home: Path
) -> None:
    original = _session(workspace, home)
    trace = home / "rho" / "sessions" / original / "trace.jsonl"
    before = trace.read_bytes()
    listing = rho("fork", original, cwd=workspace, home=home)
    assert listing.returncode == 0, listing.stderr
    lines = listing.stdout.splitlines()
    assert lines[:2] == ["   1  user: run `echo forked`", "   2  assistant: → bash"]
    assert lines[2].startswith("   3    bash: forked [exit code 0")
    assert lines[3].startswith("   4  assistant: ")
    for at in (1, 3, 4):
        made = rho("fork", original[:6], "--at", str(at), cwd=workspace, home=home)
        assert made.returncode == 0, made.stderr
        forked = made.stdout.split()[1]
        assert _messages(home, forked) == _messages(home, original)[:at]
        meta = _meta(home, forked)
        assert meta["parent_id"] == original
        assert meta["labels"] == {"forked_from": original, "fork_at": str(at)}
        assert f"rho-agent --resume {forked}" in made.stdout
    assert trace.read_bytes() == before


def test_fork_inside_a_tool_batch_is_refused_and_creates_nothing(
    workspace: Path, home: Path
) -> None:
    original = _session(workspace, home)
    refused = rho("fork", original, "--at", "2", cwd=workspace, home=home)
    assert refused.returncode == 1
    assert refused.stderr.strip() == (
        "rho-agent fork: fork at 2: turn 2 is inside a tool batch (the results of turn 2's "
        "tool calls end at turn 3); fork at 1 (before the batch) or at 3 (after its last result)"
    )
    assert sorted(p.name for p in (home / "rho" / "sessions").iterdir()) == [original]
    beyond = rho("fork", original, "--at", "9", cwd=workspace, home=home)
    assert beyond.returncode == 1
    assert "the history has turns 1 to 4" in beyond.stderr


def test_fork_with_a_task_runs_it_in_the_new_session(workspace: Path, home: Path) -> None:
    original = _session(workspace, home)
    ran = rho(
        "fork", original, "--at", "1", "--profile", "developer", "-y", "--", "run `echo other`",
        cwd=workspace, home=home,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    assert "⎿ other" in ran.stderr  # -y and the profile given again, not inherited
    sessions = [p.name for p in (home / "rho" / "sessions").iterdir() if p.name != original]
    (forked,) = sessions
    contents = [m.get("content") for m in _messages(home, forked) if m["role"] == "user"]
    assert contents == ["run `echo forked`", "run `echo other`"]
