"""What a session list shows beyond meta.json: model calls, tool calls, errors, run time.

A listing carries status, usage and the first prompt but not these counts; the trace holds
them. Reading every trace at every list request would cost the size of the store each time
(the dashboard lists every two seconds), so each session's ``TraceTally`` remembers how many
lines of its trace it has folded and asks the store (``SessionCatalog.trace_reads``) only for
the lines after them: a finished session's trace is read once per server process, a running
one's new lines only. The store judges whether the trace still holds what was folded (the
``TraceTail`` it gave, ``rho_domain.ports.trace_reads``): a trace replaced or rewritten since
is counted from its start. The last line is not asked again: a last line of 100 MB, read and
compared at each listing, cost ~0.2 s of CPU a poll a session, and the tally held it.

The counts are those of ``rho_domain.telemetry.session_telemetry`` over the same events (the
tests compare them): ``turns`` its model calls, ``tool_calls`` its tool calls (started, blocked
or rejected), ``errors`` its ``error`` events, and the run time the sum of its runs' durations.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterable, Sequence
from typing import Any

import attrs

from rho_adapters.codec import FutureTraceVersion, decode_event_line, event_from_dict
from rho_domain import events as ev
from rho_domain.errors import TraceFormatError
from rho_domain.ports.session_control import SessionCatalog, TraceLine, run_in_progress
from rho_domain.ports.trace_reads import TraceTail
from rho_domain.value_methods import value_eq, value_repr

INLINE_LINES = 2_000
"""Up to this many new lines are folded on the event loop (a poll); more in a worker thread."""


@attrs.define
class TraceTally:
    """The counts of one trace's events folded so far (``seq`` lines, the last one ``last``)."""

    __repr__ = value_repr
    __eq__ = value_eq

    seq: int = 0  # lines folded
    tail: TraceTail | None = None  # the store's check of where the folded lines end
    turns: int = 0
    tool_calls: int = 0  # each started, blocked or rejected
    tool_errors: int = 0
    errors: int = 0
    started_at: float | None = None  # the first run's start
    run_seconds: float = 0.0  # finished runs
    open_run_at: float | None = None  # the start of a run without its run_end yet
    last_at: float | None = None
    readable: bool = True
    # calls of the current run started without their end yet: their end is not a new call
    # (only these ids are kept, so memory does not grow with the trace)
    _open_calls: set[str] = attrs.field(factory=set)

    def fold(self, events: Iterable[ev.Event]) -> None:
        """Count these events (the next ones of the trace, in order)."""
        for event in events:
            self.last_at = event.at
            match event:
                case ev.RunStarted():
                    if self.started_at is None:
                        self.started_at = event.at
                    self.open_run_at = event.at
                    self._open_calls.clear()  # telemetry counts a call once per run
                case ev.RunEnded():
                    # a run_end without its run_start (a torn trace) adds no time
                    start = self.open_run_at if self.open_run_at is not None else event.at
                    self.run_seconds += event.at - start
                    self.open_run_at = None
                case ev.LLMStarted():
                    self.turns += 1
                case ev.ToolStarted(call=call) if call.id not in self._open_calls:
                    self.tool_calls += 1
                    self._open_calls.add(call.id)
                case ev.ToolBlocked():
                    self.tool_calls += 1
                case ev.ToolEnded():
                    if event.call_id in self._open_calls:
                        self._open_calls.discard(event.call_id)
                    else:  # a result without a start (a call answered as it was replayed)
                        self.tool_calls += 1
                    self.tool_errors += int(event.is_error)
                case ev.ErrorOccurred():
                    self.errors += 1
                case _:
                    pass

    def view(self, *, liveness: str, now: float) -> dict[str, Any]:
        """The list fields: ``started_at`` (None: never ran), ``duration_seconds`` (runs'
        wall-clock time; a run in progress counts up to ``now``, one that died up to its last
        event), ``turns``, ``tool_calls``, ``tool_errors`` and ``errors`` (None each when the
        trace cannot be read)."""
        if not self.readable:
            return dict.fromkeys(_FIELDS)
        seconds = self.run_seconds
        if self.open_run_at is not None:
            end = now if run_in_progress(liveness) else (self.last_at or self.open_run_at)
            seconds += max(0.0, end - self.open_run_at)
        return {
            "started_at": self.started_at,
            "duration_seconds": round(seconds, 3),
            "turns": self.turns,
            "tool_calls": self.tool_calls,
            "tool_errors": self.tool_errors,
            "errors": self.errors,
        }


