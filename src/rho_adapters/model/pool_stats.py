"""The model clients' counters: one request gate's (``GateStats``) and one pooled client's
(``EndpointStats``), built when someone asks (``InFlightGate.stats``, ``ClientPool.stats``):
a run that never asks builds neither class."""

from __future__ import annotations

import attrs

from rho_domain.value_methods import value_eq, value_hash, value_repr


@attrs.frozen(kw_only=True)
class GateStats:
    """Counters of one gate since it was made.

    ``requests`` slots granted; ``waited`` of them after queueing; ``wait_seconds`` the
    summed queueing time and ``max_wait_seconds`` the longest; ``in_flight`` and ``queued``
    right now.
    """

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    limit: int
    in_flight: int
    queued: int
    requests: int
    waited: int
    wait_seconds: float
    max_wait_seconds: float


@attrs.frozen(kw_only=True)
class EndpointStats:
    """One pooled client: its base URL, leases now, and its gate's counters."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    base_url: str
    leases: int
    gate: GateStats
