"""A continuum run's state: what a resumed run continues from.

Stored (by the entry, atomically) as JSON with ``format`` ``STATE_FORMAT``; ``to_dict`` and
``from_dict`` are the one reading of that format, and a file of another format is refused
with its path named by the caller.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

import attrs

from rho_domain.value_methods import value_eq, value_hash, value_repr

STATE_FORMAT = 1
Status = Literal["running", "completed", "paused", "error"]
_STATUSES = ("running", "completed", "paused", "error")
_RUN_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
"""A run id as the harness makes them (12 hex digits) and a file name, label and terminal
line can hold: a hand-edited ``"../x"`` or escape sequence is refused when read back."""


@attrs.frozen(kw_only=True)
class ContinuumState:
    """Attributes:
    run_id: The run's id (the state file's name, the sessions' ``continuum`` label).
    config: The run's settings as given (flags), for the record; a resume uses its own.
    session_count: Sessions started so far.
    input_tokens / output_tokens / cost_usd: Totals over every session.
    status: ``running``, ``completed``, ``paused`` (sessions used up, or input needed
        without a terminal) or ``error``.
    last_handoff: The number of the last handoff written (0: none).
    reason: Why the run stopped, when it did.
    """

    __repr__ = value_repr
    __eq__ = value_eq
    __hash__ = value_hash

    run_id: str
    config: Mapping[str, Any] = attrs.field(factory=dict)
    session_count: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    status: Status = "running"
    last_handoff: int = 0
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The stored form."""
        return {"format": STATE_FORMAT, **attrs.asdict(self, recurse=False)} | {
            "config": dict(self.config)
        }

    @classmethod
    def from_dict(cls, data: object) -> ContinuumState:
        """The state stored as ``data``; raises ValueError saying what is wrong."""
        if not isinstance(data, dict) or data.get("format") != STATE_FORMAT:
            raise ValueError(f"not a continuum state of format {STATE_FORMAT}")
        fields = {f.name: data[f.name] for f in attrs.fields(cls) if f.name in data}
        run_id = fields.get("run_id")
        if not isinstance(run_id, str) or not _RUN_ID.fullmatch(run_id):
            raise ValueError(f"run_id must be 1-64 letters, digits, - or _, not {run_id!r}")
        if fields.get("status") not in _STATUSES:
            raise ValueError("status must be one of " + ", ".join(_STATUSES))
        for name in ("session_count", "input_tokens", "output_tokens", "last_handoff"):
            value = fields.get(name, 0)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"{name} must be a whole number of 0 or more, not {value!r}")
        if not isinstance(fields.get("config", {}), dict):
            raise ValueError("config must be a JSON object")
        cost = fields.get("cost_usd", 0.0)
        if not isinstance(cost, int | float) or isinstance(cost, bool):
            raise ValueError(f"cost_usd must be a number, not {cost!r}")
        if not isinstance(fields.get("reason", ""), str):
            raise ValueError("reason must be text")
        return cls(**fields)
