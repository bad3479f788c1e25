"""The continuum loop end to end: real sessions in a file store, a real git repository in
tmp, the local executor the CLI builds, and a scripted model per session."""

from __future__ import annotations

import asyncio
import os
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path

import attrs
import pytest

from rho_adapters.fakes import ScriptedModel, Turn, call, text, tools
from rho_adapters.store import FileSessionStore
from rho_domain.config import AgentConfig
from rho_domain.continuum.budget_gate import WRAP_UP
from rho_domain.continuum.state import ContinuumState
from rho_domain.errors import WorkspaceGitError
from rho_domain.messages import UserMessage
from rho_domain.ports.model import ChatModel
from rho_entry import wiring
from rho_entry.continuum.loop import ContinuumPlan, ContinuumPorts, run_continuum
from rho_entry.continuum.workspace import check_command
from rho_entry.executor_wiring import build_executor


@attrs.define
class Run:
    """One continuum run's world: the repository, the store, the models made, what was said."""

    repo: Path
    store: FileSessionStore
    scripts: list[Sequence[Turn]]
    answers: list[str | None] = attrs.field(factory=list)
    models: list[ScriptedModel] = attrs.field(factory=list)
    saved: list[ContinuumState] = attrs.field(factory=list)
    asked: list[str] = attrs.field(factory=list)
    said: list[str] = attrs.field(factory=list)

    def model(self) -> ChatModel:
        made = ScriptedModel(self.scripts[len(self.models)])
        self.models.append(made)
        return made

    async def ask(self, question: str) -> str | None:
        self.asked.append(question)
        return self.answers.pop(0)

    def go(self, state: ContinuumState | None = None, **plan: object) -> ContinuumState:
        config = AgentConfig(
            model="scripted",
            profile="developer",
            working_dir=str(self.repo),
            auto_approve=True,
            auto_compact=False,
            context_window=10_000,
        )
        options: dict[str, object] = {"threshold": 0.9, "max_sessions": 5, **plan}
        full = ContinuumPlan(prd="Make a.txt and b.txt.", config=config, **options)  # type: ignore[arg-type]

        async def main() -> ContinuumState:
            executor = build_executor(config, wiring.profile_of(config), self.store)
            ports = ContinuumPorts(
                executor=executor,
                store=self.store,
                model=self.model,
                approver=None,
                ask=self.ask,
                save=self.saved.append,
                say=self.said.append,
            )
            try:
                return await run_continuum(full, ports, state or ContinuumState(run_id="r1"))
            finally:
                await executor.aclose()

        return asyncio.run(main())

    def git(self, *args: str) -> str:
        return subprocess.run(
            ("git", *args), cwd=self.repo, check=True, capture_output=True, text=True
        ).stdout

    def handoffs(self) -> list[str]:
        return sorted(os.listdir(self.repo / ".rho-agent" / "handoffs"))


def write(path: str, content: str = "x\n") -> Turn:
    return tools(call("write", {"path": path, "content": content}))


@pytest.fixture
def world(tmp_path: Path) -> Callable[..., Run]:
    repo = tmp_path / "repo"
    repo.mkdir()
    for args in (
        ("init", "-q", "-b", "main"),
        ("config", "user.email", "t@example.com"),
        ("config", "user.name", "T"),
        ("commit", "-q", "--allow-empty", "-m", "start"),
    ):
        subprocess.run(("git", *args), cwd=repo, check=True)

    def make(*scripts: Sequence[Turn]) -> Run:
        return Run(repo=repo, store=FileSessionStore(tmp_path / "sessions"), scripts=list(scripts))

    return make


def test_two_sessions_hand_off_then_complete_with_passing_checks(world: Callable[..., Run]) -> None:
    run = world(
        [write("a.txt"), text("Did a.\nHANDOFF: x/../../../notes\nNext: make b.txt")],
        [write("b.txt"), text("All done.\nPROJECT COMPLETE")],
    )
    check = check_command("--test-cmd", "test -f b.txt")
    final = run.go(checks=(check,))
    assert (final.status, final.session_count, final.last_handoff) == ("completed", 2, 1), (
        final.reason
    )
    assert run.git("log", "--format=%s").splitlines() == [
        "continuum: project complete",
        "continuum: session 1",
        "start",
    ]
    # the hostile slug stayed inside the handoffs directory, its document handed on
    # (unsanitised, as the reference wrote it, it was the repository's own notes.md)
    assert run.handoffs() == ["001-x-notes.md"]
    assert not (run.repo / "notes.md").exists()
    assert "Next: make b.txt" in run.models[1].requests[0].messages[0]["content"]
    assert ".rho-agent/" in (run.repo / ".gitignore").read_text()
    assert "handoffs" not in run.git("ls-files")
    # each session is a stored session, labelled with the run
    infos = asyncio.run(run.store.list())
    assert sorted(info.labels["continuum_session"] for info in infos) == ["1", "2"]
    assert run.saved[-1] == final


def test_a_failing_check_sends_the_agent_back_with_its_output(world: Callable[..., Run]) -> None:
    run = world([text("PROJECT COMPLETE"), write("b.txt"), text("fixed\nPROJECT COMPLETE")])
    check = check_command("--test-cmd", "ls b.txt")
    final = run.go(checks=(check,))
    assert final.status == "completed"
    sent_back = run.models[0].requests[1].messages[-1]
    assert isinstance(sent_back, UserMessage)
    assert "`ls b.txt` (--test-cmd) failed, exit code 2" in sent_back.content
    assert "No such file or directory" in sent_back.content


