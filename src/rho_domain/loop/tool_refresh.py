"""Sourced tools, taken before each run and each model call.

A session with a ``ToolSource`` (MCP servers) asks it for its current tools at the start of
every run (so pending approvals are judged with them) and before every model call (so a list
that changed mid-run reaches the next request). The agent is rebuilt only when the source's
answer changed; a problem the source reports for the first time (a server that did not
start, or died) is recorded as an ``error`` event, and the run goes on without that
server's tools.

An "always" answer approves a tool as the user was shown it: a sourced tool whose description
or input schema changed since (a server's ``list_changed`` may rewrite what a tool does under
the same name) is no longer approved for the session (``ToolShapes``), said in an ``error``
event; its calls are asked about again, as calls whose arguments changed are.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from rho_domain import events as ev
from rho_domain.agent import Agent
from rho_domain.loop.control import RunControl
from rho_domain.loop.journal import Journal
from rho_domain.tools.base import ToolHandler
from rho_domain.tools.source import ToolSource

SOURCE_ERROR = "ToolSourceError"  # the ``error_type`` of a source's problem
CHANGED = "ToolChanged"  # the ``error_type`` of an "always" a changed tool lost


class ToolShapes:
    """What a session's sourced tools were last shown as (description and input schema, by
    name), to take back the "always" answers given to a tool that is now shown otherwise."""

    def __init__(self) -> None:
        self._shown: dict[str, tuple[str, Mapping[str, Any]]] = {}

    def lapsed(self, handlers: tuple[ToolHandler, ...], always: set[str]) -> list[str]:
        """The tools of ``handlers`` approved "always" (``always``, the session state's set)
        that were shown otherwise before, taken out of ``always``. Every handler's shape is
        remembered: one that leaves the list and comes back changed is compared with what it
        was."""
        lapsed = []
        for handler in handlers:
            shape = (handler.description, handler.parameters)
            before = self._shown.get(handler.name, shape)
            self._shown[handler.name] = shape
            if handler.name in always and before != shape:
                always.discard(handler.name)
                lapsed.append(handler.name)
        return lapsed


async def take_tools(
    agent: Agent,
    source: ToolSource,
    journal: Journal,
    control: RunControl,
    shapes: tuple[ToolShapes, set[str]],
) -> Agent | None:
    """``refresh_tools`` raced against the run's cancellation (servers may be starting, for
    up to their startup timeout): None when the run was cancelled meanwhile (the source is
    then told by the cancellation of its ``current``)."""
    work = asyncio.ensure_future(refresh_tools(agent, source, journal, shapes))
    if not await control.race(work):
        await control.checkpoint("while the tool source was asked")
        return None
    return work.result()


async def refresh_tools(
    agent: Agent, source: ToolSource, journal: Journal, shapes: tuple[ToolShapes, set[str]]
) -> Agent:
    """``agent`` with the source's current tools: ``agent`` itself when they did not change.
    An "always" (``shapes``: the session's shapes and its state's "always" set) given to a
    tool now shown otherwise is taken back, said."""
    sourced = await source.current()
    if sourced is agent.sourced:
        return agent
    known = set(agent.sourced.problems)
    for problem in sourced.problems:
        if problem not in known:
            await journal.emit(
                ev.ErrorOccurred(at=journal.clock.now(), error_type=SOURCE_ERROR, message=problem)
            )
    for name in shapes[0].lapsed(sourced.handlers, shapes[1]):
        await journal.emit(
            ev.ErrorOccurred(
                at=journal.clock.now(),
                error_type=CHANGED,
                message=(
                    f"{name!r} changed its description or input schema since it was approved "
                    "for the rest of the session: its calls are asked about again (answer "
                    "'always' again to approve it as it is now)"
                ),
            )
        )
    return agent.with_sourced(sourced)
