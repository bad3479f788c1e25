"""Sourced tools, taken before each run and each model call.

A session with a ``ToolSource`` (MCP servers) asks it for its current tools at the start of
every run (so pending approvals are judged with them) and before every model call (so a list
that changed mid-run reaches the next request). The agent is rebuilt only when the source's
answer changed; a problem the source reports for the first time (a server that did not
start, or died) is recorded as an ``error`` event, and the run goes on without that
server's tools. A source that raises (a caller's ``ToolSource`` with a bug: the port raises
only ``CancelledError``) is named in an ``error`` event, once, and the run goes on with the
tools it served before; before, the run ended on its bare exception. So does a source that
serves a tool whose description or schema raises when read (``registry.shown``).

An approval is of a tool as the user was shown it: a sourced tool whose description or input
schema changed since (a server's ``list_changed`` may rewrite what a tool does under the same
name) loses its "always" and the approvals of its calls not yet run (``ToolShapes``), said in
an ``error`` event; its calls are asked about again, as calls whose arguments changed are.
``ToolShapes`` sees the changes this process saw; what holds across a restart (a durable
worker, a resumed session) is the shape each call was asked about under and each "always"
given to, recorded with the approval (``State.asked_shapes``): ``bind_to_shown`` compares the
tool as it is now with it before each call.
"""

from __future__ import annotations

import asyncio

from rho_domain import events as ev
from rho_domain.agent import Agent
from rho_domain.errors import ConfigError, ExitRaised
from rho_domain.loop.control import RunControl
from rho_domain.loop.journal import Journal
from rho_domain.messages import ToolCall
from rho_domain.plugged import contained, described, message_of, plugged_name
from rho_domain.state import State
from rho_domain.tools import registry
from rho_domain.tools.base import ToolHandler
from rho_domain.tools.source import ToolSource

SOURCE_ERROR = "ToolSourceError"  # the ``error_type`` of a source's problem
CHANGED = "ToolChanged"  # the ``error_type`` of the approvals a changed tool lost


class ToolShapes:
    """What a session's sourced tools were last shown as (``call_digest.tool_digest`` of
    their description and input schema, by name: what a restart compares too), to take back
    the approvals given to a tool that is now shown otherwise."""

    def __init__(self) -> None:
        self._shown: dict[str, str] = {}  # each tool's ``tool_digest``: one judgement of a shape
        # what the source's own failures (an exception of ``current``) said, told once each
        self.told: set[str] = set()

    def changed(self, handlers: tuple[ToolHandler, ...]) -> list[str]:
        """The names of ``handlers`` shown otherwise before. Every handler's shape is
        remembered: one that leaves the list and comes back changed is compared with what it
        was. A handler whose description or schema raises is a ``ConfigError`` naming it
        (``registry.shown``), nothing remembered: it was read bare, its exception out of the
        run."""
        from rho_domain.call_digest import tool_digest

        shown = [(h.name, tool_digest(h.name, *registry.shown(h))) for h in handlers]
        changed = []
        for name, shape in shown:
            if self._shown.setdefault(name, shape) != shape:
                self._shown[name] = shape
                changed.append(name)
        return changed


_REWRITTEN = "changed its description or input schema since it was approved"
# a trace written before approvals were bound to the tool as shown: no shape to compare
_UNSHAPED = (
    "was approved in a trace that recorded no shape of it (written before approvals were "
    "bound to the tool as shown), so it is asked about as it is shown now"
)


def _taken_back(state: State, name: str, why: str = _REWRITTEN) -> str:
    """Take back the approvals ``state`` holds for tool ``name``: its "always" and the
    approved calls of it not yet run (asked again); what was taken, said (``why`` they
    were), or ""."""
    again = [c.id for c in state.pending_calls if c.name == name and state.approvals.get(c.id)]
    for call_id in again:
        state.approvals[call_id] = None
    taken = [f"the approval of call {', '.join(again)} is asked for again"] if again else []
    if name in state.always_allowed:
        state.always_allowed.discard(name)
        taken.append("its 'always' no longer holds (answer 'always' again to approve it as it is)")
    if not taken:
        return ""
    said = "; ".join(taken)
    return f"{name!r} {why}: {said}"


