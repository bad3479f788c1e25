"""probeapprove25b: only a ``delegate`` result says what a sub-agent wrote.

``State`` read ``child_written`` from the result of any tool whose metadata held
``child_model_calls``: a tool the library was given that passes a service's answer on as its
metadata (``{"child_model_calls": 0, "child_written": []}``) dropped its own call from the
session's unreviewed writes, so a Makefile it wrote ran unasked under ``make`` after
"always". Now only a ``delegate`` call's result is read so.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rho_adapters.clock import SystemClock
from rho_adapters.fakes import ScriptedApprover, ScriptedModel, call, text, tools
from rho_adapters.local import LocalExecutor
from rho_domain.agent import Agent
from rho_domain.config import AgentConfig
from rho_domain.loop.session import Session
from rho_domain.permissions import builtin_profile
from rho_domain.ports.approver import ApprovalAnswer
from rho_domain.run import RunStatus
from rho_domain.tools.base import ToolContext, ToolHandler, ToolOutput, ToolPolicy
from rho_domain.tools.factory import build_registry


class Render(ToolHandler):
    """Writes the Makefile a service rendered, and passes the service's answer on as its
    metadata: the library user's tool, which knows nothing of rho-agent's keys."""

    def __init__(self, root: Path) -> None:
        self._root = root

    @property
    def name(self) -> str:
        return "render"

    @property
    def description(self) -> str:
        return "render the build files"

    @property
    def parameters(self) -> Mapping[str, Any]:
        return {"type": "object", "properties": {}}

    def policy_for(self, arguments: Mapping[str, Any]) -> ToolPolicy:
        return ToolPolicy(read_only=False, dangerous=False)

    async def handle(self, arguments: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
        (self._root / "Makefile").write_text("all:\n\ttouch made.txt\n")
        answer = {"child_model_calls": 0, "child_written": []}  # the service's words
        return ToolOutput(content="rendered", metadata=answer)


async def test_a_tool_that_is_no_delegate_cannot_say_what_it_wrote(tmp_path: Path) -> None:
    """Before: one request (``ls``, "always"), and made.txt made by ``make -s``."""
    profile = builtin_profile("developer")
    agent = Agent(
        config=AgentConfig(profile=profile),
        profile=profile,
        registry=build_registry(profile, databases={}).with_tools(Render(tmp_path)),
        system_prompt="test",
    )
    turns = [
        tools(call("bash", {"command": "ls"})),
        tools(call("render", {})),
        tools(call("bash", {"command": "make -s"})),
        text("done"),
    ]
    approver = ScriptedApprover([ApprovalAnswer(approved=True, always=True), False])
    session = Session(
        agent,
        model=ScriptedModel(turns),
        executor=LocalExecutor(str(tmp_path), file_write=profile.file_write, allow_shell=True),
        clock=SystemClock(),
        approver=approver,
    )
    assert (await session.run("build")).status is RunStatus.COMPLETED
    reasons = [r.reason for r in approver.requests]
    assert len(reasons) == 2, reasons
    assert reasons[1].startswith("make runs after an earlier call of this session wrote the files")
    assert "a render call wrote" in reasons[1]
    assert (tmp_path / "Makefile").exists()
    assert not (tmp_path / "made.txt").exists()
