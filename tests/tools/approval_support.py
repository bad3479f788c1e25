"""A developer-profile session on the local machine, for the tests of what asks after
"always" across calls (test_approval_*.py): the model's turns and the human's answers are
scripted, the executor and the clock are real."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from rho_adapters.clock import SystemClock
from rho_adapters.fakes import ScriptedApprover, ScriptedModel, Turn
from rho_adapters.local import LocalExecutor
from rho_domain.agent import Agent
from rho_domain.config import AgentConfig
from rho_domain.loop.session import Session
from rho_domain.permissions import builtin_profile
from rho_domain.tools.factory import build_registry


def developer_session(
    root: Path, turns: Sequence[Turn], approver: ScriptedApprover, *, delegation: bool = False
) -> Session:
    """A session under the built-in ``developer`` profile, its shell in ``root``, whose model
    plays ``turns`` and whose human answers through ``approver`` (``delegation``: with the
    ``delegate`` tool)."""
    profile = builtin_profile("developer")
    agent = Agent(
        config=AgentConfig(profile=profile),
        profile=profile,
        registry=build_registry(profile, databases={}, delegation=delegation),
        system_prompt="test",
    )
    return Session(
        agent,
        model=ScriptedModel(turns),
        executor=LocalExecutor(str(root), file_write=profile.file_write, allow_shell=True),
        clock=SystemClock(),
        approver=approver,
    )
