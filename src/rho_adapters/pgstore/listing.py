"""Listing rows of the PostgreSQL store: one query, one SessionInfo per row.

Liveness uses the server's clock only: a holder is alive while ``beat`` is younger than the
backend's ``stale_after`` (``now()`` on the server), so hosts' clocks never disagree about it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from rho_adapters.store.meta import usage_of
from rho_domain.ports.session_control import judge_liveness
from rho_domain.ports.store import SessionInfo

ROW = (
    "SELECT id, meta, holder, holder IS NOT NULL AND beat >= now() - make_interval(secs => %s),"
    " paused, labels FROM rho_sessions"
)


def info_of(row: tuple[Any, ...]) -> SessionInfo:
    """A SessionInfo from a ``ROW`` row (its stale bound given as the first parameter)."""
    session_id, meta, holder, alive, paused, labels = row
    meta = _json(meta)
    labels = _json(labels)
    status = str(meta.get("status", "created"))
    created = float(meta.get("created_at") or 0.0)
    return SessionInfo(
        id=session_id,
        status=status,
        liveness=judge_liveness(status=status, held=bool(alive), paused=bool(paused)),
        created_at=created,
        updated_at=float(meta.get("updated_at") or created),
        model=str(meta.get("model", "")),
        profile=str(meta.get("profile", "")),
        first_prompt=str(meta.get("first_prompt", "")),
        usage=usage_of(meta),
        working_dir=meta.get("working_dir"),
        parent_id=meta.get("parent_id"),
        labels={str(k): str(v) for k, v in (labels or {}).items()},
        holder=holder if alive else None,
    )


def _json(text: str | None) -> Mapping[str, Any]:
    try:
        data = json.loads(text or "{}")
    except ValueError:
        return {}  # a listing never fails on one broken row
    return data if isinstance(data, Mapping) else {}
