"""The approval policy's outcomes beside ``Allowed``: a call that waits for a human
(``RequiresApproval``) and one that must not run (``Denied``).

Apart from ``rho_domain.approval`` (which names them lazily, with the joined ``Decision``)
because a run whose calls are all allowed (a read-only profile's, ``-y``) never builds them:
``decide`` imports them where it returns one.
"""

from __future__ import annotations

import attrs

from rho_domain.value_methods import value_eq, value_hash, value_repr


@attrs.frozen
class RequiresApproval:
    """The call waits for a human; ``reason`` is shown to them."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    reason: str


@attrs.frozen
class Denied:
    """The call must not run; ``reason`` is reported to the model."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    reason: str
