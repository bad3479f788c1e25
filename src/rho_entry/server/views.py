"""The JSON a client reads about a session: from the store's listing line (``SessionInfo``)
and its trace (pending approvals)."""

from __future__ import annotations

import re
from typing import Any

import attrs

from rho_domain.ports.session_control import run_in_progress
from rho_domain.ports.store import SessionInfo
from rho_domain.state import State

_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


def valid_id(session_id: str) -> bool:
    """Whether a client's session id is one (no prefixes, no paths)."""
    return bool(_ID.fullmatch(session_id))  # match() with $ took "abc\n" too


def summary_of(info: SessionInfo, *, running_here: bool) -> dict[str, Any]:
    """One session as listed: id, status, liveness, usage, model, profile, times."""
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
        "placement": None if info.placement is None else attrs.asdict(info.placement),
        "stream": f"/api/sessions/{info.id}/stream",
    }


def pending_approvals(state: State) -> list[dict[str, Any]]:
    """Calls waiting for a decision: ``call_id``, ``tool``, ``arguments`` (raw JSON text),
    ``digest`` (``State.approval_digest``: what an answer sends back, so it holds for the
    call shown here only, run where shown), ``working_dir`` (the directory the call was asked
    about to run in, which the digest covers; empty in older traces), and for a ``delegate``
    call whose sub-agent waits, ``sub_agent`` (``session_id``, ``tool``, ``arguments``: the
    call the answer approves, which its digest covers; a surface shows it, else the
    answerer approves a call never shown)."""
    shown: list[dict[str, Any]] = []
    # asked and undecided (what a handle takes answers for), not the whole batch: a later
    # call of it, not asked yet (or needing no approval), was listed with a digest of no
    # place, and its answer refused as 'changed since it was shown'
    for c in state.awaiting_decision():
        item: dict[str, Any] = {
            "call_id": c.id,
            "tool": c.name,
            "arguments": c.arguments,
            "digest": state.approval_digest(c),
            "working_dir": state.asked_places.get(c.id, ""),
        }
        if (waiting := state.waiting_children.get(c.id)) is not None:
            child, call = waiting
            item["sub_agent"] = {
                "session_id": child,
                "tool": call.name,
                "arguments": call.arguments,
            }
        shown.append(item)
    return shown
