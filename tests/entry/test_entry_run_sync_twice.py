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
