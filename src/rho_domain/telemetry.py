"""Telemetry derived from a session's events: per session, run, turn (model call) and tool call.

The trace is the single source of truth: ``session_telemetry(events)`` reads nothing else, so
the numbers of a finished session and of a live one (its events so far) come from the same
function. Durations are the monotonic ones the loop recorded; ``started_at`` values are the
events' wall-clock ``at``. A trace written before a field existed (``first_output_after``,
``retries``, ``queue_wait``) gives None / 0 for it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Literal

import attrs

from rho_domain import events as ev
from rho_domain.mcp_names import server_of
from rho_domain.messages import ToolCall, Usage
from rho_domain.value_methods import value_eq, value_hash, value_repr

ToolOutcome = Literal["ok", "error", "blocked", "rejected", "no_result"]


@attrs.frozen(kw_only=True)
class TurnStats:
    """One model call.

    Attributes:
        run_id: The run it belongs to.
        call_index: 1 for the run's first model call.
        model: The model id sent.
        started_at: Wall-clock start.
        duration: Seconds (None: the call broke before ``llm_end``).
        first_output_after: Latency to the first piece of the answer, in seconds.
        usage: Tokens and cost of the call.
        retries: Attempts retried before the server answered.
        finish_reason: The server's reason, or None.
        queue_wait: Seconds of ``duration`` spent queued for a request slot to the endpoint
            (the process's in-flight bound), or None when not measured.
    """

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    run_id: str
    call_index: int
    model: str
    started_at: float
    duration: float | None = None
    first_output_after: float | None = None
    usage: Usage = Usage()
    retries: int = 0
    finish_reason: str | None = None
    queue_wait: float | None = None


@attrs.frozen(kw_only=True)
class ToolStats:
    """One tool call the model made.

    Attributes:
        run_id: The run it belongs to.
        call_id: The call's id.
        name: The tool.
        started_at: Wall-clock time it started (or was blocked).
        duration: Seconds it ran (None: it did not run).
        outcome: ``ok``, ``error``, ``blocked`` (by policy or a hook), ``rejected`` (by a human) or
            ``no_result`` (still running, or the process died).
        output_bytes: UTF-8 size of the result the model read.
        approval: ``approved`` / ``rejected`` when a human decided, else None.
        server: The MCP server of an MCP tool (``mcp__<server>__<tool>``; the result's
            ``mcp_server`` when it ran), else None.
    """

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    run_id: str
    call_id: str
    name: str
    started_at: float
    duration: float | None = None
    outcome: ToolOutcome = "no_result"
    output_bytes: int = 0
    approval: Literal["approved", "rejected"] | None = None
    server: str | None = None


@attrs.frozen(kw_only=True)
class RunStats:
    """One run (``Session.run``).

    Attributes:
        run_id: The run's id.
        started_at: Wall-clock start.
        duration: Wall-clock seconds to ``run_end`` (None: still running or died).
        status: How it ended, or None when it has not.
        usage: Tokens and cost of every model call of the run (compaction included).
        turns: Its model calls, in order.
        tools: Its tool calls, in order.
    """

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    run_id: str
    started_at: float
    duration: float | None = None
    status: str | None = None
    usage: Usage = Usage()
    turns: tuple[TurnStats, ...] = ()
    tools: tuple[ToolStats, ...] = ()


@attrs.frozen(kw_only=True)
class SessionStats:
    """A whole session.

    Attributes:
        session_id: Its id ("" when the caller did not say).
        runs: Every run, in order.
        usage: The session's tokens and cost.
        model_time: Seconds spent in model calls.
        tool_time: Seconds spent running tools.
        errors: ``error`` events (failed calls, broken streams, budgets reached).
    """

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    session_id: str
    runs: tuple[RunStats, ...] = ()
    usage: Usage = Usage()
    model_time: float = 0.0
    tool_time: float = 0.0
    errors: int = 0

    @property
    def turns(self) -> tuple[TurnStats, ...]:
        """Every model call of the session."""
        return tuple(t for r in self.runs for t in r.turns)

    @property
    def tools(self) -> tuple[ToolStats, ...]:
        """Every tool call of the session."""
        return tuple(t for r in self.runs for t in r.tools)


def session_telemetry(events: Iterable[ev.Event], *, session_id: str = "") -> SessionStats:
    """The telemetry of a session from its events (persisted or live, in order)."""
    builder = _Builder()
    for event in events:
        builder.apply(event)
    runs = tuple(builder.finished_runs())
    return SessionStats(
        session_id=session_id,
        runs=runs,
        usage=builder.session_usage,
        model_time=sum(t.duration or 0.0 for r in runs for t in r.turns),
        tool_time=sum(t.duration or 0.0 for r in runs for t in r.tools),
        errors=builder.errors,
    )


@attrs.define
class _OpenRun:
    __repr__ = value_repr
    __eq__ = value_eq

    run: RunStats
    turns: list[TurnStats] = attrs.field(factory=list)
    tools: dict[str, ToolStats] = attrs.field(factory=dict)


@attrs.define
class _Builder:
    __repr__ = value_repr
    __eq__ = value_eq

    runs: list[_OpenRun] = attrs.field(factory=list)
    session_usage: Usage = Usage()
    errors: int = 0
    approvals: dict[str, Literal["approved", "rejected"]] = attrs.field(factory=dict)

    def _current(self, at: float) -> _OpenRun:
        if not self.runs:  # events before any run_start (a child seeded with history)
            self.runs.append(_OpenRun(RunStats(run_id="", started_at=at)))
        return self.runs[-1]

    def apply(self, event: ev.Event) -> None:
        match event:
            case ev.RunStarted():
                self.runs.append(_OpenRun(RunStats(run_id=event.run_id, started_at=event.at)))
            case ev.RunEnded():
                open_run = self._current(event.at)
                open_run.run = attrs.evolve(
                    open_run.run,
                    duration=event.at - open_run.run.started_at,
                    status=str(event.status),
                )
            case ev.LLMStarted():
                open_run = self._current(event.at)
                open_run.turns.append(
                    TurnStats(
                        run_id=open_run.run.run_id,
                        call_index=event.call_index,
                        model=event.model,
                        started_at=event.at,
                    )
                )
            case ev.UsageRecorded():
                open_run = self._current(event.at)
                self.session_usage = self.session_usage + event.usage
                open_run.run = attrs.evolve(open_run.run, usage=open_run.run.usage + event.usage)
                turn = open_run.turns[-1] if open_run.turns else None
                if turn is not None and turn.duration is None:
                    open_run.turns[-1] = attrs.evolve(turn, usage=event.usage)
            case ev.LLMEnded():
                self._end_turn(event)
            case ev.ToolStarted() | ev.ToolBlocked() | ev.ToolEnded() | ev.ApprovalResolved():
                self._tool(event)
            case ev.ErrorOccurred():
                self.errors += 1
            case _:
                pass

    def _end_turn(self, event: ev.LLMEnded) -> None:
        open_run = self._current(event.at)
        for i in range(len(open_run.turns) - 1, -1, -1):
            turn = open_run.turns[i]
            if turn.call_index == event.call_index and turn.duration is None:
                open_run.turns[i] = attrs.evolve(
                    turn,
                    duration=event.duration,
                    first_output_after=event.first_output_after,
                    usage=event.usage,
                    retries=event.retries,
                    finish_reason=event.finish_reason,
                    queue_wait=event.queue_wait,
                )
                return

    def _tool(
        self, event: ev.ToolStarted | ev.ToolBlocked | ev.ToolEnded | ev.ApprovalResolved
    ) -> None:
        open_run = self._current(event.at)
        tools, run_id = open_run.tools, open_run.run.run_id
        match event:
            case ev.ToolStarted(call=call):
                base = _kept(tools, run_id, call, event.at)
                tools[call.id] = attrs.evolve(base, started_at=event.at)
            case ev.ToolBlocked(call=call):
                outcome: ToolOutcome = "rejected" if event.by == "user" else "blocked"
                tools[call.id] = attrs.evolve(_kept(tools, run_id, call, event.at), outcome=outcome)
            case ev.ToolEnded():
                base = tools.get(event.call_id) or ToolStats(
                    run_id=run_id, call_id=event.call_id, name=event.tool_name, started_at=event.at
                )
                tools[event.call_id] = attrs.evolve(
                    base,
                    duration=event.duration,
                    outcome="error" if event.is_error else "ok",
                    output_bytes=len(event.content.encode("utf-8")),
                )
                if isinstance(server := event.metadata.get("mcp_server"), str):
                    tools[event.call_id] = attrs.evolve(tools[event.call_id], server=server)
            case ev.ApprovalResolved():
                # often answered between runs: kept session-wide, joined when the runs close
                self.approvals[event.call_id] = "approved" if event.approved else "rejected"

    def finished_runs(self) -> Iterable[RunStats]:
        for open_run in self.runs:
            tools = tuple(
                attrs.evolve(t, approval=self.approvals.get(t.call_id))
                for t in open_run.tools.values()
            )
            yield attrs.evolve(open_run.run, turns=tuple(open_run.turns), tools=tools)


def _kept(tools: Mapping[str, ToolStats], run_id: str, call: ToolCall, at: float) -> ToolStats:
    """The stats kept so far of ``call``, or new ones of it, started ``at`` (a call blocked
    before it started has no others)."""
    return tools.get(call.id) or ToolStats(
        run_id=run_id, call_id=call.id, name=call.name, started_at=at, server=server_of(call.name)
    )
