"""probeapprove25b: a sub-agent judges its lines on what its parent wrote, too.

A ``delegate`` call's sub-agent starts with a state of its own: none of the parent's
unreviewed writes. The parent wrote a Makefile (its recipe the model's words), then
delegated "run make": the sub-agent's ``make``, once its own "always" was given for an
``ls``, ran that recipe unasked (made.txt made), where the parent's own ``make`` asks.
"""

from __future__ import annotations

from pathlib import Path

from rho_adapters.clock import SystemClock
from rho_adapters.fakes import ScriptedApprover, ScriptedModel, call, text, tools
from rho_adapters.local import LocalExecutor
from rho_domain.agent import Agent
from rho_domain.config import AgentConfig
from rho_domain.loop.session import Session
from rho_domain.permissions import builtin_profile
from rho_domain.ports.approver import ApprovalAnswer
from rho_domain.run import RunStatus
from rho_domain.tools.factory import build_registry

ALWAYS = ApprovalAnswer(approved=True, always=True)


async def test_a_sub_agents_make_after_its_parent_wrote_the_makefile_asks(
    tmp_path: Path,
) -> None:
    """Before: three requests (the parent's write, the child's ``ls``), made.txt made."""
    profile = builtin_profile("developer")
    agent = Agent(
        config=AgentConfig(profile=profile),
        profile=profile,
        registry=build_registry(profile, databases={}, delegation=True),
        system_prompt="test",
    )
    turns = [
        tools(call("write", {"path": "Makefile", "content": "all:\n\ttouch made.txt\n"})),
        tools(call("delegate", {"instruction": "run make"})),
        tools(call("bash", {"command": "ls"})),  # the sub-agent: "always"
        tools(call("bash", {"command": "make -s"})),  # asked now, rejected
        text("it did not run"),
        text("done"),
    ]
    approver = ScriptedApprover([True, ALWAYS, False])
    session = Session(
        agent,
        model=ScriptedModel(turns),
        executor=LocalExecutor(str(tmp_path), file_write=profile.file_write, allow_shell=True),
        clock=SystemClock(),
        approver=approver,
    )
    assert (await session.run("go")).status is RunStatus.COMPLETED
    asked = [(r.call.name, r.reason) for r in approver.requests]
    assert [name for name, _ in asked] == ["write", "bash", "bash"], asked
    assert asked[2][1].startswith("make runs after an earlier call of this session wrote Makefile")
    assert not (tmp_path / "made.txt").exists()
