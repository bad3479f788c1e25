"""Directive: an operator's instruction to a running session (``SignalSource.directives``).

Apart from the port (``rho_domain.ports.signals``, which names it lazily) because a store
builds one only when an operator sent one (``rho-agent monitor directive``).
"""

from __future__ import annotations

import attrs

from rho_domain.value_repr import value_repr


@attrs.frozen
class Directive:
    """An operator instruction. ``offset`` is its position in the session's directive log, so
    a directive already applied (recorded in the trace) is never applied twice."""

    __repr__ = value_repr

    offset: int
    text: str
