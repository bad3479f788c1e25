"""Compaction's values: what triggers one (``CompactTrigger``), its plan (``CompactionPlan``)
and what it did (``CompactResult``).

A run that never compacts builds neither class (about 0.7 ms of CPU each):
``rho_domain.compaction`` names them lazily (PEP 562) and its planner imports them where it
plans. Import them from ``rho_domain.compaction``.
"""

from __future__ import annotations

from typing import Literal

import attrs

from rho_domain.messages import Message, UserMessage
from rho_domain.value_methods import value_eq, value_hash, value_repr

CompactTrigger = Literal["manual", "auto", "overflow"]


@attrs.frozen(kw_only=True)
class CompactResult:
    """What a compaction did; ``summary`` is empty when nothing was compacted, and ``note``
    then says why (nothing to compact, or a summary that would not have made the context
    smaller)."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    summary: str
    tokens_before: int
    tokens_after: int
    trigger: CompactTrigger
    note: str = ""

    @property
    def compacted(self) -> bool:
        """True when the history was replaced by a summary."""
        return bool(self.summary)


@attrs.frozen(kw_only=True)
class CompactionPlan:
    """``to_summarize`` goes to the model; ``recent_users`` (earlier user requests) and
    ``tail`` (the latest user message and its turn, whole) are kept after the summary."""

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    to_summarize: tuple[Message, ...]
    recent_users: tuple[UserMessage, ...]
    tail: tuple[Message, ...]

    @property
    def is_empty(self) -> bool:
        """True when there is nothing to summarise."""
        return not self.to_summarize
