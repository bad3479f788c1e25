"""A live replay does not take its approvals from the recording.

With ``tools="live"`` the recorded model's calls run for real, and every call that needs a
human was answered by the recording's ``approval_resolved`` events: whoever wrote the trace
wrote those answers, so a recording handed over for a replay (a bug report's session
directory) ran its approved commands on the replayer's machine under the profile the replayer
chose. Now a live replay answers such a call "not approved" unless the caller vouches for the
recording's answers (``recorded_approvals=True``); recorded replays (nothing runs) are
unchanged.
"""

from __future__ import annotations

from pathlib import Path

from rho_adapters.fakes import MemoryExecutor, ScriptedApprover, ScriptedModel, call, text, tools
from rho_adapters.store import FileSessionStore
from rho_domain.config import AgentConfig
from rho_entry import Agent, Session
from rho_entry.replay import replay_async


async def _recording(tmp_path: Path, marker: Path) -> Path:
    """A developer session in which a human approved ``touch marker`` (nothing ran then)."""
    store = FileSessionStore(tmp_path / "sessions")
    recorder = Session(
        Agent(AgentConfig(profile="developer", working_dir=str(tmp_path))),
        model=ScriptedModel([tools(call("bash", {"command": f"touch {marker}"})), text("done")]),
        executor=MemoryExecutor(),
        approver=ScriptedApprover([True]),
        store=store,
    )
    await recorder.run("go")
    await recorder.close()
    trace = (store.session_dir(recorder.id) / "trace.jsonl").read_text()
    assert '"kind":"approval_resolved"' in trace.replace(" ", "")
    return store.session_dir(recorder.id)


async def test_a_live_replay_does_not_run_what_the_recording_approved(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    directory = await _recording(tmp_path, marker)
    report = await replay_async(
        directory, tools="live", overrides={"profile": "developer", "working_dir": str(tmp_path)}
    )
    assert not marker.exists()  # ran before: the recording's answer approved it
    assert "replayed: step 3 (model turn 1): decision bash blocked by user" in report.describe()


async def test_the_caller_may_vouch_for_a_recordings_approvals(tmp_path: Path) -> None:
    marker = tmp_path / "vouched"
    directory = await _recording(tmp_path, marker)
    report = await replay_async(
        directory,
        tools="live",
        overrides={"profile": "developer", "working_dir": str(tmp_path)},
        recorded_approvals=True,
    )
    assert marker.exists()
    assert "decision" not in report.describe()  # approved as recorded (the result may differ)


async def test_a_recorded_replay_still_answers_as_recorded(tmp_path: Path) -> None:
    marker = tmp_path / "recorded"
    directory = await _recording(tmp_path, marker)
    report = await replay_async(directory)
    assert not marker.exists()  # nothing runs
    report.check()
