"""Listing sessions from their meta.json files (never their traces), with liveness.

Light on purpose: the monitor imports it, and it must not load yaml or cattrs.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path
from typing import Any

from rho_adapters.store import sentinels
from rho_adapters.store.confined import open_file
from rho_adapters.store.layout import SessionPaths, liveness, read_meta, session_dirs
from rho_adapters.store.meta import info_from_meta
from rho_adapters.store.meta_fields import order_time
from rho_domain.errors import StoreError
from rho_domain.ports.store import SessionInfo
from rho_domain.run import spelled_whole


def list_sessions(root: Path, *, limit: int = 50) -> tuple[SessionInfo, ...]:
    """Sessions under ``root``, newest first, from meta.json only (never the traces)."""
    now = time.time()
    infos = [info_of(paths, now=now) for paths in session_dirs(root)]
    infos.sort(key=lambda i: (order_time(i.created_at, now), i.id), reverse=True)
    return tuple(infos[:limit])


def info_of(paths: SessionPaths, *, now: float) -> SessionInfo:
    """One session's listing line from its meta.json, with its liveness at ``now``; a
    meta.json missing or unreadable says so (``unreadable``)."""
    meta = read_meta(paths) or unreadable(paths)
    if not _number(meta.get("created_at")):
        # dropped as of another type (``meta_fields``) or never written: dated from what is
        # known, not 1970-01-01 ("20784d ago", listed below every other session)
        meta = {**meta, "created_at": first_event_at(paths) or _mtime(paths)}
    holder = f"pid {meta['pid']} on {meta.get('host')}" if meta.get("pid") is not None else None
    return info_from_meta(
        paths.id,
        meta,
        status=str(meta.get("status", "unknown")),
        liveness=liveness(meta, paused=sentinels.is_set(paths.pause), now=now),
        labels=meta.get("labels"),
        holder=holder,
    )


def unreadable(paths: SessionPaths) -> dict[str, Any]:
    """The line of a session whose meta.json is missing or unreadable (cut short by a full
    disk, edited by hand): dated by its directory, its status unknown, and its prompt saying
    how to rebuild it. Before, it was listed as created 1970-01-01 (``20784d ago``), sorted
    below every other session, with no word of why."""
    return {
        "created_at": _mtime(paths),
        "status": "unknown",
        "first_prompt": "(meta.json unreadable; rho-agent --resume "
        f"{spelled_whole(paths.id)} rebuilds it from the trace)",
    }


def first_event_at(paths: SessionPaths) -> float | None:
    """The time of the trace's first event (its first line only), or None when the trace is
    missing, a link, or its first line is not an event with a time."""
    line = b""
    with contextlib.suppress(OSError, StoreError), open_file(paths.trace, "rb") as trace:
        line = trace.readline(64 * 1024)  # a first event is small; a longer line is not read
    try:
        at = json.loads(line).get("at")
    except (ValueError, RecursionError, AttributeError):
        return None
    return float(at) if _number(at) else None


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and 0 < value < 1e300


def _mtime(paths: SessionPaths) -> float:
    try:
        return os.stat(paths.dir).st_mtime
    except OSError:
        return 0.0
