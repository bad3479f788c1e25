"""Listing rows of the PostgreSQL store: one query, one SessionInfo per row.

Liveness uses the server's clock only: a holder is alive while ``beat`` is younger than the
backend's ``stale_after`` (``now()`` on the server), so hosts' clocks never disagree about it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from rho_adapters.store.meta import info_from_meta
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
    return info_from_meta(
        session_id,
        meta,
        status=status,
        liveness=judge_liveness(status=status, held=bool(alive), paused=bool(paused)),
        labels=labels,
        holder=holder if alive else None,
    )


def _json(text: str | None) -> Mapping[str, Any]:
    try:
        data = json.loads(text or "{}")
    except (ValueError, RecursionError):
        return {}  # a listing never fails on one broken row
    return data if isinstance(data, Mapping) else {}
