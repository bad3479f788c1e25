"""Where the attack suites run a restricted command: the real LocalExecutor with bubblewrap and
without it (as on a stock machine), and the DaytonaExecutor on FakeDaytona (real processes on
this machine, through the Daytona executor's own resolution, blob check and scripts)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from rho_adapters.clock import SystemClock
from rho_adapters.daytona import DaytonaExecutor
from rho_adapters.fakes.daytona import FakeDaytona
from rho_adapters.local import LocalExecutor
from rho_adapters.local.executor import sandbox_available
from rho_domain.errors import RhoError
from rho_domain.permissions import FileWriteMode, readonly_profile
from rho_domain.ports.executor import Executor
from rho_domain.tools.base import ToolContext, ToolHandler
from rho_domain.tools.bash import BashHandler

BACKENDS = [
    pytest.param(
        "bwrap",
        id="bwrap",
        marks=pytest.mark.skipif(not sandbox_available(), reason="bubblewrap not installed"),
    ),
    pytest.param("no-bwrap", id="no-bwrap"),
    pytest.param("daytona", id="daytona"),
]


async def call_tool(handler: ToolHandler, arguments: Mapping[str, Any], executor: Executor) -> str:
    """``handler``'s answer to ``arguments`` on ``executor`` under the readonly profile; a
    refusal the executor or the handler raises comes back as ``"<ErrorName>: <message>"``."""
    ctx = ToolContext(
        session_id="s",
        call_id="c",
        executor=executor,
        profile=readonly_profile(),
        clock=SystemClock(),
    )
    try:
        return (await handler.handle(dict(arguments), ctx)).content
    except RhoError as exc:  # a refusal raised by the executor is a refusal too
        return f"{type(exc).__name__}: {exc}"


def restricted_bash(command: str) -> tuple[ToolHandler, dict[str, Any]]:
    """The restricted bash tool and its arguments for ``command``."""
    return BashHandler(restricted=True, timeout=20), {"command": command}


async def run_restricted(root: str, command: str, backend: str) -> str:
    """The restricted bash tool's answer to ``command`` in ``root`` on ``backend``; a refusal
    the executor raises comes back as ``"<ErrorName>: <message>"``."""
    executor: LocalExecutor | DaytonaExecutor
    if backend == "daytona":
        fake = FakeDaytona(polls_until_started=0)
        executor = DaytonaExecutor(
            fake.settings(working_dir=root), file_write=FileWriteMode.OFF, transport=fake.transport
        )
    else:
        executor = LocalExecutor(root, sandbox=backend == "bwrap")
    try:
        return await call_tool(*restricted_bash(command), executor)
    finally:
        if isinstance(executor, DaytonaExecutor):
            await executor.aclose()
