"""The collector's full passes held off while a service's runtime runs (issue 33).

A full pass (the oldest generation's) walks every object the collector tracks, and it holds
the event loop, every session's stream with it, while it walks. With 1,000 file-backed
sessions running at once it came once or twice a burst at 13-33 ms of CPU each, and landed
in the loop's longest turns (docs/benchmarks.md, "stall26"). CPython starts one when ten
middle passes have run since the last (the third threshold) and what reached the oldest
generation since is a quarter of what it held; once start-up is frozen (``gc.freeze``) the
frozen objects count in neither, so those passes come sooner, not later.

``hold`` raises the third threshold to ``HELD_THRESHOLD`` for as long as a holder holds it:
the young and middle passes run as before (each bounded by what was allocated since the last
one), and a full pass still comes, after ten times as many middle passes, so cycles that
reached the oldest generation are freed that much later (a service's sessions leave few:
0-3,150 objects a full pass found per 1,000 sessions). ``let_go`` by the last holder puts
back the thresholds it found, unless someone changed them meanwhile (the process's choice
wins). Asked for, never by default: the process's collector is its own
(``start_runtime(..., freeze_start_up=True)`` asks, as ``rho-agent serve`` does).
"""

from __future__ import annotations

import gc

__all__ = ["HELD_THRESHOLD", "hold", "holders", "let_go"]

HELD_THRESHOLD = 100
"""The third threshold while held: a full pass after 100 middle passes instead of 10."""

# each holder (a runtime) by id, while it holds: the holder itself is kept, so that its id
# is never another's (a runtime never closed is kept as its tasks keep it anyway)
_holders: dict[int, object] = {}
_found: list[tuple[tuple[int, ...], tuple[int, ...]]] = []  # (found, set) while any holds


def hold(holder: object) -> None:
    """Hold full passes off for ``holder`` until ``let_go(holder)``. Idempotent per
    holder; a third threshold already above ``HELD_THRESHOLD`` (or 0: automatic
    collection off) is left as it is."""
    if id(holder) in _holders:
        return
    _holders[id(holder)] = holder
    if len(_holders) > 1:
        return
    found = gc.get_threshold()
    held = (found[0], found[1], HELD_THRESHOLD) if 0 < found[2] < HELD_THRESHOLD else found
    gc.set_threshold(*held)
    _found[:] = [(found, held)]


def let_go(holder: object) -> None:
    """``holder`` no longer holds (idempotent; a holder that never held is no one). The last
    one puts back the thresholds the first found, unless they were changed meanwhile."""
    if _holders.pop(id(holder), None) is None or _holders or not _found:
        return
    found, held = _found.pop()
    if gc.get_threshold() == held:
        gc.set_threshold(*found)


def holders() -> int:
    """How many holders hold full passes off now."""
    return len(_holders)
