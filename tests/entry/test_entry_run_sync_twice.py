"""``run_sync`` runs each call in a new event loop: a second call must work (approve, go on)."""

from __future__ import annotations

import pytest

from rho_adapters.fakes import FakeClock, MemoryExecutor, ScriptedModel, call, text, tools
from rho_entry import Agent, AgentConfig, ApprovalInterrupt, RunStatus, Session


def test_a_second_run_sync_continues_after_an_approval() -> None:
    model = ScriptedModel(
        [tools(call("write", {"path": "n.txt", "content": "x"}, id="w1")), text("written")]
    )
    files = MemoryExecutor()
    session = Session(
        Agent(AgentConfig(profile="developer")), model=model, executor=files, clock=FakeClock()
    )
    # No approver: the run ends awaiting_approval and run() raises it, as the documents say.
    with pytest.raises(ApprovalInterrupt) as interrupt:
        session.run_sync("write it")
    assert interrupt.value.result is not None
    assert interrupt.value.result.status is RunStatus.AWAITING_APPROVAL
    assert [p.call.id for p in interrupt.value.pending] == ["w1"]
    assert files.files == {}
    session.resolve_approval("w1", True)
    result = session.run_sync()
    assert (result.status, result.text) == (RunStatus.COMPLETED, "written")
    assert files.files["n.txt"] == b"x"


def test_without_interrupts_the_run_returns_awaiting_approval() -> None:
    model = ScriptedModel([tools(call("write", {"path": "n.txt", "content": "x"}, id="w1"))])
    session = Session(
        Agent(AgentConfig(profile="developer")),
        model=model,
        executor=MemoryExecutor(),
        clock=FakeClock(),
        interrupt_on_approval=False,
    )
    assert session.run_sync("write it").status is RunStatus.AWAITING_APPROVAL


def test_a_run_sync_refused_by_another_threads_run_says_so() -> None:
    """Before, the refusal of the second call ("already running") was replaced by the one of
    the close() run_sync makes after it: "... has a run in progress on another event loop
    (another thread): call cancel() and wait for its run() to return there before close()",
    which named a call the caller never made."""
    import asyncio
    import threading

    from rho_domain.errors import SessionStateError
    from rho_domain.ports.executor import Command, CommandResult

    started, release = threading.Event(), threading.Event()

    async def held(command: Command) -> CommandResult:
        started.set()
        await asyncio.to_thread(release.wait, 60)
        return CommandResult(exit_code=0, output="done", duration=0.0)

    model = ScriptedModel([tools(call("bash", {"command": "hold"})), text("over")])
    executor = MemoryExecutor(commands={"hold": held}, allow_shell=True)
    session = Session(Agent(AgentConfig(profile="eval")), model=model, executor=executor)
    first: list[RunStatus] = []
    other = threading.Thread(target=lambda: first.append(session.run_sync("go").status))
    other.start()
    try:
        assert started.wait(60)
        with pytest.raises(SessionStateError, match=r"^this session is already running"):
            session.run_sync("again")
    finally:
        release.set()
        other.join(60)
    assert first == [RunStatus.COMPLETED]
