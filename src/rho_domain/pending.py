"""PendingApproval: a call a run left waiting for a human (``RunResult.pending``).

Apart from ``rho_domain.run`` (which names it lazily) because only a run that ends
``awaiting_approval`` builds one: a run that goes as planned never does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from rho_domain.value_methods import value_eq, value_hash, value_repr

if TYPE_CHECKING:
    from rho_domain.messages import ToolCall


@attrs.frozen(kw_only=True)
class PendingApproval:
    """A call waiting for a human when the run ended ``awaiting_approval``; ``digest`` is the
    one an answer about it carries when given from another process
    (``State.approval_digest``; empty where none was worked out); ``working_dir`` the
    directory it was asked about to run in, which the digest covers (empty: not recorded)."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    call: ToolCall
    reason: str
    digest: str = ""
    working_dir: str = ""
