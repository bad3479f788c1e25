"""The events of one tool call that runs: ``ToolStarted`` / ``ToolEnded`` (its result message
follows). A human's part and a call that did not run are ``approval_events``'. Each has a
stable ``kind`` tag. ``rho_domain.events`` joins them to ``Event``: import them from there.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import attrs

from rho_domain.event_view import SeedEventView
from rho_domain.messages import ToolCall
from rho_domain.shown_numbers import plain_numbers, seconds
from rho_domain.value_methods import value_eq, value_hash, value_repr


@attrs.frozen(kw_only=True)
class ToolStarted(SeedEventView):
    """A tool call passed policy and approval and began to run.

    Attributes:
        at: Wall-clock time.
        call: The call as the model made it.
    """

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    kind: ClassVar[str] = "tool_start"
    at: float
    call: ToolCall


@attrs.frozen(kw_only=True)
class ToolEnded(SeedEventView):
    """A tool call finished, failed or was cancelled; its result message follows.

    Attributes:
        at: Wall-clock time.
        call_id: The call's id.
        tool_name: The tool's name.
        content: What the model reads (already truncated).
        is_error: True when the call failed (the model is told so).
        duration: Seconds on the monotonic clock.
        metadata: Details for UIs and traces (exit code, truncation, child session...).
    """

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    kind: ClassVar[str] = "tool_end"
    at: float
    call_id: str
    tool_name: str
    content: str
    is_error: bool
    duration: float = attrs.field(converter=seconds)  # shown_numbers: what a reader can show
    metadata: Mapping[str, Any] = attrs.field(factory=dict, converter=plain_numbers)
