"""Sourced tools, taken before each run and each model call.

A session with a ``ToolSource`` (MCP servers) asks it for its current tools at the start of
every run (so pending approvals are judged with them) and before every model call (so a list
that changed mid-run reaches the next request). The agent is rebuilt only when the source's
answer changed; a problem the source reports for the first time (a server that did not
start, or died) is recorded as an ``error`` event, and the run goes on without that
server's tools.
"""

from __future__ import annotations

import asyncio

from rho_domain import events as ev
from rho_domain.agent import Agent
from rho_domain.loop.control import RunControl
from rho_domain.loop.journal import Journal
from rho_domain.tools.source import ToolSource

SOURCE_ERROR = "ToolSourceError"  # the ``error_type`` of a source's problem


async def take_tools(
    agent: Agent, source: ToolSource, journal: Journal, control: RunControl
) -> Agent | None:
    """``refresh_tools`` raced against the run's cancellation (servers may be starting, for
    up to their startup timeout): None when the run was cancelled meanwhile (the source is
    then told by the cancellation of its ``current``)."""
    work = asyncio.ensure_future(refresh_tools(agent, source, journal))
    if not await control.race(work):
        await control.checkpoint("while the tool source was asked")
        return None
    return work.result()


async def refresh_tools(agent: Agent, source: ToolSource, journal: Journal) -> Agent:
    """``agent`` with the source's current tools: ``agent`` itself when they did not change."""
    sourced = await source.current()
    if sourced is agent.sourced:
        return agent
    known = set(agent.sourced.problems)
    for problem in sourced.problems:
        if problem not in known:
            await journal.emit(
                ev.ErrorOccurred(at=journal.clock.now(), error_type=SOURCE_ERROR, message=problem)
            )
    return agent.with_sourced(sourced)
