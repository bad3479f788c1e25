"""Session listings for ``--list``, ``/sessions`` and ``/resume``."""

from __future__ import annotations

import time
from collections.abc import Sequence

from rho_domain.ports.store import SessionInfo


def format_sessions(infos: Sequence[SessionInfo], *, now: float | None = None) -> list[str]:
    """One line per session, newest first: id, liveness, age, model, profile, first prompt."""
    current = time.time() if now is None else now  # display only
    lines = []
    for info in infos:
        prompt = " ".join(info.first_prompt.split())
        if len(prompt) > 60:
            prompt = prompt[:59] + "…"
        lines.append(
            f"{info.id:<14} {info.liveness:<10} {_age(current - info.updated_at):>5}  "
            f"{info.model[:18]:<18} {info.profile[:10]:<10} {prompt}"
        )
    return lines


def _age(seconds: float) -> str:
    seconds = max(seconds, 0)
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return f"{int(seconds)}s"
