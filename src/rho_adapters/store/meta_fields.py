"""meta.json as read: each field this version knows, of the type it writes, or left out.

meta.json is a cache of the trace (``meta.py``), and one a newer or older rho-agent, a hand
edit or another tool may have written: ``created_at`` as an ISO date, ``runs`` as a string,
``usage`` as a number. Read as they came, such values crashed every reader (``float('2026-...')``
ended ``--list``, ``monitor ps``, ``export`` and ``--resume`` with a traceback, for every
session in the store, not only that one). A field of another type is left out, so each reader
falls back to what it does for a missing one (the trace's first time, zero, "unknown"), and
logged once per file read; opening the session writes meta.json again from its trace.
Fields this version does not know are kept as they are (nothing reads them). The PostgreSQL
store's summary (its ``meta`` column) is read the same way.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from rho_domain.placement import Placement

log = logging.getLogger("rho_adapters.store")

_NUMBERS = ("created_at", "updated_at", "heartbeat")
_WHOLE_NUMBERS = ("runs", "pid")
_TEXTS = ("id", "status", "model", "profile", "first_prompt", "host", "working_dir", "parent_id")
_USAGE_COUNTS = ("input_tokens", "output_tokens", "cached_tokens", "reasoning_tokens")


def is_number(value: object) -> bool:
    """Whether ``value`` is a number a time or a count can be: not a bool, NaN, an infinity
    or past 1e300. Compared, not converted: an int past a float's range (which float() and
    math.isfinite refuse with OverflowError) fails it too."""
    return isinstance(value, int | float) and not isinstance(value, bool) and abs(value) < 1e300


AHEAD_SECONDS = 86_400.0
"""How far ahead of the reader's clock a session's time may be and still date it: a day of
clock skew between hosts. A time further ahead is a hand edit no clock has reached."""


def order_time(value: object, now: float) -> float:
    """The time a session is ordered by (``latest``, a listing's newest first): ``value``, or
    0 (none) when it is no time (``is_number``) or ahead of ``now`` by more than
    ``AHEAD_SECONDS``. A row or meta.json dated 2096 was ``latest`` for seventy years (every
    ``--resume latest`` continued the conversation its writer chose) and first in every
    listing, as NaN and Infinity were before they counted as no time."""
    if not is_number(value) or value > now + AHEAD_SECONDS:  # type: ignore[operator]
        return 0.0
    return float(value)  # type: ignore[arg-type]


PID_MAX = 2**31 - 1
"""The largest process id: a ``pid_t`` is a C int. A larger ``pid`` (2**31, written by hand
or by another tool) made ``os.kill(pid, 0)`` raise ``OverflowError`` in ``liveness``: one such
meta.json on this host ended ``--list``, ``monitor ps``, ``export`` and the server's listing
with a traceback, for every session in the store."""


def _fits(key: str, value: object) -> bool:
    """True when ``value`` is of the type this version writes under ``key`` (None: not set)."""
    if value is None:
        return True
    if key in _NUMBERS:
        return is_number(value)
    if key in _WHOLE_NUMBERS:
        whole = isinstance(value, int) and not isinstance(value, bool) and value >= 0
        return whole and (key != "pid" or value <= PID_MAX)  # type: ignore[operator]
    if key == "working_dir":  # resolved to place the session: a NUL raised ValueError
        return isinstance(value, str) and "\0" not in value
    if key in _TEXTS:
        return isinstance(value, str)
    if key == "labels":
        return isinstance(value, Mapping)
    if key == "placement":
        return Placement.from_plain(value) is not None
    if key == "usage":
        return isinstance(value, Mapping) and all(
            isinstance(value.get(count, 0), int) and not isinstance(value.get(count, 0), bool)
            for count in _USAGE_COUNTS
        )
    return True  # a field of another version: kept, and read by nobody


def typed_meta(data: dict[str, Any], source: object) -> dict[str, Any]:
    """``data`` without the known fields whose value is of another type, each named in one
    warning on the ``rho_adapters.store`` logger (``source``: the file)."""
    wrong = [key for key, value in data.items() if not _fits(key, value)]
    if not wrong:
        return data
    log.warning(
        "%s: ignored %s, of another type than this rho-agent writes (another version or a "
        "hand edit); the session's events are unchanged, and this summary is written again "
        "from them when the session is next opened",
        source,
        ", ".join(f"{key} ({type(data[key]).__name__})" for key in wrong),
    )
    return {key: value for key, value in data.items() if key not in wrong}
