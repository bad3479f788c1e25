"""RuntimeStats: what ``AgentRuntime.stats()`` reports to a service's health check."""

from __future__ import annotations

import attrs

from rho_adapters.loop_lag import LoopLagStats
from rho_domain.value_methods import value_eq, value_hash, value_repr


@attrs.frozen(kw_only=True)
class RuntimeStats:
    """``sessions_active``: the runtime's handles not done (running, queued or waiting for
    approval); ``loop_lag``: the longest stall of the runtime's event loop since it started
    (``rho_adapters.loop_lag``), the figure that shows a store write or a tool blocking the
    loop every session shares."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    sessions_active: int
    loop_lag: LoopLagStats
