"""``shown_numbers.shown``: a number a reader can show. A session's clock asks it at every
reading (each event's listeners are timed: about seventy a session, a thousand sessions at
once in a service, issue 33), so a plain ``float`` or ``int`` is decided without the two
``isinstance`` checks; the verdicts are the same for every kind."""

from __future__ import annotations

import sys
from collections.abc import Callable
from fractions import Fraction
from types import FrameType

from rho_domain.shown_numbers import BOUND, shown


def builtins_called(work: Callable[[], object]) -> int:
    """How many built-in functions ``work()`` called (a profile hook's ``c_call`` events; the
    hook's own removal, one, not counted)."""
    called = 0

    def hook(_frame: FrameType, event: str, _arg: object) -> None:
        nonlocal called
        if event == "c_call":
            called += 1

    sys.setprofile(hook)
    try:
        work()
    finally:
        sys.setprofile(None)
    return called - 1  # sys.setprofile(None)


class _Count(int):
    """An int of another class: the slow path's."""


def test_a_clock_reading_is_judged_without_isinstance() -> None:
    assert builtins_called(lambda: shown(12345.678)) == 0  # was 2: isinstance twice
    assert builtins_called(lambda: shown(7)) == 0


def test_every_kind_keeps_its_verdict() -> None:
    shown_ones = [0, 0.0, -1.5, 7, 10**299, -(10**299), _Count(3), 1e299]
    assert all(shown(value) for value in shown_ones)
    not_shown = [
        True,
        False,
        float("nan"),
        float("inf"),
        -float("inf"),
        BOUND,
        -BOUND,
        10**300 + 10**299,
        _Count(10**301),
        "1.0",
        None,
        [1],
        1j,
        Fraction(1, 3),
    ]
    assert not any(shown(value) for value in not_shown)
