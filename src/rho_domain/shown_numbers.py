"""The numbers a trace line carries beyond its time, held to what a reader can show.

A trace line holds what its writer wrote: ``NaN``, ``Infinity`` and ``1e999`` read as floats
(Python's json takes them), as does ``"1e999"`` once structured as a float. Kept, such a
number went into every total after it and out as ``NaN`` or ``Infinity`` in ``stats --json``
and both exports, which no JSON parser reads, and as ``nan`` in ``stats``; a child's call
count of ``Infinity`` failed every fold of the session's state (``int(inf)``). The events'
converters here keep instead what rho-agent writes when it knows nothing: no cost (None), no
measured seconds (None, or 0 where the field is required), no count (0, for a negative one
too). A line's time (``at``) is refused by the codec instead (``rho_adapters.codec``): every
reader orders and shows it.

Compared, never converted first: ``float()`` of an int past a float's range overflows.
"""

from __future__ import annotations

import json
from typing import Any

BOUND = 1e300
"""A number at or past this (either sign), or NaN, is none a reader can show."""

A_TIME = (-62135596800.0, 253402300799.0)
"""The times an event's ``at`` may hold: what a datetime can show (years 1 to 9999). A line
another writer left with ``NaN``, ``Infinity``, ``1e999`` or ``1e300`` there decoded, and each
reader that showed the time failed on it (``monitor watch`` and the ATIF export with a
traceback, the server's listing of every session): the codec refuses such a line, and the
session's clock (``loop.guarded_clock``) never gives such a time to an event."""

_COUNTS = 10**300  # below BOUND (1e300 is a little over 10**300): an int compares with an int


def shown(value: object) -> bool:
    """Whether ``value`` is a number within ``BOUND`` (not a bool, NaN or an infinity)."""
    kind = value.__class__
    if kind is float or kind is int:  # every clock reading (a session's ~70): no isinstance
        return -BOUND < value < BOUND  # type: ignore[operator]
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and -BOUND < value < BOUND  # NaN fails both
    )


def a_time(value: object) -> bool:
    """Whether ``value`` is a time a reader can show (``A_TIME``; not NaN, not a bool)."""
    return shown(value) and A_TIME[0] <= value <= A_TIME[1]  # type: ignore[operator]


def cost_or_none(value: float | None) -> float | None:
    """``Usage.cost_usd``'s converter: a cost, or None (no price known)."""
    return float(value) if value is not None and shown(value) else None


def seconds_or_none(value: float | None) -> float | None:
    """An optional measured time's converter (``first_output_after``, ``queue_wait``)."""
    return float(value) if value is not None and shown(value) else None


def count(value: int) -> int:
    """A count's converter (tokens, call numbers, attempts, offsets): 0 for a negative one or
    one past ``BOUND``. A count of 4,301 digits or more fails ``str()`` and ``json.dumps``
    (Python's limit on converting an int to text): ``stats``, ``stats --json`` and the ATIF
    export failed with a traceback on a trace line's ``input_tokens`` of 10**4300."""
    if type(value) is int and 0 <= value < _COUNTS:  # what rho-agent writes: no call below
        return value
    return int(value) if shown(value) and value >= 0 else 0


def seconds(value: float) -> float:
    """A required measured time's converter (``duration``): 0 for one no reader can show."""
    return float(value) if shown(value) else 0.0


def _unshowable_float_in(value: object) -> bool:
    stack = [value]  # a walk without recursion: a trace line may nest as deep as json reads
    while stack:
        item = stack.pop()
        if isinstance(item, float) and not shown(item):
            return True
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return False


def plain_numbers(value: Any) -> Any:
    """A free-form value's converter (a tool's ``metadata``, a run's ``output``): every float
    within it no reader can show becomes None (``NaN``, ``Infinity``: the rho export wrote
    them back, which no JSON parser reads). A value with none is returned as it is."""
    if not _unshowable_float_in(value):
        return value
    try:  # json writes NaN and the infinities as constants, read back here as None
        return json.loads(json.dumps(value), parse_constant=lambda _constant: None)
    except (TypeError, ValueError, RecursionError):  # a key json cannot write; nested too deep
        return {} if isinstance(value, dict) else None
