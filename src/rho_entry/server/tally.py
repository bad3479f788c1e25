"""What a session list shows beyond meta.json: model calls, tool calls, errors, run time.

meta.json carries status, usage and the first prompt but not these counts; the trace holds
them. Reading every trace at every list request would cost the size of the store each time
(the dashboard lists every two seconds), so each session's ``TraceTally`` remembers how many
bytes of its trace it has folded and reads only the lines appended since: a finished session's
trace is read once per server process, a running one's new lines only.

The counts are those of ``rho_domain.telemetry.session_telemetry`` over the same events (the
tests compare them): ``turns`` its model calls, ``tool_calls`` its tool calls (started, blocked
or rejected), ``errors`` its ``error`` events, and the run time the sum of its runs' durations.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable
from typing import IO, Any

import attrs

from rho_adapters.store.confined import open_file
from rho_adapters.store.layout import SessionPaths
from rho_adapters.store.trace import parse_trace
from rho_domain import events as ev
from rho_domain.errors import StoreError, TraceFormatError
from rho_domain.ports.session_control import SessionCatalog, run_in_progress

CHUNK_BYTES = 4 << 20  # read and decoded at a time: a long trace is never held whole


@attrs.define
class TraceTally:
    """The counts of one trace's events folded so far (``offset`` bytes, whole lines)."""

    offset: int = 0
    seq: int = 0  # lines folded (a store read by line numbers, not bytes)
    identity: tuple[int, int] | None = None  # (device, inode): a replaced file starts over
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
    """One ``TraceTally`` per session, brought up to date on demand (thread-safe), reading
    ``chunk_bytes`` of a trace at a time."""

    def __init__(self, *, chunk_bytes: int = CHUNK_BYTES) -> None:
        self._tallies: dict[str, TraceTally] = {}
        self._lock = threading.Lock()
        self._chunk = chunk_bytes

    def of(self, paths: SessionPaths) -> TraceTally:
        """The session's tally after reading what was appended to its trace since the last
        call (the whole trace the first time, or when the file was replaced or shrank). A
        trace that cannot be read (a link, a newer format) gives an unreadable tally."""
        with self._lock:
            tally = self._tallies.get(paths.id)
            if tally is None:
                tally = TraceTally()
            self._tallies[paths.id] = _caught_up(tally, paths, self._chunk)
            return self._tallies[paths.id]

    async def of_catalog(self, catalog: SessionCatalog, session_id: str) -> TraceTally:
        """``of`` for a store read through its ``SessionCatalog``: the lines after those
        already folded."""
        with self._lock:
            tally = self._tallies.get(session_id) or TraceTally()
            self._tallies[session_id] = tally
        if not tally.readable:
            return tally
        lines = await catalog.trace(session_id, after=tally.seq)
        if lines:
            try:
                data = b"".join(line.data + b"\n" for line in lines)
                tally.fold(parse_trace(data, source=f"session {session_id}").events)
            except TraceFormatError:
                tally.readable = False
            tally.seq = lines[-1].seq
        return tally

    def keep_only(self, ids: Iterable[str]) -> None:
        """Forget the sessions not named (deleted directories): memory stays bounded."""
        wanted = set(ids)
        with self._lock:
            for gone in set(self._tallies) - wanted:
                del self._tallies[gone]


def _caught_up(tally: TraceTally, paths: SessionPaths, chunk: int) -> TraceTally:
    try:
        with open_file(paths.trace, "rb") as handle:  # never through a link
            info = os.fstat(handle.fileno())
            identity = (info.st_dev, info.st_ino)
            if identity != tally.identity or info.st_size < tally.offset:
                tally = TraceTally(identity=identity)
            if info.st_size == tally.offset or not tally.readable:
                return tally  # nothing new, or a trace of a newer format: not read again
            handle.seek(tally.offset)
            size = info.st_size - tally.offset
            _fold_from(handle, size, tally, chunk=chunk, source=str(paths.trace))
    except FileNotFoundError:
        return TraceTally()  # created, never run
    except (OSError, StoreError):
        return TraceTally(readable=False)
    except TraceFormatError:
        return TraceTally(identity=tally.identity, readable=False)  # until it is replaced
    return tally


def _fold_from(handle: IO[bytes], size: int, tally: TraceTally, *, chunk: int, source: str) -> None:
    """Fold ``size`` bytes from ``handle``'s position, ``chunk`` bytes at a time, up to the
    last complete line: a line being written is read next time."""
    carry = b""
    while size > 0:
        read = handle.read(min(chunk, size))
        if not read:
            return
        size -= len(read)
        data = carry + read
        end = data.rfind(b"\n") + 1
        tally.fold(parse_trace(data[:end], source=source).events)
        tally.offset += end
        carry = data[end:]
