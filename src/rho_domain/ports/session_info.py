"""SessionInfo: one line of a session listing (``SessionStore.list``).

Apart from the store's port (``rho_domain.ports.store`` names it lazily) so that a run, which
creates, appends to and releases its session but never lists, does not build the class.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from rho_domain.messages import Usage
from rho_domain.placement import Placement
from rho_domain.value_methods import value_eq, value_hash, value_repr


@attrs.frozen(kw_only=True)
class SessionInfo:
    """One line of a session listing. ``liveness`` is the store's judgement: running, paused,
    stale (its process is gone), or the final status (completed, cancelled, error, ...)."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    id: str
    status: str
    liveness: str
    created_at: float
    updated_at: float
    model: str
    profile: str
    first_prompt: str
    usage: Usage = Usage()
    working_dir: str | None = None
    parent_id: str | None = None
    labels: Mapping[str, str] = attrs.field(factory=dict)
    holder: str | None = None
    """Who holds the session open, as the store names it (``pid 12 on host-a``), or None."""
    placement: Placement | None = None
    """Where its work runs, as its last run recorded it (``rho_domain.placement``): the
    Daytona sandbox to find or delete; None before a run, or from an older release."""