def shown_shape(agent: Agent, handler: ToolHandler | None) -> str:
    """``call_digest.tool_digest`` of ``handler`` as the model is shown it, when the agent's
    tool source serves it; "" for the agent's own tools (they change only with the code)."""
    if handler is None or not any(h is handler for h in agent.sourced.handlers):
        return ""
    from rho_domain.call_digest import tool_digest

    return tool_digest(handler.name, *registry.shown(handler))  # read as the model is shown it


async def bind_to_shown(journal: Journal, call: ToolCall, shown: str) -> None:
    """Before ``call`` is judged: when its tool is shown as ``shown`` now, and the call was
    asked about, or its tool approved "always", under another shape (a server restarted
    since, or listed another tool under the name), the approvals are taken back
    (``_taken_back``), said in a ``ToolChanged`` error event. The call is then asked about
    again, recording the tool as it is now (``ask_approval``). A trace written before the
    shapes were recorded holds none (``""``): its calls and "always" are asked about again
    once, said as such (``_UNSHAPED``), not as a tool that changed."""
    state = journal.state
    asked = state.asked_shapes.get(call.id, shown)
    lapsed = call.name in state.always_allowed and not state.always_holds(call.name, shown)
    # an old trace's question or "always" recorded no shape: the tool need not have changed
    unshaped = not asked or (lapsed and not state.always_shapes.get(call.name))
    why = _UNSHAPED if unshaped else _REWRITTEN
    if (asked != shown or lapsed) and (said := _taken_back(state, call.name, why)):
        await journal.emit(
            ev.ErrorOccurred(at=journal.clock.now(), error_type=CHANGED, message=said)
        )


_GOES_ON = "the run goes on with the tools it served before"


async def _tell_once(journal: Journal, shapes: ToolShapes, said: str) -> None:
    """Record ``said`` as the source's ``error`` event, unless this session did already: it is
    asked before every model call."""
    if said not in shapes.told:
        shapes.told.add(said)
        await journal.emit(
            ev.ErrorOccurred(at=journal.clock.now(), error_type=SOURCE_ERROR, message=said)
        )


async def take_tools(
    agent: Agent,
    source: ToolSource,
    journal: Journal,
    control: RunControl,
    shapes: tuple[ToolShapes, State],
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
    agent: Agent, source: ToolSource, journal: Journal, shapes: tuple[ToolShapes, State]
) -> Agent:
    """``agent`` with the source's current tools: ``agent`` itself when they did not change.
    The approvals (``shapes``: the session's shapes and its state) given to a tool now shown
    otherwise are taken back (``_taken_back``), said."""
    by = f"the tool source {plugged_name(source)}"
    try:  # contained: a CancelledError it raised unasked is its failure, not a cancel
        sourced = await contained(source.current(), by)
    except Exception as exc:  # noqa: BLE001 - the port raises CancelledError only: a bug
        said = message_of(exc) if isinstance(exc, ExitRaised) else f"{by} raised {described(exc)}"
        await _tell_once(journal, shapes[0], f"{said} when asked for its tools; {_GOES_ON}")
        return agent
    if sourced is agent.sourced:
        return agent
    try:
        changed = shapes[0].changed(sourced.handlers)
    except ConfigError as exc:  # a sourced tool's own bug: its list is not taken
        await _tell_once(
            journal,
            shapes[0],
            f"{by} served a tool that cannot be shown to the model ({exc}); {_GOES_ON}",
        )
        return agent
    known = set(agent.sourced.problems)
    for problem in sourced.problems:
        if problem not in known:
            await journal.emit(
                ev.ErrorOccurred(at=journal.clock.now(), error_type=SOURCE_ERROR, message=problem)
            )
    for name in changed:
        if said := _taken_back(shapes[1], name):
            await journal.emit(
                ev.ErrorOccurred(at=journal.clock.now(), error_type=CHANGED, message=said)
            )
    return agent.with_sourced(sourced)