_FIELDS = ("started_at", "duration_seconds", "turns", "tool_calls", "tool_errors", "errors")


class Tallies:
    """One ``TraceTally`` per session, brought up to date on demand (thread-safe)."""

    def __init__(self) -> None:
        self._tallies: dict[str, TraceTally] = {}
        self._lock = threading.Lock()

    def known(self, session_id: str) -> TraceTally | None:
        """The session's tally as last brought up to date (None: never)."""
        return self._tallies.get(session_id)

    async def of_catalog(self, catalog: SessionCatalog, session_id: str) -> TraceTally:
        """``caught_up`` for one session."""
        return (await self.caught_up(catalog, [session_id]))[session_id]

    async def caught_up(
        self, catalog: SessionCatalog, session_ids: Iterable[str]
    ) -> dict[str, TraceTally]:
        """Each session's tally after folding the lines stored since the last call (the whole
        trace the first time, or when it was replaced or rewritten), read in one go
        (``SessionCatalog.trace_reads``). A trace that cannot be read (a link, a newer format)
        gives an unreadable tally. Many lines are folded in a worker thread: a first list of
        a large store must not hold up the event loop (streams, other requests)."""
        with self._lock:
            tallies = {sid: self._tallies.get(sid) or TraceTally() for sid in session_ids}
        asked = {sid: t.tail for sid, t in tallies.items() if t.readable}
        found = await catalog.trace_reads(asked) if asked else {}
        todo: list[tuple[TraceTally, tuple[TraceLine, ...]]] = []
        for sid, read in found.items():
            if read is None:
                tallies[sid] = TraceTally(readable=False)  # asked again next time
                continue
            if read.restarted:  # new, replaced or rewritten: counted from its start
                tallies[sid] = TraceTally()
            tallies[sid].tail = read.tail
            todo.append((tallies[sid], read.lines))
        if sum(len(lines) for _, lines in todo) > INLINE_LINES:
            await asyncio.to_thread(_fold_each, todo)
        else:
            _fold_each(todo)
        with self._lock:
            for sid, tally in tallies.items():
                if tally.readable or tally.seq:  # an unreadable read is not remembered
                    self._tallies[sid] = tally
        return tallies

    def keep_only(self, ids: Iterable[str]) -> None:
        """Forget the sessions not named (deleted directories): memory stays bounded."""
        wanted = set(ids)
        with self._lock:
            for gone in set(self._tallies) - wanted:
                del self._tallies[gone]


def _fold_each(todo: Sequence[tuple[TraceTally, tuple[TraceLine, ...]]]) -> None:
    for tally, lines in todo:
        if not lines:
            continue
        try:
            tally.fold(_decoded(lines))
        except TraceFormatError:
            tally.readable = False  # a newer format: not read again
        tally.seq = lines[-1].seq


def _decoded(lines: Sequence[TraceLine]) -> list[ev.Event]:
    """The lines' events: one ``json.loads`` for them all (one C call); a blank or corrupt
    line falls back to line by line, skipping it. A newer format raises TraceFormatError."""
    try:
        dicts = json.loads(b"[" + b",".join(line.data for line in lines) + b"]")
        if all(isinstance(d, dict) for d in dicts):
            return [event_from_dict(d) for d in dicts]
    except (ValueError, RecursionError):  # a line nested too deep is corrupt too
        pass
    events = []
    for line in lines:
        if line.data.strip():
            try:
                events.append(decode_event_line(line.data))
            except FutureTraceVersion:
                raise
            except TraceFormatError:
                continue  # a corrupt line: the store skips it too
    return events
