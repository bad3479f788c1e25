"""Where the attack suites run a restricted command: the real LocalExecutor with bubblewrap and
without it (as on a stock machine), and the DaytonaExecutor on FakeDaytona (real processes on
this machine, through the Daytona executor's own resolution, blob check and scripts).

A module whose cases share one event loop can share its Daytona executors too
(``DaytonaPool``): a session runs all its commands through one executor, and a new executor
per case paid the sandbox's creation and set-up scripts (about 20 ms of CPU) every time."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
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
from rho_domain.reach import OutsideReads
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


def new_daytona(root: str, homes: Sequence[str] = ()) -> DaytonaExecutor:
    """A readonly ``DaytonaExecutor`` on a new ``FakeDaytona`` working in ``root`` (with the
    executor's default homes unless ``homes`` names others)."""
    fake = FakeDaytona(polls_until_started=0)
    settings = fake.settings(working_dir=root)
    if homes:
        return DaytonaExecutor(
            settings, file_write=FileWriteMode.OFF, transport=fake.transport, homes=homes
        )
    return DaytonaExecutor(settings, file_write=FileWriteMode.OFF, transport=fake.transport)


def reading_outside(backend: str, root: str) -> Executor:
    """A readonly executor on ``backend`` (one of ``BACKENDS``) in ``root`` whose reads may
    leave the workspace (``read_outside_workspace: allow``): the widest reach, where the
    secrets policy alone must hold."""
    if backend == "daytona":
        fake = FakeDaytona(polls_until_started=0)
        return DaytonaExecutor(
            fake.settings(working_dir=root),
            file_write=FileWriteMode.OFF,
            transport=fake.transport,
            read_outside=OutsideReads.ALLOW,
        )
    return LocalExecutor(root, sandbox=backend == "bwrap", read_outside=OutsideReads.ALLOW)


class DaytonaPool:
    """One ``new_daytona`` executor per root and homes, kept for the cases of a module that
    share one event loop (the executor's lock and processes belong to the loop that made
    them), or for the commands of one case (``async with DaytonaPool() as pool``: a loop
    of commands over a workspace it does not change); ``aclose`` deletes their sandboxes.
    Each command is still its own, with every check the executor makes per command."""

    def __init__(self) -> None:
        self._executors: dict[tuple[str, tuple[str, ...]], DaytonaExecutor] = {}

    async def __aenter__(self) -> DaytonaPool:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def get(self, root: str, homes: Sequence[str] = ()) -> DaytonaExecutor:
        """The pool's executor for ``root`` and ``homes``, made on first use."""
        key = (root, tuple(homes))
        if key not in self._executors:
            self._executors[key] = new_daytona(root, homes)
        return self._executors[key]

    async def aclose(self) -> None:
        """Close every executor the pool made."""
        executors, self._executors = list(self._executors.values()), {}
        for executor in executors:
            await executor.aclose()


async def daytona_pool() -> AsyncIterator[DaytonaPool]:
    """The body of a module's pool fixture: ``pytest_asyncio.fixture(scope="module",
    loop_scope="module")(daytona_pool)`` in a module whose tests run on the module's loop."""
    pool = DaytonaPool()
    try:
        yield pool
    finally:
        await pool.aclose()


async def case_pool() -> AsyncIterator[DaytonaPool]:
    """The body of a case's pool fixture: ``pytest_asyncio.fixture(case_pool)`` (function
    scope) in a module whose cases each run several commands on a workspace they do not
    change. Not ``daytona_pool``: ``pytest_asyncio.fixture`` marks the function it is given,
    so one function made a module fixture in one file and a case fixture in another broke
    the first file's cases (their loop scope was the last file's)."""
    async with DaytonaPool() as pool:
        yield pool


async def run_restricted(
    root: str, command: str, backend: str, pool: DaytonaPool | None = None
) -> str:
    """The restricted bash tool's answer to ``command`` in ``root`` on ``backend``; a refusal
    the executor raises comes back as ``"<ErrorName>: <message>"``. On Daytona the command runs
    on ``pool``'s executor for ``root`` when a pool is given, else on a new one closed after."""
    if backend == "daytona" and pool is not None:
        return await call_tool(*restricted_bash(command), pool.get(root))
    executor: LocalExecutor | DaytonaExecutor
    if backend == "daytona":
        executor = new_daytona(root)
    else:
        executor = LocalExecutor(root, sandbox=backend == "bwrap")
    try:
        return await call_tool(*restricted_bash(command), executor)
    finally:
        if isinstance(executor, DaytonaExecutor):
            await executor.aclose()
