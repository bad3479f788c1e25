"""Sessions as JSON objects: what ``monitor ps --json`` and ``rho-agent --list --json`` print,
and the line both tables add under a session that runs elsewhere (``placement_line``).

A leaf (the standard library and the store's port types only), so the CLI and the monitor
share it without importing each other.
"""

from __future__ import annotations

from typing import Any

from rho_domain.placement import Placement
from rho_domain.ports.session_control import held_by_live_process
from rho_domain.ports.store import SessionInfo


def info_dict(info: SessionInfo, now: float) -> dict[str, Any]:
    """One session as ``monitor ps --json`` and ``rho-agent --list --json`` print it."""
    return {
        "id": info.id,
        "status": info.status,
        "liveness": info.liveness,
        "model": info.model,
        "profile": info.profile,
        "created_at": info.created_at,
        "updated_at": info.updated_at,
        "elapsed_seconds": round(active_seconds(info, now), 3),
        "first_prompt": info.first_prompt,
        "input_tokens": info.usage.input_tokens,
        "output_tokens": info.usage.output_tokens,
        "cost_usd": info.usage.cost_usd,
        "working_dir": info.working_dir,
        "parent_id": info.parent_id,
        "placement": _plain(info.placement),
    }


def placement_line(info: SessionInfo) -> str | None:
    """The line a table shows under ``info`` when its work runs off this machine (``└ runs
    in daytona:<sandbox id>``: what an operator finds or deletes), else None. Not escaped:
    the caller escapes it with the rest of the row (the id comes from a stored file)."""
    where = info.placement
    if where is None or not where.remote:
        return None
    shown = str(where) if where.id is not None else f"{where.backend} (no sandbox yet)"
    return f"{'':<14} └ runs in {shown}"


def _plain(where: Placement | None) -> dict[str, str | None] | None:
    return None if where is None else {"backend": where.backend, "id": where.id}


def active_seconds(info: SessionInfo, now: float) -> float:
    """Seconds from creation to ``now`` while live, else to the last update."""
    end = now if held_by_live_process(info.liveness) else info.updated_at
    return max(0.0, end - info.created_at)
