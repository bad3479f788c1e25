"""The JSON a client reads about a session: from meta.json (listings) and the trace (detail).

Light on purpose: listings read meta.json only, never traces, as ``rho-agent --list`` does.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from rho_adapters.store.layout import SessionPaths, liveness, read_meta, session_dirs
from rho_adapters.store.meta import usage_of
from rho_domain.ports.session_control import run_in_progress
from rho_domain.ports.store import SessionInfo
from rho_domain.state import State
from rho_entry.server.errors import NotFound

_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def session_paths(root: Path, session_id: str) -> SessionPaths:
    """The directory of the session with exactly this id (no prefixes, no paths: a client
    names a session, never a file). Raises ``NotFound``."""
    paths = SessionPaths(root / session_id)
    if not _ID.match(session_id) or not (
        paths.meta.exists() or paths.trace.exists() or paths.config.exists()
    ):
        raise NotFound(f"no session {session_id!r}; GET /api/sessions lists them")
    return paths


def summary(paths: SessionPaths, *, running_here: bool, now: float) -> dict[str, Any]:
    """One session as listed: id, status, liveness, usage, model, profile, times."""
    meta = read_meta(paths)
    created = float(meta.get("created_at") or 0.0)
    live = liveness(meta, paused=paths.pause.exists(), now=now)
    if running_here and not run_in_progress(live):
        live = "running"  # started a moment ago: meta.json has not said so yet
    return {
        "id": paths.id,
        "status": str(meta.get("status", "unknown")),
        "liveness": live,
        "running_here": running_here,
        "created_at": created,
        "updated_at": float(meta.get("updated_at") or created),
        "model": str(meta.get("model", "")),
        "profile": str(meta.get("profile", "")),
        "working_dir": meta.get("working_dir"),
        "first_prompt": str(meta.get("first_prompt", "")),
        "usage": attrs.asdict(usage_of(meta)),
        "parent_id": meta.get("parent_id"),
        "labels": meta.get("labels") or {},
        "stream": f"/api/sessions/{paths.id}/stream",
    }


def valid_id(session_id: str) -> bool:
    """Whether a client's session id is one (no prefixes, no paths)."""
    return bool(_ID.match(session_id))


def summary_of(info: SessionInfo, *, running_here: bool) -> dict[str, Any]:
    """``summary`` from a store's listing line (a store that is not a directory)."""
    live = info.liveness
    if running_here and not run_in_progress(live):
        live = "running"  # started a moment ago: the store has not said so yet
    return {
        "id": info.id,
        "status": info.status,
        "liveness": live,
        "running_here": running_here,
        "created_at": info.created_at,
        "updated_at": info.updated_at,
        "model": info.model,
        "profile": info.profile,
        "working_dir": info.working_dir,
        "first_prompt": info.first_prompt,
        "usage": attrs.asdict(info.usage),
        "parent_id": info.parent_id,
        "labels": dict(info.labels),
        "stream": f"/api/sessions/{info.id}/stream",
    }


def listing(root: Path, running: Mapping[str, object], *, now: float, limit: int) -> list[Any]:
    """Every session of the store, newest first (``rho-agent --list`` sees the same)."""
    rows = [summary(p, running_here=p.id in running, now=now) for p in session_dirs(root)]
    rows.sort(key=lambda r: (r["created_at"], r["id"]), reverse=True)
    return rows[:limit]


def pending_approvals(state: State) -> list[dict[str, str]]:
    """Calls waiting for a decision: ``call_id``, ``tool``, ``arguments`` (raw JSON text)."""
    return [
        {"call_id": c.id, "tool": c.name, "arguments": c.arguments}
        for c in state.pending_calls
        if state.approvals.get(c.id) is None
    ]
