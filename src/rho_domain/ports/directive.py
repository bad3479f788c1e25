"""Directive: an operator's instruction to a running session (``SignalSource.directives``).

Apart from the port (``rho_domain.ports.signals``, which names it lazily) because a store
builds one only when an operator sent one (``rho-agent monitor directive``).
"""

from __future__ import annotations

import attrs

from rho_domain.value_methods import value_eq, value_hash, value_repr


@attrs.frozen
class Directive:
    """An operator instruction. ``offset`` is its position in the session's directive log, so
    a directive already applied (recorded in the trace) is never applied twice."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    offset: int
    text: str
