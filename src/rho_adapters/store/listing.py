"""Listing sessions from their meta.json files (never their traces), with liveness.

Light on purpose: the monitor imports it, and it must not load yaml or cattrs.
"""

from __future__ import annotations

import time
from pathlib import Path

from rho_adapters.store.layout import SessionPaths, liveness, read_meta, session_dirs
from rho_adapters.store.meta import info_from_meta
from rho_domain.ports.store import SessionInfo


def list_sessions(root: Path, *, limit: int = 50) -> tuple[SessionInfo, ...]:
    """Sessions under ``root``, newest first, from meta.json only (never the traces)."""
    now = time.time()
    infos = [info_of(paths, now=now) for paths in session_dirs(root)]
    infos.sort(key=lambda i: (i.created_at, i.id), reverse=True)
    return tuple(infos[:limit])


def info_of(paths: SessionPaths, *, now: float) -> SessionInfo:
    """One session's listing line from its meta.json, with its liveness at ``now``."""
    meta = read_meta(paths)
    holder = f"pid {meta['pid']} on {meta.get('host')}" if meta.get("pid") is not None else None
    return info_from_meta(
        paths.id,
        meta,
        status=str(meta.get("status", "unknown")),
        liveness=liveness(meta, paused=paths.pause.exists(), now=now),
        labels=meta.get("labels"),
        holder=holder,
    )
