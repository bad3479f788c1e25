"""How a run ended: ``RunStatus``, a leaf module so that events and results can both use it."""

from __future__ import annotations

from enum import StrEnum

__all__ = ["RunStatus"]


class RunStatus(StrEnum):
    """How a run ended."""

    COMPLETED = "completed"
    CANCELLED = "cancelled"
    MAX_TURNS = "max_turns"
    BUDGET_EXCEEDED = "budget_exceeded"
    AWAITING_APPROVAL = "awaiting_approval"
    ERROR = "error"
    STUCK = "stuck"  # the model repeated a call after being told (``rho_domain.loop.stuck``)
