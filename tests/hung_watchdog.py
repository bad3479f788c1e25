"""The watchdog every test phase (setup, call, teardown) runs under, loaded by
``tests/conftest.py`` (``pytest_plugins``): past ``$RHO_TEST_HUNG_AFTER`` seconds a phase fails
with every thread's stack on stderr instead of holding its worker for ever."""

from __future__ import annotations

import contextlib
import faulthandler
import os
import signal
import threading
from collections.abc import Iterator

import pytest

# The longest one phase of a test (setup, call or teardown) may take before it counts as hung:
# the slowest take 40-80 s at a load of 12. A read with no timeout that never returns (a
# subprocess's pipe, a socket) would otherwise hold its xdist worker, and CI, for ever.
HUNG_AFTER = float(os.environ.get("RHO_TEST_HUNG_AFTER", "600"))


class HungTest(Exception):
    """A test phase ran past ``HUNG_AFTER`` seconds (every thread's stack is on stderr)."""


def _hung(signum: int, frame: object) -> None:
    faulthandler.dump_traceback(all_threads=True)
    raise HungTest(f"this test phase ran past {HUNG_AFTER:g} s ($RHO_TEST_HUNG_AFTER): hung")


@contextlib.contextmanager
def _watchdog() -> Iterator[None]:
    """SIGALRM after ``HUNG_AFTER`` seconds raises ``HungTest`` in the main thread, where a
    test runs: a blocking call is interrupted (its syscall returns EINTR) and the test fails
    instead of waiting. Off where there is no SIGALRM, or off the main thread."""
    if not hasattr(signal, "SIGALRM") or threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGALRM, _hung)
    signal.setitimer(signal.ITIMER_REAL, HUNG_AFTER)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    with _watchdog():
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    with _watchdog():
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    with _watchdog():
        return (yield)
