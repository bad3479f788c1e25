"""A run whose Daytona sandbox could never be made ends ``error`` in the library too.

Before, only the CLI told such a run from one that did its work (exit 2): ``Session.run``
returned ``completed`` with the model's answer on tool calls that had all failed, and the
trace, the server and a service embedding the library all saw a completed run. Now the run's
end says it (``PlacementFailed``, the answer kept), and a run whose sandbox a later call made
completes as any other.
"""

from __future__ import annotations

from pathlib import Path

from rho_adapters.daytona import DaytonaExecutor
from rho_adapters.fakes import MemorySessionStore, ScriptedModel, call, text, tools
from rho_adapters.fakes.daytona import FakeDaytona
from rho_adapters.fakes.scripted_model import Turn
from rho_domain.run import RunStatus
from rho_entry import Agent, AgentConfig, Session


def _session(tmp_path: Path, fake: FakeDaytona, *replies: Turn) -> Session:
    executor = DaytonaExecutor(fake.settings(working_dir=str(tmp_path)), transport=fake.transport)
    agent = Agent(AgentConfig(profile="readonly", working_dir=str(tmp_path)))
    return Session(
        agent, model=ScriptedModel(list(replies)), executor=executor, store=MemorySessionStore()
    )


async def test_a_run_whose_sandbox_was_never_made_ends_error_with_the_answer_kept(
    tmp_path: Path,
) -> None:
    fake = FakeDaytona()
    fake.fail_creation("no runner free")
    replies = (tools(call("list", {"path": "."}, id="l1")), text("I could not list anything."))
    async with _session(tmp_path, fake, *replies) as session:
        result = await session.run("list the files")
    assert result.status is RunStatus.ERROR  # before: completed
    assert result.error_type == "PlacementFailed"
    assert result.error is not None
    assert result.error.startswith(
        "PlacementFailed: the daytona sandbox could not be made, so every tool call that "
        "needed it failed: "
    )
    assert "no runner free" in result.error
    assert result.text == "I could not list anything."  # the answer is not lost


async def test_a_sandbox_a_later_call_made_leaves_the_run_completed(tmp_path: Path) -> None:
    fake = FakeDaytona()
    fake.fail("POST", "/sandbox", 503)  # the first creation only: the second call makes it
    replies = (
        tools(call("list", {"path": "."}, id="l1")),
        tools(call("list", {"path": "."}, id="l2")),
        text("listed"),
    )
    async with _session(tmp_path, fake, *replies) as session:
        result = await session.run("list the files")
        assert result.status is RunStatus.COMPLETED, result.error
        assert session.executor.placement.id is not None
