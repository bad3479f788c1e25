"""The collector during collection (``tests/conftest.py``, ``pytest_collection``): no full
pass while the suite collects, one afterwards, what collection built frozen, and the usual
thresholds back for the tests, also when collection fails."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import pytest


def _hook(config: pytest.Config) -> Any:
    """The root conftest's ``pytest_collection``, as pytest loaded it."""
    path = str(Path(__file__).with_name("conftest.py"))
    conftest = next(
        p for p in config.pluginmanager.get_plugins() if getattr(p, "__file__", "") == path
    )
    return conftest.pytest_collection


class _Cycle:
    me: _Cycle


@pytest.fixture
def thresholds() -> Iterator[tuple[int, int, int]]:
    """The thresholds the tests run with, and the collector on or off, as they were after
    the test, whatever it did."""
    thresholds = gc.get_threshold()
    assert thresholds[2] != 1 << 30, "the tests run with collection's thresholds"
    enabled = gc.isenabled()
    try:
        yield thresholds
    finally:
        gc.set_threshold(*thresholds)
        if enabled:
            gc.enable()


def test_no_full_pass_while_collecting_then_one_and_a_freeze(
    pytestconfig: pytest.Config, thresholds: tuple[int, int, int]
) -> None:
    frozen = gc.get_freeze_count()
    wrapper: Generator[None, str, str] = _hook(pytestconfig)(None)
    next(wrapper)  # collection is under way
    assert gc.get_threshold() == (*thresholds[:2], 1 << 30)
    left = _Cycle()  # garbage collection left in the oldest generation: a full pass frees it
    left.me = left
    gc.collect(1)
    gc.collect(1)  # survived the young generations: now in the oldest
    dead = weakref.ref(left)
    del left
    with pytest.raises(StopIteration) as stop:
        wrapper.send("the collection's result")
    assert stop.value.value == "the collection's result"  # passed on as pytest returned it
    assert gc.get_threshold() == thresholds
    assert dead() is None  # freed, not frozen
    assert gc.get_freeze_count() > frozen  # what was built meanwhile is frozen too


def test_a_failed_collection_leaves_the_thresholds_and_a_stopped_collector_as_they_were(
    pytestconfig: pytest.Config, thresholds: tuple[int, int, int]
) -> None:
    gc.disable()  # as the CLI's start-up does (rho_entry.cli.collector)
    frozen = gc.get_freeze_count()
    wrapper: Generator[None, str, str] = _hook(pytestconfig)(None)
    next(wrapper)
    with pytest.raises(RuntimeError, match="a module failed to import"):
        wrapper.throw(RuntimeError("a module failed to import"))
    assert gc.get_threshold() == thresholds
    assert not gc.isenabled()  # a collector someone stopped is left alone: no pass, no freeze
    # No freeze (it would add every young object); a frozen object freed by its last
    # reference meanwhile takes one off (a full run read 853,786 against 853,787).
    assert gc.get_freeze_count() <= frozen