def test_needs_input_asks_then_goes_on_and_pauses_without_a_terminal(
    world: Callable[..., Run],
) -> None:
    run = world([text("Which colour?\nNEEDS_INPUT"), text("PROJECT COMPLETE")])
    run.answers = ["blue"]
    assert run.go().status == "completed"
    assert run.asked == ["Which colour?\nNEEDS_INPUT"]
    assert run.models[0].requests[1].messages[-1] == UserMessage(content="blue")

    nobody = world([text("Which colour?\nNEEDS_INPUT")])
    nobody.answers = [None]
    final = nobody.go()
    assert final.status == "paused"
    assert "stdin is not a terminal" in final.reason
    assert "--resume" in final.reason


def test_the_budget_gate_tells_the_agent_to_wrap_up_after_a_tool_round(
    world: Callable[..., Run],
) -> None:
    big = tools(call("write", {"path": "a.txt", "content": "x"}), input_tokens=600)
    run = world([big, text("HANDOFF: wrap\nleft: b")])
    run.go(max_sessions=1, threshold=0.05)
    last = run.models[0].requests[1].messages[-1]
    assert isinstance(last, UserMessage)
    assert last.content == WRAP_UP


def test_resume_continues_the_session_count_and_the_handoff_numbers(
    world: Callable[..., Run],
) -> None:
    first = world([text("HANDOFF: one\nfirst")], [text("HANDOFF: two\nsecond")])
    paused = first.go(max_sessions=2)
    assert (paused.status, paused.session_count, paused.last_handoff) == ("paused", 2, 2)
    again = world([text("HANDOFF: three\nthird")])
    final = again.go(paused, max_sessions=3)
    assert (final.session_count, final.last_handoff) == (3, 3)
    assert again.handoffs() == ["001-one.md", "002-two.md", "003-three.md"]
    assert "second" in again.models[0].requests[0].messages[0]["content"]


def test_branch_switched_to_or_created_and_a_failure_stops_the_run(
    world: Callable[..., Run],
) -> None:
    run = world([text("HANDOFF: b\nwork")])
    run.go(branch="feature", max_sessions=1)
    assert run.git("branch", "--show-current").strip() == "feature"
    bad = world()
    with pytest.raises(WorkspaceGitError, match=r"`git switch -c bad\.\.name` failed in .*: "):
        bad.go(branch="bad..name")
    assert (bad.saved[-1].status, bad.models) == ("error", [])
    assert "bad..name" in bad.saved[-1].reason


def test_secrets_files_are_never_committed_and_the_run_says_so(world: Callable[..., Run]) -> None:
    run = world([write("a.txt"), text("HANDOFF: one\nmore")])
    (run.repo / ".env").write_text("TOKEN=s3cret\n")
    (run.repo / "config" / ".aws").mkdir(parents=True)
    (run.repo / "config" / ".aws" / "credentials").write_text("[default]\n")
    (run.repo / "[ab].txt").write_text("a literal name, not a glob\n")
    (run.repo / ".env.example").write_text("TOKEN=\n")
    run.go(max_sessions=1)
    committed = run.git("show", "--name-only", "--format=", "HEAD").split()
    assert sorted(committed) == [".env.example", ".gitignore", "[ab].txt", "a.txt"]
    assert run.git("status", "--porcelain").split() == ["??", ".env", "??", "config/"]
    assert "not committed, the secrets policy names them: .env, config/.aws/credentials" in run.said


def test_a_status_listing_too_long_to_keep_whole_stops_the_run(
    world: Callable[..., Run], monkeypatch: pytest.MonkeyPatch
) -> None:
    # past the cap the executor elides the listing's middle: paths mangled, files unjudged
    monkeypatch.setattr("rho_entry.continuum.workspace.STATUS_CAP", 40)
    run = world([write("a.txt"), text("HANDOFF: one\nmore")])
    for n in range(4):
        (run.repo / f"generated-file-{n}.txt").write_text("x\n")
    with pytest.raises(WorkspaceGitError, match="more than 40 bytes of paths; add what should"):
        run.go(max_sessions=1)
    assert run.git("log", "--format=%s").split() == ["start"]


class _Interrupted(Run):
    async def ask(self, question: str) -> str | None:
        raise KeyboardInterrupt  # Ctrl+C while the question is asked


def test_a_cancelled_run_is_saved_paused_saying_so(world: Callable[..., Run]) -> None:
    """Ctrl+C left the state "running", with the reason of the pause before (seen: "used all
    200 sessions" on a run cancelled in session 2860)."""
    made = world([text("HANDOFF: one\nfirst")], [text("Which colour?\nNEEDS_INPUT")])
    run = _Interrupted(repo=made.repo, store=made.store, scripts=made.scripts)
    before = ContinuumState(run_id="r1", status="paused", reason="used all 5 sessions")
    with pytest.raises(KeyboardInterrupt):
        run.go(before, max_sessions=9)
    assert [(s.status, s.reason) for s in run.saved[:3]] == [("running", "")] * 3
    last = run.saved[-1]
    assert (last.status, last.session_count) == ("paused", 2)
    assert last.reason == "cancelled in session 2; --resume goes on"
