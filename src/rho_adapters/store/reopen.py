"""A stored session opened again: its trace read and repaired, its meta.json rebuilt.

``FileSessionStore.open`` calls these in its worker thread, holding the session's lock: a
torn last line and undecodable lines are moved to ``trace.torn`` (kept for forensics, never
replayed), and meta.json, which may lag the trace after a crash, is rebuilt from the trace.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from typing import Any

from rho_adapters.store.confined import open_file, read_bytes
from rho_adapters.store.layout import SessionPaths, read_meta, write_atomic
from rho_adapters.store.meta import initial_meta, summarize_trace
from rho_domain import events as ev
from rho_domain.ports.store import SessionRecord

__all__ = ["load", "refreshed_meta"]


def load(paths: SessionPaths) -> tuple[SessionRecord, tuple[ev.Event, ...]]:
    """The record and events of the session at ``paths``, its trace repaired to end on a
    clean line (call it holding the session's lock)."""
    # What reads a stored session loads with the first one opened: a run of a new
    # session (a one-shot) reads none back.
    from rho_adapters.store.recording import read_record
    from rho_adapters.store.trace import read_trace

    read = read_trace(paths.trace)
    record = read_record(paths, first_at=read.events[0].at if read.events else time.time())
    valid_bytes = _set_aside(paths, read.skipped, read.valid_bytes)
    _repair_tail(paths, valid_bytes, read.torn)
    return record, read.events


def _set_aside(paths: SessionPaths, skipped: Sequence[bytes], valid_bytes: int) -> int:
    """Move undecodable complete lines to the torn file: the trace is rewritten without
    them (a new file renamed over the old, so a crash leaves one or the other). Returns
    the length of the trace's clean prefix afterwards."""
    if not skipped:
        return valid_bytes
    with open_file(paths.torn, "ab") as keep:  # kept for forensics, never replayed
        keep.write(b"".join(skipped))
        keep.flush()
        os.fsync(keep.fileno())
    data = read_bytes(paths.trace)
    bad = {line.rstrip(b"\n") for line in skipped}
    lines = data[:valid_bytes].split(b"\n")[:-1]  # complete lines, each ended by \n
    clean = b"".join(line + b"\n" for line in lines if line not in bad)
    write_atomic(paths.trace, clean + data[valid_bytes:])
    return len(clean)


def _repair_tail(paths: SessionPaths, valid_bytes: int, torn: bytes) -> None:
    """Make the trace end on a clean line before appending to it (we hold the lock)."""
    if torn:
        with open_file(paths.torn, "ab") as keep:  # kept for forensics, never replayed
            keep.write(torn + b"\n")
        with open_file(paths.trace, "r+b") as handle:
            handle.truncate(valid_bytes)
    try:
        handle = open_file(paths.trace, "r+b")
    except FileNotFoundError:
        return
    with handle:
        size = handle.seek(0, os.SEEK_END)
        if size:
            handle.seek(size - 1)
            if handle.read(1) != b"\n":
                handle.write(b"\n")


def refreshed_meta(
    paths: SessionPaths, record: SessionRecord, events: Sequence[ev.Event]
) -> dict[str, Any]:
    """meta.json for a session opened again, rebuilt from its trace (it may lag the trace
    after a crash); a run left running is interrupted (the process that drove it is gone)."""
    meta = initial_meta(record)
    summarize_trace(meta, events)
    if meta["status"] == "running":
        meta["status"] = "interrupted"  # the process that drove that run is gone
    meta["updated_at"] = max(meta["updated_at"], read_meta(paths).get("updated_at") or 0)
    return meta
